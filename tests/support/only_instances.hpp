// ensemble.only, the test body written once for every backend (tests/test_ensemble.cpp on the
// CPU, tests/gpu on the GPU): the listed instances of an ensemble, run alone, are bitwise the
// whole run's instances; and an ensemble whose diverging instances are left out (the planted
// divergers, found by ensemble.lost_residual in the whole run) has at its last sample exactly
// the statistics the whole run reports for its survivors.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "dispatch/run_study.hpp"
#include "study/study.hpp"

namespace chens::test {

using OnlyBackend = std::function<EnsembleResult(const Study&, const RunParams<double>&, const EnsembleSpec&)>;

// 002 §6: on the naive equations |phi| grows like t^2; with energies spread by a 0.3
// perturbation the instances pass the bound 2e-2 at different samples, many never.
inline Study diverging_ensemble() {
  Study s;
  s.formulation = FormulationId::naive;
  s.size = 300;
  s.seed = 5;
  s.perturbation = 0.3;
  s.h = 0.1;
  s.t_end = 40.0;
  s.sample_dt = 1.0;
  s.lost_residual = 2e-2;
  return s;
}

inline void check_only_matches_whole(const OnlyBackend& run, const std::string& what) {
  const Study s = diverging_ensemble();
  const RunParams<double> rp = resolve(s);
  EnsembleSpec ws = ensemble_spec(s, 2);
  ws.keep_instances = ws.size;
  const EnsembleResult whole = run(s, rp, ws);
  const std::uint64_t n = ws.size;
  ASSERT_GT(whole.lost_total(), 10u) << what << ", seed " << s.seed;  // a mixed ensemble, or nothing is tested
  ASSERT_LT(whole.lost_total(), n - 10) << what;

  // A handful: block edges, instance 0, and the first lost ones.
  std::set<std::int64_t> pick = {0, 5, 63, 64, 65, 127, 128, 299};
  for (std::size_t q = 0; q < std::min<std::size_t>(4, whole.lost_examples.size()); ++q)
    pick.insert(static_cast<std::int64_t>(whole.lost_examples[q]));
  Study so = s;
  so.only.assign(pick.begin(), pick.end());
  so.record = {so.only[1], so.only.back()};
  const RunParams<double> rpo = resolve(so);
  EnsembleSpec os = ensemble_spec(so, 2);
  os.keep_instances = os.size;
  const EnsembleResult part = run(so, rpo, os);
  ASSERT_EQ(part.instances, so.only.size()) << what;
  const std::size_t S = whole.kept.final_state.size() / n;
  std::uint64_t lost = 0;
  for (std::size_t r = 0; r < so.only.size(); ++r) {
    const auto g = static_cast<std::size_t>(so.only[r]);
    for (std::size_t c = 0; c < S; ++c) {
      ASSERT_EQ(part.kept.initial_state[r * S + c], whole.kept.initial_state[g * S + c]) << what << ": instance " << g;
      ASSERT_EQ(part.kept.final_state[r * S + c], whole.kept.final_state[g * S + c]) << what << ": instance " << g;
    }
    EXPECT_EQ(part.kept.lost[r], whole.kept.lost[g]) << what << ": instance " << g;
    EXPECT_TRUE(std::memcmp(&part.kept.counters[r], &whole.kept.counters[g], sizeof(Counters)) == 0) << what << ": " << g;
    lost += part.kept.lost[r] != int(LostReason::none);
  }
  EXPECT_EQ(part.lost_total(), lost) << what;
  ASSERT_GT(lost, 0u) << what;
  // lost_examples name ensemble indices.
  for (std::size_t q = 0; q < part.lost_examples.size(); ++q)
    EXPECT_EQ(whole.kept.lost[part.lost_examples[q]], part.lost_example_reasons[q]) << what;
  EXPECT_EQ(part.recorded.instances, std::vector<std::uint64_t>(so.record.begin(), so.record.end())) << what;

  // Without the divergers: the whole run's survivors alone.
  Study sv = s;
  for (std::uint64_t i = 0; i < n; ++i)
    if (whole.kept.lost[i] == int(LostReason::none)) sv.only.push_back(static_cast<std::int64_t>(i));
  const RunParams<double> rpv = resolve(sv);
  const EnsembleResult survivors = run(sv, rpv, ensemble_spec(sv, 2));
  EXPECT_EQ(survivors.lost_total(), 0u) << what;
  const SampleStats &a = whole.series.back(), &b = survivors.series.back();
  for (int m : {int(MetricId::integration_error), int(MetricId::energy_error), int(MetricId::phi), int(MetricId::psi)}) {
    EXPECT_EQ(a.metric[m].count, sv.only.size()) << what << ": " << metric_name(m);
    EXPECT_EQ(b.metric[m].count, a.metric[m].count) << what << ": " << metric_name(m);
    EXPECT_EQ(b.metric[m].min, a.metric[m].min) << what << ": " << metric_name(m);
    EXPECT_EQ(b.metric[m].max, a.metric[m].max) << what << ": " << metric_name(m);
    // The same values merged in other blocks: the mean to rounding.
    EXPECT_NEAR(b.metric[m].mean, a.metric[m].mean, 1e-13 * std::abs(a.metric[m].mean)) << what << ": " << metric_name(m);
    EXPECT_NEAR(b.metric[m].rms(), a.metric[m].rms(), 1e-13 * a.metric[m].rms()) << what << ": " << metric_name(m);
    for (int q = 0; q < quantile_count; ++q)  // the same values in the same histogram bins
      EXPECT_EQ(b.quantile[m][q], a.quantile[m][q]) << what << ": " << metric_name(m) << " " << quantile_name[q];
  }
}

}  // namespace chens::test
