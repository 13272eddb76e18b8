// Float runs (integrator.precision = "float", docs/numerics.md "Float runs"): the double
// code instantiated with Real = float, diagnostics and the closed-form reference in double.
// Judged against the double runs and against the rounding bounds of float arithmetic: at
// large h the error is RK4's truncation error, the same in both precisions; at small h
// float rounding sets a floor that grows with the number of steps.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <chens/diagnostics/metrics.hpp>

#include "dispatch/run_study.hpp"
#include "study/study.hpp"

namespace chens {
namespace {

Study rk4_study(double h, Precision precision) {
  Study s;
  s.formulation = FormulationId::dirac;
  s.method = MethodId::rk4;
  s.h = h;
  s.t_end = 10.0;
  s.sample_dt = 10.0;
  s.size = 64;
  s.seed = 11;
  s.perturbation = 1e-4;
  s.precision = precision;
  return s;
}

double final_max(const EnsembleResult& r, MetricId m) { return r.series.back().metric[int(m)].max; }

TEST(FloatRuns, TruncationErrorAtLargeStepsAndARoundingFloorAtSmallOnes) {
  const std::vector<double> hs = {0.2, 0.1, 0.05, 0.025, 0.0125, 0.00625, 0.003125, 0.0015625};
  std::vector<double> e_d, e_f, en_d, en_f;
  std::printf("[ float    ] pendulum Dirac + RK4, t = 10, 64 instances: max integration error / max energy error\n");
  std::printf("[ float    ] %10s %8s %12s %12s %12s %12s\n", "h", "steps", "double", "float", "double H", "float H");
  for (const double h : hs) {
    for (const Precision precision : {Precision::double_precision, Precision::single_precision}) {
      const char* p = precision_name(precision);
      const Study s = rk4_study(h, precision);
      const RunParams<double> rp = resolve(s);
      const EnsembleResult r = run_study_cpu(s, rp, ensemble_spec(s, 2));
      ASSERT_EQ(r.lost_total(), 0u) << p << " h = " << h;
      ASSERT_EQ(r.series.back().metric[0].count, 64u);
      (std::strcmp(p, "float") == 0 ? e_f : e_d).push_back(final_max(r, MetricId::integration_error));
      (std::strcmp(p, "float") == 0 ? en_f : en_d).push_back(final_max(r, MetricId::energy_error));
    }
    std::printf("[ float    ] %10g %8.0f %12.3e %12.3e %12.3e %12.3e\n", h, 10.0 / h, e_d.back(), e_f.back(), en_d.back(),
                en_f.back());
  }
  // A-priori size of float rounding: at most about one rounding of the state per step,
  // eps_f |z| with |z| <= sqrt(1 + 2 (H + 1)) = sqrt(7) on this orbit (H = 2), carried to
  // t = 10 by the flow, which shears phase errors at most ~13-fold here (t |d omega / dE|
  // |grad H|); N steps give at most N eps_f sqrt(7) 13.
  const double eps_f = 1.1920928955078125e-7;
  const double bound_per_step = eps_f * std::sqrt(7.0) * 13.0;
  // h = 0.2 (50 steps): that bound is 2e-4 relative to RK4's truncation error 0.105, so
  // both precisions must see the same error to 1 %.
  EXPECT_NEAR(e_f[0] / e_d[0], 1.0, 0.01);
  // Every h: float and double differ by rounding only, within the bound.
  for (std::size_t i = 0; i < hs.size(); ++i)
    EXPECT_LE(std::abs(e_f[i] - e_d[i]), (10.0 / hs[i]) * bound_per_step) << "h = " << hs[i];
  // Smallest h (6400 steps): double is still truncation-limited (3e-11), float sits on its
  // rounding floor, far above double's error and above one unit roundoff.
  EXPECT_GT(e_f.back(), 100 * e_d.back());
  EXPECT_GT(e_f.back(), eps_f);
  // The floor grows with the number of steps: the float error is smallest at an
  // intermediate h, not at the smallest.
  std::size_t best = 0;
  for (std::size_t i = 1; i < hs.size(); ++i)
    if (e_f[i] < e_f[best]) best = i;
  EXPECT_GT(best, 1u);
  EXPECT_LT(best, hs.size() - 1);
}

TEST(FloatRuns, BitwiseIdenticalForAnyThreadCountOnBothModels) {
  for (const char* model : {"pendulum", "chain"}) {
    Study s = rk4_study(0.01, Precision::single_precision);
    s.t_end = 2.0;
    s.sample_dt = 0.5;
    s.size = 200;
    s.momentum = true;
    s.projection_tol = 1e-5;
    if (std::strcmp(model, "chain") == 0) {
      s.model_kind = ModelKind::chain;
      s.reference = "none";
    }
    const RunParams<double> rp = resolve(s);
    EnsembleSpec one = ensemble_spec(s, 1), two = ensemble_spec(s, 2);
    one.keep_instances = two.keep_instances = 200;
    const EnsembleResult a = run_study_cpu(s, rp, one), b = run_study_cpu(s, rp, two);
    ASSERT_EQ(a.series.size(), b.series.size());
    for (std::size_t k = 0; k < a.series.size(); ++k)
      for (int m = 0; m < metric_count; ++m) {
        EXPECT_EQ(std::memcmp(&a.series[k].metric[m], &b.series[k].metric[m], sizeof(Accumulator)), 0)
            << model << " sample " << k;
        for (int q = 0; q < quantile_count; ++q) EXPECT_EQ(a.series[k].quantile[m][q], b.series[k].quantile[m][q]) << model;
      }
    EXPECT_EQ(a.kept.final_state, b.kept.final_state) << model;
    // The float run is a float run: close to the double one, not equal to it.
    Study sd = s;
    sd.precision = Precision::double_precision;
    EnsembleSpec d = ensemble_spec(sd, 2);
    d.keep_instances = 200;
    const EnsembleResult c = run_study_cpu(sd, resolve(sd), d);
    double worst = 0;
    for (std::size_t i = 0; i < c.kept.final_state.size(); ++i)
      worst =
          std::max(worst, std::abs(a.kept.final_state[i] - c.kept.final_state[i]) / (1 + std::abs(c.kept.final_state[i])));
    EXPECT_GT(worst, 1e-9) << model;
    EXPECT_LT(worst, 1e-4) << model;
    std::printf("[ float    ] %s: float vs double final states differ by at most %.3g (relative)\n", model, worst);
  }
}

}  // namespace
}  // namespace chens
