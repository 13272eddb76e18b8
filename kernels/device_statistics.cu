// Statistics of a segment on the device (device_statistics.cuh): block leaves, the block tree,
// quantile histograms and the search for the first lost instances. Not templates: compiled
// once, whatever models the build has.
#include "device_statistics.cuh"

#include <thrust/copy.h>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstring>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/quantiles.hpp>

#include "backends/block_tree.hpp"
#include "backends/ensemble_spec.hpp"
#include "device_buffer.cuh"

namespace chens::cuda {
namespace {

// One thread per (sample row, block, metric): the block's accumulator, in instance order.
__global__ void block_leaves(const double* metrics, const unsigned char* valid, std::uint64_t n, std::int64_t rows,
                             std::int64_t blocks, std::uint64_t block_size, Accumulator* acc) {
  const std::uint64_t t = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint64_t total = static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(blocks) * metric_count;
  if (t >= total) return;
  const int m = static_cast<int>(t % metric_count);
  const std::uint64_t b = (t / metric_count) % static_cast<std::uint64_t>(blocks);
  const std::uint64_t row = t / metric_count / static_cast<std::uint64_t>(blocks);
  Accumulator a;
  const std::uint64_t lo = b * block_size, hi = lo + block_size < n ? lo + block_size : n;
  for (std::uint64_t i = lo; i < hi; ++i)
    if (valid[row * n + i]) a.add(metrics[(row * metric_count + m) * n + i]);
  acc[t] = a;  // layout ((row * blocks + b) * metric_count + m), as the CPU backend's
}

// One pass of the block tree: block (g, row * metric_count + m) merges the `span` = 2 *
// tree_threads consecutive nodes [g span, (g + 1) span) of its row and metric (nodes past
// `count` are the empty accumulator) pairwise in shared memory, left then right, into one
// node of the next level. Groups are aligned subtrees of block_tree.hpp's tree, so passes
// until one node remains evaluate its root with the host's operations in the host's order.
constexpr int tree_threads = 256;
constexpr std::uint64_t tree_span = 2 * tree_threads;

__global__ void tree_pass(const Accumulator* in, std::uint64_t count, std::uint64_t groups, Accumulator* out) {
  __shared__ Accumulator s[tree_threads];
  const std::uint64_t g = blockIdx.x;
  const std::uint64_t rm = blockIdx.y;
  const int m = static_cast<int>(rm % metric_count);
  const std::uint64_t row = rm / metric_count;
  const int t = static_cast<int>(threadIdx.x);
  auto node = [&](std::uint64_t j) {
    Accumulator a;
    if (j < count) a = in[(row * count + j) * metric_count + static_cast<std::uint64_t>(m)];
    return a;
  };
  Accumulator a = node(g * tree_span + 2 * static_cast<std::uint64_t>(t));
  a.merge(node(g * tree_span + 2 * static_cast<std::uint64_t>(t) + 1));
  s[t] = a;
  __syncthreads();
  for (int w = tree_threads / 2; w >= 1; w /= 2) {
    Accumulator b;
    if (t < w) {
      b = s[2 * t];
      b.merge(s[2 * t + 1]);
    }
    __syncthreads();
    if (t < w) s[t] = b;
    __syncthreads();
  }
  if (t == 0) out[(row * groups + g) * metric_count + static_cast<std::uint64_t>(m)] = s[0];
}

// Quantile histograms of one segment: block (x, row) bins a grid-strided share of the
// instances of sample row `row` in shared memory, then adds its non-zero counts to the
// global histograms.
constexpr unsigned histogram_threads = 256;
constexpr std::size_t histogram_shared_bytes = sizeof(std::uint32_t) * metric_count * LogBins::count;

__global__ void histogram_rows(const double* metrics, const unsigned char* valid, std::uint64_t n, std::uint32_t* hist) {
  extern __shared__ std::uint32_t h[];
  constexpr int cells = metric_count * LogBins::count;
  const std::uint64_t row = blockIdx.y;
  for (int c = static_cast<int>(threadIdx.x); c < cells; c += static_cast<int>(blockDim.x)) h[c] = 0;
  __syncthreads();
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if (!valid[row * n + i]) continue;
    for (int m = 0; m < metric_count; ++m)
      atomicAdd(&h[m * LogBins::count + histogram_bin(metric_signed(m), metrics[(row * metric_count + m) * n + i])], 1u);
  }
  __syncthreads();
  std::uint32_t* out = hist + row * cells;
  for (int c = static_cast<int>(threadIdx.x); c < cells; c += static_cast<int>(blockDim.x))
    if (h[c]) atomicAdd(&out[c], h[c]);
}

struct NonzeroIntAt {
  const std::uint64_t* words;
  std::size_t offset;
  __device__ bool operator()(std::uint64_t i) const {
    int v = 0;
    std::memcpy(&v, reinterpret_cast<const unsigned char*>(&words[i]) + offset, sizeof v);
    return v != 0;
  }
};

}  // namespace

std::size_t tree_scratch_count(std::int64_t rows, std::int64_t blocks) {
  const std::uint64_t first = (static_cast<std::uint64_t>(blocks) + tree_span - 1) / tree_span;
  return 2 * static_cast<std::size_t>(rows) * static_cast<std::size_t>(first) * metric_count;
}

void launch_block_leaves(const double* metrics, const unsigned char* valid, std::uint64_t n, std::int64_t rows,
                         std::int64_t blocks, Accumulator* leaves, cudaStream_t stream) {
  const std::uint64_t work = static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(blocks) * metric_count;
  block_leaves<<<static_cast<unsigned>((work + 127) / 128), 128, 0, stream>>>(metrics, valid, n, rows, blocks,
                                                                              cpu_block_size, leaves);
  check(cudaGetLastError(), "block_leaves launch");
}

void launch_block_tree(const Accumulator* leaves, std::int64_t rows, std::int64_t blocks, Accumulator* scratch,
                       Accumulator* roots, cudaStream_t stream) {
  const std::uint64_t first = (static_cast<std::uint64_t>(blocks) + tree_span - 1) / tree_span;
  Accumulator* half[2] = {scratch, scratch + static_cast<std::size_t>(rows) * first * metric_count};
  const Accumulator* in = leaves;
  std::uint64_t count = static_cast<std::uint64_t>(blocks);
  std::uint64_t width = tree_width(count);  // the tree's leaves, empty ones included
  for (int which = 0;; which ^= 1) {
    const std::uint64_t groups = (count + tree_span - 1) / tree_span;
    const bool last = width <= tree_span;
    Accumulator* out = last ? roots : half[which];
    tree_pass<<<dim3(static_cast<unsigned>(groups), static_cast<unsigned>(rows * metric_count)), tree_threads, 0, stream>>>(
        in, count, groups, out);
    check(cudaGetLastError(), "tree_pass launch");
    if (last) break;
    in = out;
    count = groups;
    width /= tree_span;
  }
}

void launch_histograms(const double* metrics, const unsigned char* valid, std::uint64_t n, std::int64_t rows,
                       std::uint32_t* hist, cudaStream_t stream) {
  constexpr std::size_t hist_row = static_cast<std::size_t>(metric_count) * LogBins::count;
  check(cudaMemsetAsync(hist, 0, static_cast<std::size_t>(rows) * hist_row * sizeof(std::uint32_t), stream),
        "cudaMemsetAsync");
  // Each thread bins up to 16 instances of a row.
  const unsigned grid_x = static_cast<unsigned>(std::max<std::uint64_t>(
      1, std::min<std::uint64_t>(65535, (n + 16 * histogram_threads - 1) / (16 * histogram_threads))));
  histogram_rows<<<dim3(grid_x, static_cast<unsigned>(rows)), histogram_threads, histogram_shared_bytes, stream>>>(
      metrics, valid, n, hist);
  check(cudaGetLastError(), "histogram_rows launch");
}

std::vector<std::uint64_t> first_nonzero(const std::uint64_t* words, std::uint64_t n, std::size_t offset, std::size_t max,
                                         cudaStream_t stream) {
  // Chunks of instances in index order, each compacted by thrust::copy_if, until `max` are
  // found: the first chunk usually holds them all.
  constexpr std::uint64_t chunk = std::uint64_t(1) << 20;
  DeviceArray<std::uint64_t> hits(static_cast<std::size_t>(std::min<std::uint64_t>(n, chunk)));
  const thrust::device_ptr<std::uint64_t> first = thrust::device_pointer_cast(hits.data());
  std::vector<std::uint64_t> found;
  for (std::uint64_t lo = 0; lo < n && found.size() < max; lo += chunk) {
    const std::uint64_t hi = std::min(n, lo + chunk);
    const auto end = thrust::copy_if(thrust::cuda::par.on(stream), thrust::counting_iterator<std::uint64_t>(lo),
                                     thrust::counting_iterator<std::uint64_t>(hi), first, NonzeroIntAt{words, offset});
    const std::size_t got = std::min<std::size_t>(static_cast<std::size_t>(end - first), max - found.size());
    std::vector<std::uint64_t> part(got);
    if (got > 0)
      check(cudaMemcpyAsync(part.data(), hits.data(), got * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "first_nonzero");
    found.insert(found.end(), part.begin(), part.end());
  }
  return found;
}

}  // namespace chens::cuda
