// The ensemble statistics of a segment, reduced on the device (device_statistics.cu, compiled
// once): per sample row, the accumulators of the fixed blocks of cpu_block_size instances
// (each block in instance order, as the CPU backend accumulates it), merged along the block
// tree of backends/block_tree.hpp into one root per metric, and the quantile histograms
// (integer counts, exact in any order). Accumulator::add and merge fuse no product into an
// addition (accumulator.hpp), so the device tree's roots are the host tree's bit for bit
// (tests/gpu/test_gpu_paths.cpp): only kilobytes per sample cross PCIe.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include <chens/ensemble/accumulator.hpp>

namespace chens::cuda {

// Accumulators of scratch space device_tree needs for `rows` rows of `blocks` leaves.
std::size_t tree_scratch_count(std::int64_t rows, std::int64_t blocks);

// Leaves ((row * blocks + b) * metric_count + m) of the segment's metrics
// (metrics[(row * metric_count + m) * n + i], valid[row * n + i]).
void launch_block_leaves(const double* metrics, const unsigned char* valid, std::uint64_t n, std::int64_t rows,
                         std::int64_t blocks, Accumulator* leaves, cudaStream_t stream);

// Roots (row * metric_count + m) of the block tree over each row's `blocks` leaves; scratch
// holds tree_scratch_count(rows, blocks) accumulators.
void launch_block_tree(const Accumulator* leaves, std::int64_t rows, std::int64_t blocks, Accumulator* scratch,
                       Accumulator* roots, cudaStream_t stream);

// Quantile histograms hist[(row * metric_count + m) * LogBins::count + bin], cleared first.
void launch_histograms(const double* metrics, const unsigned char* valid, std::uint64_t n, std::int64_t rows,
                       std::uint32_t* hist, cudaStream_t stream);

// The indices i < n (ascending, at most `max`) whose int at byte `offset` of the 8-byte word
// words[i] is not 0: the first lost instances, found on the device.
std::vector<std::uint64_t> first_nonzero(const std::uint64_t* words, std::uint64_t n, std::size_t offset, std::size_t max,
                                         cudaStream_t stream);

}  // namespace chens::cuda
