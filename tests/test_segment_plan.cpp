// Stop points (issue 17, host/backends/segment_plan.hpp): the plan both backends follow,
// driven here by a simulated clock, so that what it promises (no segment or pass much
// longer than stop_seconds, every step taken exactly once, sharded runs on fixed rows)
// is checked without timing anything; and the divergence rule (ensemble.lost_diverged).
#include <gtest/gtest.h>

#include <cmath>

#include "backends/segment_plan.hpp"
#include "dispatch/run_study.hpp"
#include "study/study.hpp"

namespace chens {
namespace {

// A fixed-step run of `samples` intervals of `per_sample` steps, on a machine that takes
// `pace` seconds per step of the ensemble: plans it to the end and checks every work item.
struct FixedRun {
  index_t samples, per_sample;
  double pace, stop = 1.0;
  index_t max_rows = 1 << 20;
  int passes = 0, segments = 0;
  double longest = 0;

  void run() {
    const index_t total = samples * per_sample;
    SegmentPlan plan(samples, max_rows, true, per_sample, total, 0, false, 0, stop);
    index_t step = 0, row = 0;
    while (!plan.finished()) {
      const SegmentWork w = plan.next();
      plan.take(w);
      ASSERT_EQ(w.k0, row);
      index_t steps = 0;
      if (w.partial) {
        ASSERT_GT(w.limit.until_step, step) << "a pass that moves nothing";
        ASSERT_LE(w.limit.until_step, std::min(total, row * per_sample)) << "a pass beyond its sample";
        steps = w.limit.until_step - step;
        step = w.limit.until_step;
        ++passes;
      } else {
        ASSERT_GT(w.k1, w.k0);
        ASSERT_LE(w.k1 - w.k0, max_rows);
        const index_t to = std::min(total, (w.k1 - 1) * per_sample);
        steps = to - step;
        step = to;
        row = w.k1;
        ++segments;
      }
      ASSERT_EQ(w.steps, steps);
      const double seconds = pace * static_cast<double>(steps);
      longest = std::max(longest, seconds);
      // Without references, every instance is there when the steps are.
      plan.measured(w, seconds, step == std::min(total, row * per_sample) || !w.partial);
    }
    EXPECT_EQ(step, total);
    EXPECT_EQ(row, samples + 1);
  }
};

TEST(SegmentPlan, OneLongSampleIntervalIsCrossedInPassesOfAboutStopSeconds) {
  FixedRun r{1, 100000, 1e-3};  // 100 s of work, one sample interval
  r.run();
  EXPECT_LE(r.longest, 1.0 + 1e-9);
  EXPECT_GE(r.passes, 99);  // 100 s in passes of at most 1 s (and the rest of the interval)
  EXPECT_LE(r.passes, 102);
}

TEST(SegmentPlan, ShortSampleIntervalsAreGatheredIntoSegmentsOfAboutStopSeconds) {
  FixedRun r{5000, 10, 1e-3};  // 50 s of work, 0.01 s per sample interval
  r.run();
  EXPECT_EQ(r.passes, 2);  // the first row's 4-step probe, and the rest of that interval
  EXPECT_LE(r.longest, 1.0 + 1e-9);
  EXPECT_LE(r.segments, 5000 / 50);  // about 100 rows per segment, not one
  FixedRun capped{5000, 10, 1e-3};
  capped.max_rows = 7;  // memory allows 7 rows
  capped.run();
  EXPECT_GE(capped.segments, 5000 / 7);
}

TEST(SegmentPlan, AdaptiveRunsApproachALongIntervalInPassesThenMeasureIt) {
  SegmentPlan plan(2, 100, false, 1, 0, 0, false, 0, 1.0);
  SegmentWork w = plan.next();
  EXPECT_FALSE(w.partial);
  EXPECT_EQ(w.k1, 1);
  plan.take(w);
  plan.measured(w, 0.0, true);
  index_t attempts = 0;
  for (int pass = 0; pass < 5; ++pass) {
    w = plan.next();
    ASSERT_TRUE(w.partial);
    EXPECT_EQ(w.k0, 1);
    if (pass == 0) {
      EXPECT_EQ(w.limit.attempts, 4);  // the probe
    } else {
      EXPECT_LE(w.limit.attempts, 16 * attempts);
    }
    attempts = w.limit.attempts;
    plan.take(w);
    plan.measured(w, 1e-2 * static_cast<double>(w.limit.attempts), pass == 4);  // 0.01 s per trial step
  }
  EXPECT_EQ(attempts, 100);  // 1 s at 0.01 s per trial step
  w = plan.next();           // every instance is there: the sample is measured alone
  EXPECT_FALSE(w.partial);
  EXPECT_EQ(w.k0, 1);
  EXPECT_EQ(w.k1, 2);
}

TEST(SegmentPlan, ShardedRunsKeepTheirFixedRowsWhateverTheClockSays) {
  SegmentPlan plan(100, 8, true, 1000, 100000, 8, true, 0, 1.0);
  index_t row = 0;
  while (!plan.finished()) {
    const SegmentWork w = plan.next();
    ASSERT_FALSE(w.partial);
    ASSERT_EQ(w.k0, row);
    ASSERT_EQ(w.k1, std::min<index_t>(101, row + 8));
    plan.take(w);
    plan.measured(w, 1000.0, true);  // far beyond stop_seconds: no effect
    row = w.k1;
  }
}

// ensemble.lost_diverged: explicit Euler on the naive index reduction gains energy at
// every step (by 1 + (h omega)^2 per step for the linearised pendulum), so over 2000 steps
// of h = 0.1 its errors grow by orders of magnitude beyond the system's size.
TEST(Divergence, InstancesWhoseErrorsOutgrowTheBoundAreLostAsDiverged) {
  Study s;
  s.formulation = FormulationId::naive;
  s.method = MethodId::euler;
  s.size = 64;
  s.perturbation = 1e-3;
  s.h = 0.1;
  s.t_end = 200.0;
  s.sample_dt = 1.0;
  s.initial = {1.0, 0.0, 0.0, -0.5};  // H0 = p^2 / 2 = 0.125: the energy bound is lost_diverged itself
  Study off = s;
  off.lost_diverged = 0;
  const EnsembleResult free_run = run_study_cpu(off, resolve(off), ensemble_spec(off, 2));
  double worst = 0;
  for (const SampleStats& st : free_run.series) worst = std::max(worst, st.metric[int(MetricId::energy_error)].max);
  ASSERT_GT(worst, 1e7) << "the study no longer diverges: it tests nothing";
  EXPECT_EQ(free_run.lost[int(LostReason::diverged)], 0u);

  ASSERT_EQ(s.lost_diverged, 1e6);  // the documented default
  const EnsembleResult r = run_study_cpu(s, resolve(s), ensemble_spec(s, 2));
  EXPECT_EQ(r.lost[int(LostReason::diverged)], 64u);
  EXPECT_EQ(r.lost_total(), 64u);
  // What stays in the statistics is under the bound.
  for (const SampleStats& st : r.series) {
    if (st.metric[int(MetricId::energy_error)].count == 0) continue;
    EXPECT_LE(st.metric[int(MetricId::energy_error)].max, 1e6) << "t = " << st.t;
    EXPECT_LE(st.metric[int(MetricId::integration_error)].max, 1e6) << "t = " << st.t;
  }
}

TEST(Divergence, TheEnergyBoundScalesWithTheInitialEnergy) {
  Metrics<double> m{};
  m.v[int(MetricId::energy_error)] = 5e6;
  EXPECT_TRUE(diverged(m, 0.5, 1e6));
  EXPECT_FALSE(diverged(m, -10.0, 1e6));  // |H0| = 10: the bound is 1e7
  m.v[int(MetricId::energy_error)] = 0;
  m.v[int(MetricId::psi)] = 2e6;
  EXPECT_TRUE(diverged(m, 100.0, 1e6));  // residuals and state errors are not scaled
  m.v[int(MetricId::psi)] = NAN;
  EXPECT_FALSE(diverged(m, 1.0, 1e6));  // non-finite values are LostReason::non_finite's
}

}  // namespace
}  // namespace chens

namespace chens {
namespace {

// EnsembleResult::integration_seconds / measurement_seconds (issue 17: cost comparisons
// compare integrators): the two add up to the segments' share of the wall time, and a
// seven-atom chain's numerical reference (DOPRI5 at 1e-12 on the Hamilton-Dirac equations,
// about as costly as the RK4 integration itself) lands in measuring, not in integrating.
TEST(CostSplit, ANumericalReferenceIsMeasuringNotIntegrating) {
  Study s;
  s.model_kind = ModelKind::chain;
  set_key(s, "model.atoms=7");
  s.size = 1024;
  s.h = 0.01;
  s.t_end = 1.0;
  s.sample_dt = 0.05;
  s.perturbation = 1e-4;
  auto share = [](const Study& st) {
    const EnsembleResult r = run_study_cpu(st, resolve(st), ensemble_spec(st, 2));
    EXPECT_GT(r.integration_seconds, 0.0);
    EXPECT_GT(r.measurement_seconds, 0.0);
    EXPECT_LE(r.integration_seconds + r.measurement_seconds, r.wall_seconds * (1 + 1e-12));
    return r.measurement_seconds / (r.integration_seconds + r.measurement_seconds);
  };
  Study none = s;
  none.reference = "none";
  Study numerical = s;
  numerical.reference = "auto";
  const double without = share(none), with = share(numerical);
  EXPECT_GT(with, without + 0.1) << "measuring's share: " << without << " without the reference, " << with << " with it";
}

}  // namespace
}  // namespace chens
