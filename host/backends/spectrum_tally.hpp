// The Lyapunov spectrum's statistics of a run (output.lyapunov_spectrum, issue 43;
// geometry/tangent_system.hpp): each exponent of each live instance at the run's last sample
// time, reduced as the per-sample statistics and the first-passage times are (per block of
// cpu_block_size instances in instance order, blocks merged along the block tree, signed
// histograms summed for the quantiles: passage_tally.hpp), so that they do not depend on
// threads, backends or ranks. Exponent k takes row k of the reduction, in the column of the
// metric `lyapunov` (signed, as the exponents are). C++17-clean: nvcc compiles it.
#pragma once

#include <cstdint>
#include <vector>

#include <chens/ensemble/accumulator.hpp>
#include <chens/ensemble/counters.hpp>
#include <chens/ensemble/quantiles.hpp>

#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"

namespace chens {

// Tallies the instances for_each(f) hands over as f(i, instance), i ascending in 0 .. n - 1;
// exponents(i, instance, lambda) fills instance i's K exponents.
template <int K, class ForEach, class Exponents>
void tally_spectrum(const EnsembleSpec& spec, std::uint64_t n, ForEach&& for_each, Exponents&& exponents,
                    std::vector<ExponentStats>& out) {
  constexpr int column = int(MetricId::lyapunov);
  const std::uint64_t blocks = (n + cpu_block_size - 1) / cpu_block_size;
  constexpr std::size_t hist_row = static_cast<std::size_t>(metric_count) * LogBins::count;
  std::vector<Accumulator> acc(static_cast<std::size_t>(K * blocks) * metric_count);
  std::vector<std::uint32_t> hist(K * hist_row, 0u);
  for_each([&](std::uint64_t i, const auto& in) {
    if (in.lost != int(LostReason::none)) return;
    double lambda[K];
    exponents(i, in, lambda);
    const std::uint64_t b = i / cpu_block_size;
    for (int k = 0; k < K; ++k) {
      acc[(static_cast<std::size_t>(k) * blocks + b) * metric_count + column].add(lambda[k]);
      hist[static_cast<std::size_t>(k) * hist_row + static_cast<std::size_t>(column) * LogBins::count +
           static_cast<std::size_t>(histogram_bin(true, lambda[k]))] += 1;
    }
  });
  // The per-sample reduction of K rows (in a sharded run every rank calls it, and rank 0's
  // result is the whole ensemble's).
  std::vector<SampleStats> rows(K);
  if (spec.reduce_segment) {
    spec.reduce_segment(0, K, acc.data(), static_cast<std::int64_t>(blocks), hist.data(), rows);
  } else {
    reduce_rows(rows, 0, K, acc.data(), static_cast<std::int64_t>(blocks), hist.data());
  }
  out.assign(K, ExponentStats{});
  for (int k = 0; k < K; ++k) {
    out[static_cast<std::size_t>(k)].value = rows[static_cast<std::size_t>(k)].metric[column];
    for (int q = 0; q < quantile_count; ++q)
      out[static_cast<std::size_t>(k)].quantile[q] = rows[static_cast<std::size_t>(k)].quantile[column][q];
  }
}

}  // namespace chens
