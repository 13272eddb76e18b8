// First-passage statistics (issue 22, docs/first_passage.md) on the CPU backend, against
// oracles that do not use them: the same ensemble sampled after every step and recorded
// (brute force: the first recorded value over the level, exact to the step), the per-sample
// statistics' live counts (the loss), and a planted ensemble whose crossing times are known.
// The kernels' bodies are compared with the CPU's in test_soa_segment.cpp, resumed runs in
// test_checkpoint.cpp, ranks in tests/mpi/.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dispatch/run_study.hpp"
#include "support/checkpoint_resume.hpp"
#include "support/only_instances.hpp"

namespace chens {
namespace {

// The pendulum's Hamilton-Dirac equations by RK4 without projections: the energy error and
// the residuals drift, the integration error grows; 100 instances (two blocks).
Study drifting_pendulum() {
  Study s;
  s.formulation = FormulationId::dirac;
  s.method = MethodId::rk4;
  s.size = 100;
  s.seed = 3;
  s.perturbation = 1e-2;
  s.h = 0.1;
  s.t_end = 20.0;
  s.sample_dt = 2.0;  // 20 steps per sample
  return s;
}

double& level_of(Study& s, int m) {
  switch (m) {
    case int(MetricId::integration_error): return s.passage_integration_error;
    case int(MetricId::energy_error): return s.passage_energy_error;
    case int(MetricId::phi): return s.passage_phi;
    default: return s.passage_psi;
  }
}

// The first recorded time at which instance slot r's metric m exceeds `level`, among the
// samples k with k % every == 0; +inf if none.
double first_recorded_over(const RecordedTrajectories& rec, std::size_t r, int m, double level, std::size_t every) {
  const std::size_t R = rec.instances.size();
  for (std::size_t k = 0; k < rec.samples(); k += every)
    if (rec.measured[k * R + r] && rec.metrics[(k * R + r) * metric_count + static_cast<std::size_t>(m)] > level)
      return rec.t[k];
  return INFINITY;
}

// The nearest-rank p-quantile of xs (quantiles.hpp's definition).
double nearest_rank(std::vector<double> xs, double p) {
  std::sort(xs.begin(), xs.end());
  const std::size_t rank = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(p * static_cast<double>(xs.size()))));
  return xs[std::min(rank, xs.size()) - 1];
}

// Each instance's crossing times against the same ensemble sampled after every step
// (sample_dt = h) with every instance recorded: the first recorded value over the level,
// exact to the step for the metrics checked after every step, at the coarse run's sample
// times for the integration error. Then every count and statistic of the tally from those
// brute-force times; and the run's invariance to threads.
TEST(FirstPassage, CrossingTimesAreTheBruteForceOnesExactToTheStep) {
  Study fine = drifting_pendulum();
  fine.sample_dt = fine.h;
  for (std::int64_t i = 0; i < fine.size; ++i) fine.record.push_back(i);
  const EnsembleResult oracle = run_study_cpu(fine, resolve(fine), ensemble_spec(fine, 2));
  const RecordedTrajectories& rec = oracle.recorded;
  ASSERT_EQ(rec.samples(), 201u);
  ASSERT_EQ(oracle.lost_total(), 0u);

  // Each level at the median over the instances of their largest value where it is checked
  // (the integration error at the coarse run's samples, every 20th): about half of the
  // instances cross it, at times spread over the run.
  Study s = drifting_pendulum();
  const std::size_t R = rec.instances.size();
  const std::size_t every = 20;  // the coarse run's sample times among the fine run's
  for (int m : {int(MetricId::integration_error), int(MetricId::energy_error), int(MetricId::phi), int(MetricId::psi)}) {
    std::vector<double> largest(R, 0.0);
    for (std::size_t k = 0; k < rec.samples(); k += passage_per_step(m) ? 1 : every)
      for (std::size_t r = 0; r < R; ++r)
        largest[r] = std::max(largest[r], rec.metrics[(k * R + r) * metric_count + static_cast<std::size_t>(m)]);
    level_of(s, m) = nearest_rank(largest, 0.5);
    ASSERT_GT(level_of(s, m), 0.0) << metric_name(m);
  }
  s.passage_lost = true;
  s.states = true;
  const RunParams<double> rp = resolve(s);
  ASSERT_TRUE(rp.passage.per_step);
  const EnsembleResult r = run_study_cpu(s, rp, ensemble_spec(s, 2));
  ASSERT_EQ(r.kept.first_passage.size(), R * passage_slots);

  for (int m : {int(MetricId::integration_error), int(MetricId::energy_error), int(MetricId::phi), int(MetricId::psi)}) {
    const bool step = passage_per_step(m);
    const double level = level_of(s, m);
    std::vector<double> crossed;
    std::vector<std::uint64_t> ended(static_cast<std::size_t>(rp.samples + 1), 0);
    for (std::size_t i = 0; i < R; ++i) {
      const double brute = first_recorded_over(rec, i, m, level, step ? 1 : every);
      ASSERT_EQ(r.kept.first_passage[i * passage_slots + static_cast<std::size_t>(m)], brute)
          << metric_name(m) << " of instance " << i << " (level " << level << ")";
      if (brute < INFINITY) {
        crossed.push_back(brute);
        // The coarse sample interval (t_{k-1}, t_k] holding it.
        std::size_t k = 0;
        while (rp.reference_time(static_cast<index_t>(k)) < brute) ++k;
        ended[k] += 1;
      }
    }
    const PassageStats& p = r.passage.slot[m];
    ASSERT_GT(crossed.size(), 10u) << metric_name(m);  // the case this test is for
    ASSERT_LT(crossed.size(), R) << metric_name(m);
    EXPECT_EQ(p.crossed, crossed.size()) << metric_name(m);
    EXPECT_EQ(p.lost_first, 0u) << metric_name(m);
    EXPECT_EQ(p.never, R - crossed.size()) << metric_name(m);
    EXPECT_EQ(p.ended, ended) << metric_name(m);
    EXPECT_EQ(p.time.count, crossed.size());
    EXPECT_EQ(p.time.min, *std::min_element(crossed.begin(), crossed.end())) << metric_name(m);
    EXPECT_EQ(p.time.max, *std::max_element(crossed.begin(), crossed.end())) << metric_name(m);
    double sum = 0;
    for (double x : crossed) sum += x;
    EXPECT_NEAR(p.time.mean, sum / static_cast<double>(crossed.size()), 1e-12 * p.time.max) << metric_name(m);
    // Each quantile in the histogram bin of the exact order statistic (quantiles.hpp).
    for (int q = 0; q < quantile_count; ++q)
      EXPECT_EQ(LogBins::index(p.quantile[q]), LogBins::index(nearest_rank(crossed, quantile_level[q])))
          << metric_name(m) << " " << quantile_name[q] << " = " << p.quantile[q];
    std::uint64_t gone = 0;
    for (std::size_t k = 0; k < ended.size(); ++k) {
      gone += ended[k];
      EXPECT_EQ(r.passage.surviving(m, k, R), static_cast<double>(R - gone) / static_cast<double>(R)) << k;
    }
    if (step) {  // finer than the coarse samples: some crossing lies strictly between them
      const bool between = std::any_of(crossed.begin(), crossed.end(), [&](double t) {
        return std::fmod(std::round(t / s.h), static_cast<double>(every)) != 0.0;
      });
      EXPECT_TRUE(between) << metric_name(m);
    }
  }
  EXPECT_EQ(r.passage.slot[passage_lost].crossed, 0u);
  EXPECT_EQ(r.passage.slot[passage_lost].never, R);

  // Thread counts (and the CPU's lanes of four instances) change no bit of it; nor do levels
  // being checked change the integration.
  test::expect_bitwise_equal(r, run_study_cpu(s, rp, ensemble_spec(s, 1)), "first passage, 1 thread against 2");
  Study plain = drifting_pendulum();
  plain.states = true;
  const EnsembleResult without = run_study_cpu(plain, resolve(plain), ensemble_spec(plain, 2));
  EXPECT_EQ(without.kept.final_state, r.kept.final_state);
  EXPECT_TRUE(test::same_bytes(&without.totals, &r.totals, sizeof(Counters)));
  for (std::size_t k = 0; k < r.series.size(); ++k)
    EXPECT_TRUE(test::same_bytes(&without.series[k], &r.series[k], sizeof(SampleStats))) << k;
}

// The loss: lost_at is the first sample at which the instance is no longer live, so the
// surviving fraction of "lost" is the per-sample statistics' live count over the ensemble
// size at every sample, and each instance's time is its first unmeasured recorded sample.
TEST(FirstPassage, LossTimesAreTheSamplesThatStopCountingAnInstance) {
  Study s = test::diverging_ensemble();  // instances lost by the residual bound (2e-2) at different samples
  s.passage_lost = true;
  // Just above the residual bound: |phi| crosses it between two samples (and the instance is
  // lost at the second), or the instance is lost at a sample before |phi| reaches it (162
  // and 119 of 300; 19 are never lost).
  s.passage_phi = 2.05e-2;
  s.states = true;
  for (std::int64_t i = 0; i < s.size; ++i) s.record.push_back(i);
  const RunParams<double> rp = resolve(s);
  const EnsembleResult r = run_study_cpu(s, rp, ensemble_spec(s, 2));
  const std::uint64_t N = static_cast<std::uint64_t>(s.size);
  ASSERT_GT(r.lost_total(), 10u);
  ASSERT_LT(r.lost_total(), N);
  const PassageStats& lost = r.passage.slot[passage_lost];
  EXPECT_EQ(lost.crossed, r.lost_total());
  EXPECT_EQ(lost.never, N - r.lost_total());
  for (std::size_t k = 0; k < r.series.size(); ++k)
    EXPECT_EQ(r.passage.surviving(passage_lost, k, N) * static_cast<double>(N),
              static_cast<double>(r.series[k].metric[0].count))
        << "sample " << k;
  const RecordedTrajectories& rec = r.recorded;
  for (std::uint64_t i = 0; i < N; ++i) {
    double first_unmeasured = INFINITY;
    for (std::size_t k = 0; k < rec.samples(); ++k)
      if (!rec.measured[k * N + i]) {
        first_unmeasured = rec.t[k];
        break;
      }
    ASSERT_EQ(r.kept.first_passage[i * passage_slots + passage_lost], first_unmeasured) << "instance " << i;
    // |phi| checked after every step: at or before the first sample that records it over the
    // level, and never after the loss.
    const double phi = r.kept.first_passage[i * passage_slots + int(MetricId::phi)];
    EXPECT_LE(phi, first_recorded_over(rec, i, int(MetricId::phi), s.passage_phi, 1)) << "instance " << i;
    if (phi < INFINITY) {
      EXPECT_LE(phi, first_unmeasured) << "instance " << i;
    }
  }
  const PassageStats& phi = r.passage.slot[int(MetricId::phi)];
  EXPECT_GT(phi.crossed, 0u);
  EXPECT_GT(phi.lost_first, 0u);
  EXPECT_EQ(phi.crossed + phi.lost_first + phi.never, N);
  test::expect_bitwise_equal(r, run_study_cpu(s, rp, ensemble_spec(s, 1)), "lost, 1 thread against 2");
}

// A planted ensemble: every instance i >= 1 of an inconsistent ensemble starts |phi| =
// phi_offset off its constraint (ensemble.kind = "inconsistent", 000 §8; instance 0 is the
// unperturbed one, on it). A level below the offset is crossed by each of them at t = 0; one
// above it, with the position projected back after every step, by none.
TEST(FirstPassage, APlantedEnsembleCrossesWhereItWasPlanted) {
  Study s = drifting_pendulum();
  s.kind = "inconsistent";
  s.phi_offset = 1e-3;
  s.passage_phi = 5e-4;
  s.passage_psi = 1.0;  // far above anything the run reaches
  s.states = true;
  const RunParams<double> rp = resolve(s);
  const EnsembleResult r = run_study_cpu(s, rp, ensemble_spec(s, 2));
  const std::uint64_t N = static_cast<std::uint64_t>(s.size);
  for (std::uint64_t i = 1; i < N; ++i)
    ASSERT_EQ(r.kept.first_passage[i * passage_slots + int(MetricId::phi)], 0.0) << "instance " << i;
  EXPECT_GT(r.kept.first_passage[int(MetricId::phi)], 0.0);  // instance 0 starts on the manifold
  const PassageStats& phi = r.passage.slot[int(MetricId::phi)];
  EXPECT_GE(phi.crossed, N - 1);
  EXPECT_EQ(phi.ended[0], N - 1);
  EXPECT_EQ(phi.time.min, 0.0);
  for (double q : phi.quantile) EXPECT_EQ(q, 0.0);  // p99: the 99th of at least 99 zeros
  EXPECT_EQ(r.passage.surviving(int(MetricId::phi), 0, N), 1.0 / static_cast<double>(N));
  EXPECT_EQ(r.passage.slot[int(MetricId::psi)].never, N);
  EXPECT_EQ(r.passage.slot[int(MetricId::psi)].time.count, 0u);

  Study projected = s;
  projected.position = true;
  projected.projection_tol = 1e-10;
  projected.passage_phi = 2e-3;  // above the offset, which the first step's projection removes
  const EnsembleResult p = run_study_cpu(projected, resolve(projected), ensemble_spec(projected, 2));
  EXPECT_EQ(p.passage.slot[int(MetricId::phi)].never, N);
  EXPECT_EQ(p.passage.surviving(int(MetricId::phi), p.series.size() - 1, N), 1.0);
}

}  // namespace
}  // namespace chens
