// The high-order embedded pairs' steps and controllers (integrators/dop853.hpp, vern9.hpp;
// issue 44, item 3) against independent numbers: Verner's coefficients against the order
// conditions; each pair's order at fixed step sizes, its embedded estimate's order, and its
// adaptive runs at tight tolerances against the flow, on the pendulum's Hamilton-Dirac
// equations, where the flow is classical RK4 with 2^16 steps per unit time: its truncation
// error is negligible, its rounding is not (Vern9's errors at 16 to 64 steps to t = 2 level off
// at 2.4e-14 to 2.8e-14), so what is compared with it stays above 1e-13. And the cost the issue
// asks about: right-hand sides per unit of accuracy against DOPRI5's and each other's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/integrators/dop853.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/ensemble/passage_location.hpp>
#include <chens/integrators/vern9.hpp>
#include <chens/models/pendulum.hpp>

#include "support/adaptive_run.hpp"
#include "support/rotation_flow.hpp"

namespace chens {
namespace {

using Sys = test::RotationSystem;
using State = Sys::State;

const Sys& sys = test::rotation_system;
const State& z0 = test::rotation_start;
State flow(double t) { return test::rotation_flow(t); }

double distance(const State& a, const State& b) {
  double s = 0;
  for (int c = 0; c < State::size; ++c) s += (a[c] - b[c]) * (a[c] - b[c]);
  return std::sqrt(s);
}

// The high-order solution of n fixed steps of size T / n (the error estimate ignored).
template <class Method>
State fixed_steps(double T, int n) {
  const Method m{1e-6, 1e-9};
  State z = z0, zn, k, kn;
  sys.rhs(z, k);
  for (int i = 0; i < n; ++i) {
    m.attempt(sys, z, k, T / n, zn, kn);
    z = zn;
    k = kn;
  }
  return z;
}

// The global error's order as the step halves, n, 2n, 4n steps to T, within [lo, hi].
template <class Method>
void expect_order(double T, int n, double lo, double hi) {
  const State exact = flow(T);
  double previous = 0;
  for (int steps : {n, 2 * n, 4 * n}) {
    const double e = distance(fixed_steps<Method>(T, steps), exact);
    if (previous > 0) {
      const double order = std::log2(previous / e);
      EXPECT_GT(order, lo) << Method::Tableau::name << ", " << steps << " steps: " << previous << " -> " << e;
      EXPECT_LT(order, hi) << Method::Tableau::name << ", " << steps << " steps: " << previous << " -> " << e;
    }
    previous = e;
  }
}

// The rotation's right-hand side, counted.
struct CountingRotation {
  using State = Sys::State;
  using Real = double;
  int* calls;
  void rhs(const State& z, State& dz) const {
    ++*calls;
    sys.rhs(z, dz);
  }
};

// One attempt of each pair evaluates the right-hand sides its tableau spends, and hands back
// f(z_new), bit for bit, for the next attempt: DOPRI5 6 (7 stages, the 7th at the solution
// itself, first same as last: dopri5.f adds 6 to NFCN per step), DOP853 12 (dop853.f's 11
// stages after the first, NFCN + 11, and f at the solution, which the code takes on accepted
// steps only and an attempt here always), Vern9 16 (15 stages after the first and f at the
// solution). The one stepper (integrators/embedded_pair.hpp) serves all three.
template <class Method>
void expect_attempt_cost(int authors_count) {
  int calls = 0;
  const CountingRotation counted{&calls};
  const Method m{1e-8, 1e-8};
  State k, z_new, k_new, f_new;
  sys.rhs(z0, k);
  m.attempt(counted, z0, k, 0.05, z_new, k_new);
  EXPECT_EQ(calls, authors_count) << Method::Tableau::name;
  EXPECT_EQ(Method::rhs_per_attempt, authors_count) << Method::Tableau::name;
  sys.rhs(z_new, f_new);
  for (int c = 0; c < State::size; ++c) EXPECT_EQ(k_new[c], f_new[c]) << Method::Tableau::name << ", component " << c;
  // The counted system steps as the plain one does.
  State z_plain, k_plain;
  m.attempt(sys, z0, k, 0.05, z_plain, k_plain);
  for (int c = 0; c < State::size; ++c) EXPECT_EQ(z_new[c], z_plain[c]) << Method::Tableau::name;
}

TEST(EmbeddedPairs, AnAttemptCostsWhatItsAuthorsCodeCountsAndHandsBackFAtTheSolution) {
  expect_attempt_cost<Dopri5<double>>(6);
  expect_attempt_cost<Dop853<double>>(12);
  expect_attempt_cost<Vern9<double>>(16);
}

TEST(Dop853, FixedStepsConvergeAtOrderEight) {
  // Measured: 6.73e-10, 3.41e-12, 1.20e-14 (orders 7.6, 8.2); at 5 steps (h = 0.4) the
  // ratio is still pre-asymptotic (order 6.8).
  expect_order<Dop853<double>>(2.0, 10, 7.5, 8.6);
}

// Verner's coefficients (as transcribed) against what a 9(8) pair must satisfy, in double:
// each row of a sums to its node; the 9th-order weights satisfy the quadrature conditions
// sum_i b_i c_i^(q-1) = 1/q for q = 1..9 and the tall trees b^T A^m c^k = k!/(k+m+1)! of
// every order up to 9; the 8th-order weights b + d satisfy them to order 8 and miss the
// quadrature condition of order 9 (by 1.38e-5, computed to 40 digits), so that d estimates
// an 8th-order error. A misprinted digit of any coefficient above ~1e-13 fails one of these.
TEST(Vern9, CoefficientsSatisfyTheOrderConditions) {
  using T = Vern9Tableau;
  constexpr int Stages = T::stages;
  for (int i = 0; i < Stages; ++i) {
    double row = 0, size = 0;  // the row's rounding grows with its coefficients (up to 36)
    for (int j = 0; j < i; ++j) {
      row += T::a(i, j);
      size += std::fabs(T::a(i, j));
    }
    EXPECT_NEAR(row, T::c(i), 4e-16 * (1 + size)) << "row " << i + 1;
  }
  // b^T A^m (c^k): A^m applied to the vector c^k.
  auto tall_tree = [&](bool embedded, int m, int k) {
    double v[Stages];
    for (int i = 0; i < Stages; ++i) v[i] = std::pow(T::c(i), k);
    for (int r = 0; r < m; ++r) {
      double w[Stages];
      for (int i = 0; i < Stages; ++i) {
        w[i] = 0;
        for (int j = 0; j < i; ++j) w[i] += T::a(i, j) * v[j];
      }
      for (int i = 0; i < Stages; ++i) v[i] = w[i];
    }
    double s = 0;
    for (int i = 0; i < Stages; ++i) s += (T::b(i) + (embedded ? T::d(i) : 0.0)) * v[i];
    return s;
  };
  // k! / (k + m + 1)!
  auto exact = [](int m, int k) {
    double x = 1;
    for (int t = k + 1; t <= k + m + 1; ++t) x /= t;
    return x;
  };
  for (int order = 1; order <= 9; ++order)
    for (int m = 0; m < order; ++m) {
      const int k = order - 1 - m;
      EXPECT_NEAR(tall_tree(false, m, k), exact(m, k), 1e-14) << "9th-order weights, b^T A^" << m << " c^" << k;
      if (order <= 8) {
        EXPECT_NEAR(tall_tree(true, m, k), exact(m, k), 1e-14) << "8th-order weights, b^T A^" << m << " c^" << k;
      }
    }
  EXPECT_NEAR(tall_tree(true, 0, 8) - 1.0 / 9.0, 1.3764402558885942e-05, 1e-12) << "the 8th-order weights' order-9 defect";
}

// Verner optimised the pair's principal error coefficients to be small, so at step sizes
// whose errors stand above rounding the global error falls faster than h^9: measured 2.55e-5,
// 1.32e-8, 5.40e-12 at 16, 32, 64 steps to t = 10 (orders 10.9 and 11.3; in long double 9.9
// from 80 to 160 steps, where it tends to 9 and rounding takes over). So the test asks for at
// least 9 and at most 12.
TEST(Vern9, FixedStepsConvergeAtOrderNineOrFaster) { expect_order<Vern9<double>>(10.0, 16, 8.8, 12.0); }

// The embedded estimate is an 8th-order method's local error: |h sum_i d_i k_i| falls at
// least as h^9 as one step's h halves (measured from h = 0.4 to 0.1: orders 9.9 and 10.2, the
// h^10 term still weighing, as above).
TEST(Vern9, ItsErrorEstimateIsOfOrderNinePerStep) {
  using T = Vern9Tableau;
  State k1;
  sys.rhs(z0, k1);
  double previous = 0;
  for (double h : {0.4, 0.2, 0.1}) {
    State k[T::stages];
    k[0] = k1;
    explicit_stages<T>(sys, z0, h, k);
    const State e = weighted_stages(State::zero(), h, k, [](int i) { return T::d(i); });
    double norm = 0;
    for (int c = 0; c < State::size; ++c) norm += e[c] * e[c];
    norm = std::sqrt(norm);
    if (previous > 0) {
      const double order = std::log2(previous / norm);
      EXPECT_GT(order, 8.8) << "h = " << h << ": " << previous << " -> " << norm;
      EXPECT_LT(order, 12.0) << "h = " << h << ": " << previous << " -> " << norm;
    }
    previous = norm;
  }
}

// An adaptive run to T as the per-instance driver takes it (no step past T); its right-hand
// sides counted: Method::rhs_per_attempt per trial step, and the first.
template <class Method>
State adaptive(const Method& m, double T, std::uint64_t& rhs) {
  test::AdaptiveRunStats st;
  const State z = test::adaptive_run(m, sys, z0, T, 0.01, st);
  rhs = static_cast<std::uint64_t>(st.rhs);
  return z;
}

TEST(Dop853, TightTolerancesReachTheFlowAndCostLessThanDopri5) {
  const double T = 10.0;
  const State exact = flow(T);
  for (double tol : {1e-10, 1e-12}) {
    std::uint64_t rhs8 = 0, rhs5 = 0;
    const double e8 = distance(adaptive(Dop853<double>{tol, tol}, T, rhs8), exact);
    const double e5 = distance(adaptive(Dopri5<double>{tol, tol}, T, rhs5), exact);
    // Measured: DOP853 3.06e-10 with 841 right-hand sides and 9.91e-13 with 1405, DOPRI5
    // 2.73e-9 with 2107 and 2.67e-11 with 5275. Tolerance proportionality: the global error
    // a modest multiple of the tolerance.
    EXPECT_LT(e8, 100 * tol) << "tol " << tol;
    // Fewer right-hand sides than DOPRI5 for an error no larger than DOPRI5's.
    EXPECT_LT(rhs8, rhs5) << "tol " << tol << ": errors " << e8 << " and " << e5;
    EXPECT_LT(e8, 10 * e5 + 1e-15) << "tol " << tol;
  }
}

// Measured (T = 10): at tol 1e-10 Vern9 8.04e-11 with 849 right-hand sides, DOP853 3.06e-10
// with 841; at 1e-12 Vern9 3.36e-13 with 1185, DOP853 9.91e-13 with 1405 (at 1e-14 both stop
// at the flow's rounding, 1.2e-13 and 1.3e-13, with 1889 and 2449). So Vern9 reaches a smaller
// error for as many right-hand sides at 1e-10, and a smaller one for fewer at 1e-12.
TEST(Vern9, TightTolerancesReachTheFlowAndCostLessThanDop853) {
  const double T = 10.0;
  const State exact = flow(T);
  for (double tol : {1e-10, 1e-12}) {
    std::uint64_t rhs9 = 0, rhs8 = 0;
    const double e9 = distance(adaptive(Vern9<double>{tol, tol}, T, rhs9), exact);
    const double e8 = distance(adaptive(Dop853<double>{tol, tol}, T, rhs8), exact);
    EXPECT_LT(e9, 100 * tol) << "tol " << tol;
    EXPECT_LT(e9, e8) << "tol " << tol;
    if (tol < 1e-11) {
      EXPECT_LT(rhs9, rhs8) << "tol " << tol << ": errors " << e9 << " and " << e8;
    }
  }
}

// The continuous extension's three stages sit at the nodes Hairer's code gives them (C14 = 0.1,
// C15 = 0.2, C16 = 7/9): each row of a_dense sums to its node, as every explicit stage's
// does (a check on the 24 coefficients as typed in, independent of the D weights below).
TEST(Dop853, ItsDenseStagesSitAtTheCodesNodes) {
  using T = Dop853Tableau;
  const double nodes[3] = {0.1, 0.2, 7.0 / 9.0};
  for (int i = T::stages + 1; i < T::dense_stages; ++i) {
    long double sum = 0, magnitude = 0;
    for (int j = 0; j < i; ++j) {
      sum += T::a_dense(i, j);
      magnitude += std::fabs(T::a_dense(i, j));
    }
    // Each coefficient is its 30 digits rounded to double: off by up to half an ulp of itself.
    EXPECT_NEAR(static_cast<double>(sum), nodes[i - T::stages - 1], static_cast<double>(magnitude) * 0x1p-53)
        << "stage " << i + 1;
  }
}

// Between the ends of one step of size h from z0, the interpolant (ensemble/passage_location.hpp)
// with DOP853's four terms (Dop853::dense_correction) against the flow: its error falls as
// h^8 (order 7 continuous extension: local error O(h^8)), where the cubic Hermite of the same
// ends falls as h^4. Measured at theta = 0.3 and 0.7, h = 0.4, 0.2, 0.1: see the messages.
TEST(Dop853, ItsContinuousExtensionIsOfOrderSevenBetweenSteps) {
  const Dop853<double> m{1e-10, 1e-10};
  State k1;
  sys.rhs(z0, k1);
  for (double theta : {0.3, 0.7}) {
    double previous_dense = 0, previous_hermite = 0;
    for (double h : {0.4, 0.2, 0.1}) {
      State z1, f1;
      m.attempt(sys, z0, k1, h, z1, f1);
      StepInterpolant<Sys, 4> it{z0, z1, {}, {}, {}, 0};
      for (int c = 0; c < State::size; ++c) {
        it.hf0[c] = h * k1[c];
        it.hf1[c] = h * f1[c];
      }
      const double hermite = distance(it.at(theta), flow(theta * h));
      m.dense_correction(sys, z0, k1, h, it.correction);
      it.terms = 4;
      const double dense = distance(it.at(theta), flow(theta * h));
      if (previous_dense > 0) {
        const double order = std::log2(previous_dense / dense), hermite_order = std::log2(previous_hermite / hermite);
        EXPECT_GT(order, 7.4) << "theta " << theta << ", h " << h << ": " << previous_dense << " -> " << dense;
        EXPECT_LT(order, 9.5) << "theta " << theta << ", h " << h << ": " << previous_dense << " -> " << dense;
        EXPECT_LT(hermite_order, 5.5) << "theta " << theta << ", h " << h;
        EXPECT_LT(dense, 1e-3 * hermite) << "theta " << theta << ", h " << h;
      }
      previous_dense = dense;
      previous_hermite = hermite;
    }
  }
}

}  // namespace
}  // namespace chens
