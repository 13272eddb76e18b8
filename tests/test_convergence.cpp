// Empirical convergence orders of every integrator on every formulation, against the
// closed-form reference: the least-squares slope of log(error) over log(h) must be
// within 0.15 of the nominal order. Plus the adaptive DOPRI5 driver's behaviour.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <chens/ensemble/instance.hpp>
#include <chens/formulations/extended_hamiltonian.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/impetus_modified.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/formulations/total_hamiltonian.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "support/integrate.hpp"

namespace chens {
namespace {

using Model = Pendulum<double>;
using State = Model::State;

const Model kModel{1.3, 0.8, 2.0};
// A consistent state with a moderate swing: angle 0.2 rad from the bottom, angular velocity
// 0.3 rad/s. The order must be visible above round-off in double precision. Two effects
// push the asymptotic regime of DOPRI5 (whose fifth-order error constants are unusually
// small) below h ~ 1e-3, out of reach, for wide swings: the h^6 terms dominate, and the
// total-Hamiltonian equations amplify errors like exp(sigma t) with sigma growing with the
// momentum (001 §3, eq. 20). Measured: at angle 1.2, velocity 1.1, T = 2, fixed-step DOPRI5
// on the total formulation halves its error by 52x, 45x, 39x (slope 5.4) while a long-double
// run continues towards 32x only below h = 2/1024.
State initial() {
  const double th = 0.2, w = 0.3, l = kModel.l, pm = kModel.m * l * w;
  return {{l * std::sin(th), -l * std::cos(th), pm * std::cos(th), pm * std::sin(th)}};
}

template <class System, class Method>
double observed_order(const Method& method, const std::vector<int>& steps, double T, std::vector<double>* errors) {
  const System sys{kModel};
  const State z0 = initial();
  const auto ref = PendulumExact<double>::make(kModel, z0).eval(T);
  std::vector<double> hs, es;
  for (int n : steps) {
    const State z = sys.physical(test::integrate_fixed(sys, method, z0, T, n));
    double e2 = 0;
    for (int k = 0; k < 4; ++k) e2 += (z[k] - ref[k]) * (z[k] - ref[k]);
    hs.push_back(T / n);
    es.push_back(std::sqrt(e2));
  }
  if (errors) *errors = es;
  return test::loglog_slope(hs, es);
}

template <template <class> class F>
void check_all_methods(const char* name) {
  using Sys = F<Model>;
  const double T = 2.0;
  struct Row {
    const char* method;
    double nominal, observed;
    std::vector<double> errors;
  };
  std::vector<Row> rows;
  auto add = [&](const char* m, double p, auto method, std::vector<int> steps) {
    Row r{m, p, 0.0, {}};
    r.observed = observed_order<Sys>(method, steps, T, &r.errors);
    rows.push_back(r);
  };
  add("euler", 1, ExplicitRk<EulerTableau>{}, {200, 400, 800, 1600});
  add("rk2", 2, ExplicitRk<Rk2Tableau>{}, {50, 100, 200, 400});
  add("rk4", 4, ExplicitRk<Rk4Tableau>{}, {10, 20, 40, 80});
  add("dopri5 (fixed step)", 5, ExplicitRk<Dopri5Tableau>{}, {32, 64, 128, 256});
  add("midpoint", 2, ImplicitRk<Gauss1Tableau, double>{1e-15, 200}, {50, 100, 200, 400});
  add("gauss2", 4, ImplicitRk<Gauss2Tableau, double>{1e-15, 200}, {10, 20, 40, 80});
  for (const Row& r : rows) {
    std::string errs;
    for (double e : r.errors) errs.append(" ").append(::testing::PrintToString(e));
    // One documented exception (docs/numerics.md): on the modified impetus equations the
    // fifth-order error term of DOPRI5 nearly cancels, so down to round-off (errors 4e-15)
    // the error still falls like h^5.6 (halving ratios 51x, 45x). There we assert the
    // bracket an h^5 + h^6 expansion allows: 4.85 <= order <= 6.15.
    const bool h6_dominated = std::string(name) == "impetus-modified" && r.nominal == 5;
    if (h6_dominated) {
      EXPECT_GE(r.observed, r.nominal - 0.15) << name << " + " << r.method << ": errors" << errs;
      EXPECT_LE(r.observed, r.nominal + 1.15) << name << " + " << r.method << ": errors" << errs;
      continue;
    }
    EXPECT_NEAR(r.observed, r.nominal, 0.15) << name << " + " << r.method << ": errors" << errs;
    if (std::getenv("CHENS_TEST_VERBOSE"))
      std::printf("%s + %s: order %.3f, errors%s\n", name, r.method, r.observed, errs.c_str());
  }
}

TEST(ConvergenceOrder, Naive) { check_all_methods<Naive>("naive"); }
TEST(ConvergenceOrder, TotalHamiltonian) { check_all_methods<TotalHamiltonian>("total"); }
TEST(ConvergenceOrder, ExtendedHamiltonian) { check_all_methods<ExtendedHamiltonian>("extended"); }
TEST(ConvergenceOrder, HamiltonDirac) { check_all_methods<HamiltonDirac>("dirac"); }
TEST(ConvergenceOrder, ImpetusStriction) { check_all_methods<ImpetusStriction>("impetus"); }
TEST(ConvergenceOrder, ImpetusModified) { check_all_methods<ImpetusModified>("impetus-modified"); }

// The adaptive driver: error falls with the tolerance, every sample time is hit exactly,
// and the embedded controller rejects steps when the first trial step is far too large.
TEST(AdaptiveDopri5, ErrorFollowsToleranceAndSampleTimesAreExact) {
  const HamiltonDirac<Model> sys{kModel};
  double previous = 1.0;
  for (double tol : {1e-5, 1e-7, 1e-9, 1e-11}) {
    RunParams<double> rp;
    rp.fixed_step = false;
    rp.h = 0.5;  // deliberately too large a first step
    rp.t_end = 10.0;
    rp.sample_dt = 0.7;  // not commensurate with any step size
    rp.samples = 15;     // 0.7 * 14 = 9.8, then t_end
    rp.rtol = tol;
    rp.atol = tol;
    const Dopri5<double> method{rp.rtol, rp.atol};
    auto in = make_instance<HamiltonDirac<Model>, PendulumExact<double>>(sys, initial(), 0.0, 0, 0, rp);
    double worst = 0;
    for (index_t k = 1; k <= rp.samples; ++k) {
      advance_to_sample(sys, method, rp, in, k);
      ASSERT_EQ(in.lost, 0);
      ASSERT_EQ(in.t, k < rp.samples ? k * 0.7 : 10.0) << "sample " << k;
      Metrics<double> m;
      ASSERT_TRUE(measure_instance(sys, rp, in, k, m));
      worst = std::max(worst, m.v[0]);
    }
    EXPECT_LT(worst, 200 * tol) << "tol " << tol;
    EXPECT_LT(worst, previous) << "tol " << tol;
    previous = worst;
    if (tol == 1e-11) {
      EXPECT_GT(in.c.rejected_steps, 0u);
    }
    EXPECT_EQ(in.c.rhs_evaluations, 6 * (in.c.steps + in.c.rejected_steps) + rp.samples);
  }
}

}  // namespace
}  // namespace chens
