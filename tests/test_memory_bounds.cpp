// The segments a sharded run cuts (host/mpi/mpi_runtime.cpp: shard_memory_rows, the same on
// every rank) lie within the bound each rank's own engine would set for its shard
// (backends/memory_bounds.hpp: cpu_memory_rows, cuda_memory_rows), for every rank count,
// thread count, [parameters] group count and recorded-instance count. The sharded run once
// kept a copy of the bounds that had drifted: it did not count the groups' statistics, so
// 100,000 instances in 64 groups on 4 ranks (2 threads each) were cut into segments of 36
// sample rows where each rank's engine allows 5, on one rank 29 where it allows 1 (issue 42;
// the old copy's arithmetic, evaluated beside this test's bounds).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "backends/ensemble_spec.hpp"
#include "backends/memory_bounds.hpp"

namespace chens {
namespace {

TEST(MemoryBounds, ShardRowsWithinEveryRanksEngineBound) {
  for (std::uint64_t n : {std::uint64_t(1), std::uint64_t(1000), std::uint64_t(100000), std::uint64_t(10000000)})
    for (int ranks : {1, 2, 3, 4, 7})
      for (std::int64_t threads : {1, 2, 16, 64})
        for (std::int64_t groups : {0, 1, 8, 64})
          for (std::size_t snapshot_row : {std::size_t(0), std::size_t(8 * 1000), std::size_t(8 * 100000)}) {
            const std::uint64_t blocks = (n + cpu_block_size - 1) / cpu_block_size;
            const std::int64_t rows = shard_memory_rows(blocks, ranks, threads, 1 + groups, cpu_block_size, snapshot_row);
            const std::string what = "n = " + std::to_string(n) + ", ranks = " + std::to_string(ranks) +
                                     ", threads = " + std::to_string(threads) + ", groups = " + std::to_string(groups) +
                                     ", snapshot row = " + std::to_string(snapshot_row) + " bytes";
            for (int r = 0; r < ranks; ++r) {
              // mpi_runtime.cpp's shard_of: whole blocks, rank r's [b0, b1).
              const std::uint64_t b0 = blocks * static_cast<std::uint64_t>(r) / static_cast<std::uint64_t>(ranks);
              const std::uint64_t b1 = blocks * static_cast<std::uint64_t>(r + 1) / static_cast<std::uint64_t>(ranks);
              const std::uint64_t size = std::min(n, b1 * cpu_block_size) - std::min(n, b0 * cpu_block_size);
              EXPECT_LE(rows, cpu_memory_rows(static_cast<std::int64_t>(b1 - b0), threads, 1 + groups))
                  << what << ": rank " << r << "'s CPU engine bound";
              EXPECT_LE(rows, cuda_memory_rows(size, snapshot_row)) << what << ": rank " << r << "'s GPU engine bound";
            }
          }
}

// The CPU bound counts each group's statistics as the ensemble's own: 64 groups and the
// ensemble are 65 sets, and their bytes per sample time stay under 64 MiB (an independent
// count of the block accumulators and the threads' histograms).
TEST(MemoryBounds, CpuBoundCountsEveryGroupsStatistics) {
  const std::int64_t blocks = 1563, threads = 2;  // 100,000 instances
  for (std::int64_t sets : {1, 9, 65}) {
    const std::int64_t rows = cpu_memory_rows(blocks, threads, sets);
    const std::int64_t bytes_per_row = sets * (blocks * metric_count * static_cast<std::int64_t>(sizeof(Accumulator)) +
                                               threads * metric_count * LogBins::count * 4);
    EXPECT_LE(rows * bytes_per_row, std::int64_t(64) << 20) << sets << " sets";
    EXPECT_GT((rows + 1) * bytes_per_row, std::int64_t(64) << 20) << sets << " sets: the bound is the largest that fits";
  }
}

}  // namespace
}  // namespace chens
