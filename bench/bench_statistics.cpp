// The statistics path on the host, per sample row (docs/performance.md, "GPU engine to the
// roofline"): what each backend spends outside the integration, measured without a GPU.
//
//   BM_LeafAccumulation/n   Accumulator::add of 7 metrics for n instances in blocks of 64,
//                           instance order: the CPU backend's work per row, and the device's
//                           block_leaves (items: metric values)
//   BM_BlockTree/n          tree_merge over the n / 64 block leaves of one row: what the GPU
//                           backend of c0b2684 did on one host core per row, after copying
//                           all leaves (now on the device); sharded runs still do it per rank
//   BM_LeavesCopy/n         copying those leaves (48 bytes per block and metric) in host
//                           memory: a floor for the copy the old path made across PCIe
//   BM_RowFromRoots         the host's share per row now: roots into the series and the four
//                           quantiles of every metric from the histograms
//
// Inputs: metric values spread over 32 octaves from a fixed-seed generator.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/accumulator.hpp>
#include <chens/ensemble/quantiles.hpp>

#include "backends/block_tree.hpp"
#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"

namespace {

using namespace chens;

std::vector<double> metric_values(std::size_t count) {
  std::mt19937_64 rng(20261126);
  std::uniform_real_distribution<double> expo(-30.0, 2.0);
  std::vector<double> v(count);
  for (double& x : v) x = std::pow(10.0, expo(rng));
  return v;
}

std::vector<Accumulator> leaves_of(const std::vector<double>& metrics, std::uint64_t n) {
  const std::uint64_t blocks = (n + cpu_block_size - 1) / cpu_block_size;
  std::vector<Accumulator> leaves(blocks * metric_count);
  for (std::uint64_t i = 0; i < n; ++i)
    for (int m = 0; m < metric_count; ++m)
      leaves[(i / cpu_block_size) * metric_count + static_cast<std::uint64_t>(m)].add(
          metrics[static_cast<std::uint64_t>(m) * n + i]);
  return leaves;
}

void BM_LeafAccumulation(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const std::vector<double> metrics = metric_values(n * metric_count);
  for (auto _ : state) {
    std::vector<Accumulator> leaves = leaves_of(metrics, n);
    benchmark::DoNotOptimize(leaves.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n) * metric_count);
}

void BM_BlockTree(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const std::vector<Accumulator> leaves = leaves_of(metric_values(n * metric_count), n);
  const std::uint64_t blocks = leaves.size() / metric_count;
  for (auto _ : state) {
    Accumulator root[metric_count];
    tree_merge(leaves.data(), blocks, root);
    benchmark::DoNotOptimize(root);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(blocks));
}

void BM_LeavesCopy(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  const std::vector<Accumulator> leaves = leaves_of(metric_values(n * metric_count), n);
  std::vector<Accumulator> to(leaves.size());
  for (auto _ : state) {
    std::memcpy(static_cast<void*>(to.data()), leaves.data(), leaves.size() * sizeof(Accumulator));
    benchmark::DoNotOptimize(to.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(leaves.size() * sizeof(Accumulator)));
}

void BM_RowFromRoots(benchmark::State& state) {
  const std::vector<double> metrics = metric_values(100000 * metric_count);
  const std::vector<Accumulator> leaves = leaves_of(metrics, 100000);
  Accumulator roots[metric_count];
  tree_merge(leaves.data(), leaves.size() / metric_count, roots);
  std::vector<std::uint32_t> hist(static_cast<std::size_t>(metric_count) * LogBins::count, 0);
  for (std::size_t i = 0; i < 100000; ++i)
    for (int m = 0; m < metric_count; ++m)
      hist[static_cast<std::size_t>(m) * LogBins::count +
           static_cast<std::size_t>(LogBins::index(metrics[static_cast<std::size_t>(m) * 100000 + i]))] += 1;
  std::vector<SampleStats> series(1);
  for (auto _ : state) {
    std::copy(roots, roots + metric_count, series[0].metric);
    set_quantiles(series[0], hist.data());
    benchmark::DoNotOptimize(series.data());
  }
}

BENCHMARK(BM_LeafAccumulation)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BlockTree)->Arg(1000000)->Arg(10000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LeavesCopy)->Arg(10000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RowFromRoots)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
