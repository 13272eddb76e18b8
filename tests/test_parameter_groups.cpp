// Grouped statistics of parameter ensembles (issue 22, [parameters] group_by,
// docs/parameter_ensembles.md): each group's statistics against a brute-force reduction of its
// members' recorded metrics at every sample; the ensemble's own statistics unchanged by
// grouping; threads; and a grouped step-size ensemble against its groups run separately
// (ensemble.only: the same instances), whose convergence orders it then reproduces exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <chens/ensemble/quantiles.hpp>

#include "dispatch/run_study.hpp"
#include "backends/parameter_laws.hpp"
#include "support/brute_statistics.hpp"
#include "support/study_laws.hpp"

namespace chens {
namespace {

using test::set_law;

bool same_bytes(const SampleStats& a, const SampleStats& b) { return std::memcmp(&a, &b, sizeof(SampleStats)) == 0; }

using Brute = test::BruteStatistics;
constexpr auto expect_matches = test::expect_statistics_match;

// Pendulums of lengths drawn uniform in [0.5, 2] grouped into three equal bins, every
// instance recorded at every sample; energy-error passages per group.
Study grouped_lengths() {
  Study s;
  s.formulation = FormulationId::dirac;
  s.method = MethodId::rk4;
  s.size = 300;
  s.seed = 17;
  s.perturbation = 1e-2;
  s.h = 0.05;
  s.t_end = 5.0;
  s.sample_dt = 0.5;
  s.momentum = true;
  s.projection_tol = 1e-10;
  s.states = true;
  s.passage_energy_error = 1e-5;  // crossed by most short pendulums and no long one (below)
  set_law(s, ParameterId::length, ParameterLaw{LawKind::uniform, 0.5, 2.0, {}});
  s.group_by = "length";
  s.group_bins = 3;
  for (std::int64_t i = 0; i < s.size; ++i) s.record.push_back(i);
  return s;
}

TEST(GroupedStatistics, EachGroupIsItsMembersStatisticsAtEverySample) {
  const Study s = grouped_lengths();
  SCOPED_TRACE("ensemble.seed = " + std::to_string(s.seed));
  const RunParams<double> rp = resolve(s);
  const EnsembleResult r = run_study_cpu(s, rp, ensemble_spec(s, 2));
  const std::uint64_t N = static_cast<std::uint64_t>(s.size);
  ASSERT_EQ(r.groups.size(), 3u);

  // Each instance's group, from its drawn length and the bins [0.5, 1), [1, 1.5), [1.5, 2].
  const ParameterEnsemble e = parameter_ensemble(s);
  std::vector<int> group(N);
  std::uint64_t size[3] = {};
  for (std::uint64_t i = 0; i < N; ++i) {
    const double l = e.value(ParameterId::length, i);
    group[i] = l < 1.0 ? 0 : l < 1.5 ? 1 : 2;
    ASSERT_EQ(e.group_of(i), group[i]) << "instance " << i << ", length " << l;
    size[group[i]] += 1;
  }
  for (int g = 0; g < 3; ++g) {
    EXPECT_EQ(r.groups[g].instances, size[g]) << "group " << g;
    EXPECT_GT(size[g], 60u) << "group " << g;  // each bin holds about a third
  }

  // Every sample's statistics of every group from its members' recorded metrics.
  const RecordedTrajectories& rec = r.recorded;
  ASSERT_EQ(rec.instances.size(), N);
  ASSERT_EQ(rec.samples(), r.series.size());
  for (std::size_t k = 0; k < rec.samples(); ++k) {
    std::uint64_t live = 0;
    for (int g = 0; g < 3; ++g) {
      const SampleStats& st = r.groups[g].series[k];
      EXPECT_EQ(st.t, r.series[k].t);
      for (int m = 0; m < metric_count; ++m) {
        Brute b;
        for (std::uint64_t i = 0; i < N; ++i)
          if (group[i] == g && rec.measured[k * N + i]) b.add(rec.metrics[(k * N + i) * metric_count + m]);
        expect_matches(st.metric[m], st.quantile[m], b,
                       "group " + std::to_string(g) + ", sample " + std::to_string(k) + ", " + metric_name(m));
      }
      live += st.metric[0].count;
    }
    EXPECT_EQ(live, r.series[k].metric[0].count) << "sample " << k << ": the groups' live counts add up";
  }

  // First passages of the energy error by group, from each instance's crossing time.
  std::uint64_t crossed = 0;
  for (int g = 0; g < 3; ++g) {
    Brute b;
    for (std::uint64_t i = 0; i < N; ++i) {
      const double t = r.kept.first_passage[i * passage_slots + int(MetricId::energy_error)];
      if (group[i] == g && t < INFINITY) b.add(t);
    }
    const PassageStats& p = r.groups[g].passage.slot[int(MetricId::energy_error)];
    EXPECT_EQ(p.crossed, b.count) << "group " << g;
    EXPECT_EQ(p.crossed + p.lost_first + p.never, size[g]) << "group " << g;
    expect_matches(p.time, p.quantile, b, "group " + std::to_string(g) + "'s energy-error passages");
    crossed += p.crossed;
  }
  EXPECT_EQ(crossed, r.passage.slot[int(MetricId::energy_error)].crossed);
  // A longer pendulum swings more slowly, so the same step resolves it better: most of the
  // shortest third cross the level, none of the longest.
  EXPECT_GT(2 * r.groups[0].passage.slot[int(MetricId::energy_error)].crossed, size[0]);
  EXPECT_EQ(r.groups[2].passage.slot[int(MetricId::energy_error)].crossed, 0u);

  // Grouping changes none of the ensemble's own statistics; one thread gives the same bits.
  Study plain = s;
  plain.group_by.clear();
  plain.group_bins = 0;
  const EnsembleResult u = run_study_cpu(plain, resolve(plain), ensemble_spec(plain, 2));
  EXPECT_TRUE(u.groups.empty());
  const EnsembleResult one = run_study_cpu(s, rp, ensemble_spec(s, 1));
  for (std::size_t k = 0; k < r.series.size(); ++k) {
    EXPECT_TRUE(same_bytes(r.series[k], u.series[k])) << "sample " << k << ": with and without groups";
    for (int g = 0; g < 3; ++g)
      EXPECT_TRUE(same_bytes(r.groups[g].series[k], one.groups[g].series[k]))
          << "group " << g << ", sample " << k << ": 1 thread";
  }
}

// One launch of a step-size ensemble, grouped by h, against its groups run separately: each
// group holds the instances i = j mod 4 with h = values[j], and the single run with
// integrator.h = values[j] of exactly those instances (ensemble.only) has the same statistics
// (merged over another block tree: means to rounding; counts, extremes and quantiles exactly).
// RK4 on the Hamilton-Dirac equations then converges at order 4 in both (the default
// pendulum, which goes over the top, from above: e = C h^4 (1 + c h)).
TEST(GroupedStatistics, AGroupedStepSizeEnsembleReproducesItsSeparateRuns) {
  const std::vector<double> hs = {0.00625, 0.05, 0.0125, 0.025};  // groups ascend: 0.00625, ..., 0.05
  Study s;
  s.formulation = FormulationId::dirac;
  s.method = MethodId::rk4;
  s.size = 256;
  s.seed = 3;
  s.perturbation = 1e-2;
  s.h = 0.1;
  s.t_end = 8.0;
  s.sample_dt = 0.4;
  s.momentum = true;
  s.projection_tol = 1e-12;
  set_law(s, ParameterId::h, ParameterLaw{LawKind::list, 0, 0, hs});
  s.group_by = "h";
  SCOPED_TRACE("ensemble.seed = " + std::to_string(s.seed));
  const EnsembleResult r = run_study_cpu(s, resolve(s), ensemble_spec(s, 2));
  ASSERT_EQ(r.groups.size(), 4u);
  const std::vector<double> ascending = {0.00625, 0.0125, 0.025, 0.05};
  const int err = int(MetricId::integration_error);
  std::vector<double> grouped_p50, separate_p50;
  for (std::size_t g = 0; g < 4; ++g) {
    const double h = ascending[g];
    Study single = s;
    single.vary = {};
    single.group_by.clear();
    single.h = h;
    for (std::int64_t i = 0; i < s.size; ++i)
      if (hs[static_cast<std::size_t>(i) % hs.size()] == h) single.only.push_back(i);
    const EnsembleResult one = run_study_cpu(single, resolve(single), ensemble_spec(single, 2));
    ASSERT_EQ(r.groups[g].instances, single.only.size()) << "h = " << h;
    ASSERT_EQ(one.series.size(), r.groups[g].series.size());
    for (std::size_t k = 0; k < one.series.size(); ++k) {
      const SampleStats &a = r.groups[g].series[k], &b = one.series[k];
      for (int m = 0; m < metric_count; ++m) {
        const std::string what = "h = " + std::to_string(h) + ", sample " + std::to_string(k) + ", " + metric_name(m);
        ASSERT_EQ(a.metric[m].count, b.metric[m].count) << what;
        EXPECT_EQ(a.metric[m].min, b.metric[m].min) << what;
        EXPECT_EQ(a.metric[m].max, b.metric[m].max) << what;
        const double scale = std::max(std::fabs(b.metric[m].min), std::fabs(b.metric[m].max));
        EXPECT_NEAR(a.metric[m].mean, b.metric[m].mean, 1e-14 * scale) << what;
        for (int q = 0; q < quantile_count; ++q) EXPECT_EQ(a.quantile[m][q], b.quantile[m][q]) << what;
      }
    }
    grouped_p50.push_back(r.groups[g].series.back().quantile[err][1]);
    separate_p50.push_back(one.series.back().quantile[err][1]);
  }
  // The order of the median integration error at t_end between h and 2h: the separate runs'
  // exactly, and tending to 4 as h halves (its excess over 4 shrinking, the finest pair's
  // within 0.25 of it).
  double excess = INFINITY;
  for (std::size_t g = 3; g-- > 0;) {
    const double order = std::log2(grouped_p50[g + 1] / grouped_p50[g]);
    const std::string what = "h = " + std::to_string(ascending[g]) + ": errors " + std::to_string(grouped_p50[g]) + ", " +
                             std::to_string(grouped_p50[g + 1]) + ", order " + std::to_string(order);
    EXPECT_EQ(order, std::log2(separate_p50[g + 1] / separate_p50[g])) << what;
    EXPECT_GT(order, 4.0) << what;
    EXPECT_LT(order - 4.0, excess) << what;
    excess = order - 4.0;
  }
  EXPECT_LT(excess, 0.25);
}

}  // namespace
}  // namespace chens
