// The first-passage statistics of a run (EnsembleResult::passage) from its instances' passage
// times (ensemble/passage.hpp), once the run has ended: counts, the sample interval of each
// passage, and the crossing times' statistics and quantiles reduced as the per-sample
// statistics are (per block of cpu_block_size instances in instance order, blocks merged along
// the block tree, histograms summed), so that they do not depend on threads, backends or
// ranks. C++17-clean: nvcc compiles it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <chens/ensemble/accumulator.hpp>
#include <chens/ensemble/passage.hpp>
#include <chens/ensemble/quantiles.hpp>
#include <chens/ensemble/run_params.hpp>

#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"

namespace chens {

// Where the crossing times go in the reduction's two rows (EnsembleSpec::reduce_segment's
// layout): row 0 holds the metrics' slots, row 1 the loss in its metric 0.
inline constexpr int passage_row(int s) { return s == passage_lost ? 1 : 0; }
inline constexpr int passage_column(int s) { return s == passage_lost ? 0 : s; }

// Tallies the instances for_each(f) hands over as f(i, instance), i ascending in 0 .. n - 1 (all
// of them, or a group's).
template <class Real, class ForEach>
void tally_passage(const RunParams<Real>& rp, const EnsembleSpec& spec, std::uint64_t n, ForEach&& for_each,
                   PassageResult& out) {
  const std::size_t K = static_cast<std::size_t>(rp.samples + 1);
  std::vector<double> t(K);
  for (std::size_t k = 0; k < K; ++k) t[k] = rp.reference_time(static_cast<index_t>(k));
  out.mask = rp.passage.mask;
  for (int s = 0; s < passage_slots; ++s) {
    out.slot[s] = PassageStats{};
    out.slot[s].level = s == passage_lost ? 0.0 : rp.passage.level[s];
    if (rp.passage.on(s)) out.slot[s].ended.assign(K, 0);  // a slot not checked keeps none
  }
  const std::uint64_t blocks = (n + cpu_block_size - 1) / cpu_block_size;
  constexpr std::size_t hist_row = static_cast<std::size_t>(metric_count) * LogBins::count;
  std::vector<Accumulator> acc(static_cast<std::size_t>(2 * blocks) * metric_count);
  std::vector<std::uint32_t> hist(2 * hist_row, 0u);
  // The sample interval (t_{k-1}, t_k] holding time x (crossings happen within the run).
  auto interval = [&](double x) {
    const std::size_t k = static_cast<std::size_t>(std::lower_bound(t.begin(), t.end(), x) - t.begin());
    return std::min(k, K - 1);
  };
  for_each([&](std::uint64_t i, const auto& in) {
    const Passage& p = in.passage;
    const std::uint64_t b = i / cpu_block_size;
    for (int s = 0; s < passage_slots; ++s) {
      if (!rp.passage.on(s)) continue;
      PassageStats& st = out.slot[s];
      const double crossing = p.at(s);
      const double ended = std::min(crossing, p.lost_at);
      if (crossing < INFINITY) {
        st.crossed += 1;
        const int r = passage_row(s), c = passage_column(s);
        acc[(static_cast<std::size_t>(r) * blocks + b) * metric_count + static_cast<std::size_t>(c)].add(crossing);
        hist[static_cast<std::size_t>(r) * hist_row + static_cast<std::size_t>(c) * LogBins::count +
             static_cast<std::size_t>(LogBins::index(crossing))] += 1;
      } else if (ended < INFINITY) {
        st.lost_first += 1;
      } else {
        st.never += 1;
      }
      if (ended < INFINITY) st.ended[interval(ended)] += 1;
    }
  });
  // The crossing times' statistics: the per-sample reduction of two rows (in a sharded run
  // every rank calls it, and rank 0's result is the whole ensemble's).
  std::vector<SampleStats> rows(2);
  if (spec.reduce_segment) {
    spec.reduce_segment(0, 2, acc.data(), static_cast<std::int64_t>(blocks), hist.data(), rows);
  } else {
    reduce_rows(rows, 0, 2, acc.data(), static_cast<std::int64_t>(blocks), hist.data());
  }
  for (int s = 0; s < passage_slots; ++s) {
    const int r = passage_row(s), c = passage_column(s);
    out.slot[s].time = rows[static_cast<std::size_t>(r)].metric[c];
    for (int q = 0; q < quantile_count; ++q) out.slot[s].quantile[q] = rows[static_cast<std::size_t>(r)].quantile[c][q];
  }
}

}  // namespace chens
