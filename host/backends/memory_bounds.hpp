// Sample times per segment that each backend's memory allows (the segment driver's
// memory_rows, engine.hpp): the one copy of the bounds, which the engines use for
// their own runs and a sharded run (host/mpi) for its largest shard, so that every rank cuts
// the same segments within its engine's bound (issue 42: the sharded copy had drifted and did
// not count [parameters] groups). C++17-clean: nvcc compiles it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/accumulator.hpp>
#include <chens/ensemble/quantiles.hpp>

namespace chens {

// CPU: the block accumulators and the threads' quantile histograms of one segment, for the
// ensemble and each [parameters] group (sets = 1 + groups), stay under cpu_segment_bytes.
inline constexpr std::int64_t cpu_segment_bytes = std::int64_t(64) << 20;
inline std::int64_t cpu_memory_rows(std::int64_t blocks, std::int64_t threads, std::int64_t sets) {
  const std::int64_t per_sample =
      sets * (blocks * static_cast<std::int64_t>(sizeof(Accumulator) * metric_count) +
              threads * metric_count * LogBins::count * static_cast<std::int64_t>(sizeof(std::uint32_t)));
  return cpu_segment_bytes / std::max<std::int64_t>(1, per_sample);
}

// GPU: one slot's per-instance metrics (and lost flags) under segment_metric_bytes, the
// recorded instances' snapshots (snapshot_row bytes a sample) under segment_snapshot_bytes,
// and within a grid's y extent (65535).
inline constexpr std::size_t segment_metric_bytes = std::size_t(512) << 20;
inline constexpr std::size_t segment_snapshot_bytes = std::size_t(256) << 20;
inline std::int64_t cuda_memory_rows(std::uint64_t instances, std::size_t snapshot_row) {
  const std::size_t per_row = static_cast<std::size_t>(instances) * (metric_count * sizeof(double) + 1);
  return std::min<std::int64_t>(
      {65535, static_cast<std::int64_t>(segment_metric_bytes / std::max<std::size_t>(1, per_row)),
       static_cast<std::int64_t>(segment_snapshot_bytes / std::max<std::size_t>(1, snapshot_row))});
}

// A sharded run's rows: the least of both backends' bounds for its largest shard (blocks of
// cpu_block_size instances dealt out in whole blocks) with the most threads any rank has.
inline std::int64_t shard_memory_rows(std::uint64_t blocks, int ranks, std::int64_t threads, std::int64_t sets,
                                      std::uint64_t block_size, std::size_t snapshot_row) {
  const std::uint64_t r = static_cast<std::uint64_t>(std::max(1, ranks));
  const std::uint64_t largest_blocks = (blocks + r - 1) / r;
  return std::min(cpu_memory_rows(static_cast<std::int64_t>(largest_blocks), threads, sets),
                  cuda_memory_rows(largest_blocks * block_size, snapshot_row));
}

}  // namespace chens
