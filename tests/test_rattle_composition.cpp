// RATTLE's symmetric compositions (integrators/rattle_composition.hpp, issue 44) against
// independent numbers:
//  - the schemes' coefficients: symmetric, summing to 1, and the order conditions of a
//    composition of a symmetric method of order 2 (HLW §V.3: sum gamma^3 = 0 for order 4,
//    and sum gamma^5 = 0 for order 6 and 8), to the published digits;
//  - a one-stage scheme is RATTLE bit for bit;
//  - convergence orders 4, 4, 6 and 8 on the pendulum against its closed-form solution
//    (reference/pendulum_exact.hpp, Jacobi elliptic functions): the least-squares slope of
//    the error over h within 0.3 of the order;
//  - on the manifold: |phi| within the Newton tolerance and |psi| to rounding after every step;
//  - symplectic: the step's derivative by dual numbers (what output.wedge uses) is the finite
//    difference of the step map, and omega of two tangents is kept to rounding over 1000 steps;
//  - the energy error bounded without drift over 10^6 steps.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <chens/formulations/constrained.hpp>
#include <chens/geometry/tangent_system.hpp>
#include <chens/integrators/rattle.hpp>
#include <chens/integrators/rattle_composition.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "support/integrate.hpp"
#include "support/random_states.hpp"
#include "support/tangent_derivative.hpp"
#include "support/wide_swing.hpp"

namespace chens {
namespace {

using Model = Pendulum<double>;
using State = Model::State;
using System = Constrained<Model>;

constexpr double rattle_tol = 1e-15;

RattleComposition<double> composition(const CompositionScheme& scheme) {
  return RattleComposition<double>{Rattle<double>{rattle_tol, 100}, scheme};
}

struct Named {
  const char* name;
  const CompositionScheme* scheme;
};
const Named kSchemes[] = {{"rattle4 (Yoshida)", &yoshida3_order4},
                          {"rattle4-suzuki", &suzuki5_order4},
                          {"rattle6 (Kahan-Li)", &kahan_li9_order6},
                          {"rattle8 (Kahan-Li)", &kahan_li17_order8}};

TEST(RattleComposition, CoefficientsAreSymmetricSumToOneAndMeetTheOrderConditions) {
  for (const Named& n : kSchemes) {
    const CompositionScheme& s = *n.scheme;
    // In long double, from the coefficients as doubles: each is the published value rounded
    // (relative error <= u/2), so a sum of k-th powers is off by at most about
    // k u/2 sum |gamma|^k; the bound allows 4 s u sum |gamma|^k.
    long double sum = 0, cubes = 0, fifths = 0, abs1 = 0, abs3 = 0, abs5 = 0;
    for (int i = 0; i < s.stages; ++i) {
      EXPECT_EQ(s.gamma[i], s.gamma[s.stages - 1 - i]) << n.name << ", stage " << i;
      const long double g = s.gamma[i], a = std::fabs(g);
      sum += g;
      cubes += g * g * g;
      fifths += g * g * g * g * g;
      abs1 += a;
      abs3 += a * a * a;
      abs5 += a * a * a * a * a;
    }
    const double u = 0x1p-53, bound = 4.0 * s.stages * u;
    EXPECT_NEAR(static_cast<double>(sum), 1.0, bound * static_cast<double>(abs1)) << n.name;
    // Order 4 needs sum gamma^3 = 0; orders 6 and 8 also sum gamma^5 = 0 (HLW §V.3.2, the
    // conditions of a symmetric composition of a symmetric method; their remaining ones are
    // what the convergence test below measures).
    EXPECT_NEAR(static_cast<double>(cubes), 0.0, bound * static_cast<double>(abs3)) << n.name;
    if (s.order >= 6) {
      EXPECT_NEAR(static_cast<double>(fifths), 0.0, bound * static_cast<double>(abs5)) << n.name;
    }
  }
}

TEST(RattleComposition, OneStageIsRattleBitForBit) {
  const System sys{test::wide_swing_pendulum};
  const Rattle<double> rattle{rattle_tol, 100};
  const RattleComposition<double> one{rattle, CompositionScheme{}};
  State a = test::wide_swing_start(), b = test::wide_swing_start();
  for (int i = 0; i < 200; ++i) {
    State an, bn;
    const StepStatus sa = rattle.step(sys, a, 0.05, an);
    const StepStatus sb = one.step(sys, b, 0.05, bn);
    EXPECT_EQ(sa.iterations, sb.iterations);
    EXPECT_EQ(sa.rhs_evals, sb.rhs_evals);
    for (int c = 0; c < 4; ++c) ASSERT_EQ(an[c], bn[c]) << "step " << i << ", component " << c;
    a = an;
    b = bn;
  }
}

TEST(RattleComposition, ConvergesAtItsOrderToTheClosedFormSolution) {
  const System sys{test::wide_swing_pendulum};
  const double T = 2.0;
  const State z0 = test::wide_swing_start();
  const auto ref = PendulumExact<double>::make(test::wide_swing_pendulum, z0).eval(T);
  // Step counts in each scheme's asymptotic range, above round-off: the errors run from
  // about 1e-6 down to 1e-11 (printed).
  const std::vector<int> steps[] = {{40, 80, 160, 320}, {20, 40, 80, 160}, {10, 20, 40, 80}, {8, 12, 16, 24}};
  for (int k = 0; k < 4; ++k) {
    const Named& n = kSchemes[k];
    std::vector<double> hs, es;
    for (int m : steps[k]) {
      const State z = test::integrate_fixed(sys, composition(*n.scheme), z0, T, m);
      double e2 = 0;
      for (int c = 0; c < 4; ++c) e2 += (z[c] - ref[c]) * (z[c] - ref[c]);
      hs.push_back(T / m);
      es.push_back(std::sqrt(e2));
    }
    const double slope = test::loglog_slope(hs, es);
    std::printf("[ order    ] %-20s observed %.2f (nominal %d); errors", n.name, slope, n.scheme->order);
    for (double e : es) std::printf(" %.3e", e);
    std::printf("\n");
    EXPECT_NEAR(slope, n.scheme->order, 0.3) << n.name;
  }
}

TEST(RattleComposition, StaysOnTheManifold) {
  const System sys{test::wide_swing_pendulum};
  for (const Named& n : kSchemes) {
    State z = test::wide_swing_start();
    const auto method = composition(*n.scheme);
    for (int i = 0; i < 500; ++i) {
      State zn;
      const StepStatus st = method.step(sys, z, 0.1, zn);
      ASSERT_TRUE(st.finite && st.converged) << n.name << ", step " << i;
      EXPECT_EQ(st.rhs_evals, 2 * n.scheme->stages);
      z = zn;
      const auto q = Model::q_of(z);
      EXPECT_LE(std::fabs(test::wide_swing_pendulum.phi(q)[0]), rattle_tol) << n.name << ", step " << i;
      EXPECT_LE(std::fabs(test::wide_swing_pendulum.psi(z)[0]), 1e-14) << n.name << ", step " << i;
    }
  }
}

TEST(RattleComposition, IsSymplectic) {
  using T = TangentSystem<System>;
  const System sys{test::wide_swing_pendulum};
  const T ts = T::of(sys);
  const std::uint64_t seed = test::default_seed + 44;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const Named& n : kSchemes) {
    const auto method = composition(*n.scheme);
    // The dual-number derivative of the step is the central difference of the step map.
    const State z = test::consistent_state(test::wide_swing_pendulum, rng);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const State v1{{u(rng), u(rng), u(rng), u(rng)}}, v2{{u(rng), u(rng), u(rng), u(rng)}};
    EXPECT_LT(test::tangent_vs_fd(sys, method, z, v1, v2, 0.05), 1e-7) << n.name;
    // omega of the consistent tangents (004 §3.2) is 1 and stays 1 to rounding.
    auto W = ts.with_initial_tangents(test::wide_swing_start());
    const TangentStepper<RattleComposition<double>> stepper{method};
    for (int i = 0; i < 1000; ++i) {
      typename T::State Wn;
      ASSERT_TRUE(stepper.step(ts, W, 0.05, Wn).finite) << n.name;
      W = Wn;
    }
    EXPECT_NEAR(T::wedge(W), 1.0, 1e-11) << n.name;
  }
}

// 10^6 steps of the Yoshida composition at h = 0.05 (t = 5e4, about 1.4e4 periods): the
// energy error of a symplectic method oscillates and stays bounded; a drift would make the
// last tenth's largest error exceed the first tenth's several times.
TEST(RattleComposition, EnergyErrorStaysBoundedOverAMillionSteps) {
  const int steps = 1000000;
  const test::EnergyTenths e = test::energy_error_tenths(System{test::wide_swing_pendulum}, composition(yoshida3_order4),
                                                         test::wide_swing_start(), 0.05, steps);
  ASSERT_EQ(e.steps_done, steps);
  std::printf("[ energy   ] rattle4, 1e6 steps of 0.05: max |H - H0| first tenth %.3e, last tenth %.3e\n", e.first, e.last);
  EXPECT_GT(e.first, 0.0);
  EXPECT_LT(e.last, 1.5 * e.first);
}

}  // namespace
}  // namespace chens
