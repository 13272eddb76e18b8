// DOP853's step and controller (integrators/dop853.hpp, issue 44) against independent numbers:
// its order 8 at fixed step sizes, and its adaptive runs at tight tolerances against the flow,
// on the pendulum's Hamilton-Dirac equations; the flow is classical RK4 with 2^16 steps per
// unit time, whose own error (~1e-17 here) is far below what is measured. And the cost the
// issue asks about: right-hand sides per unit of accuracy against DOPRI5's at the same
// tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/integrators/dop853.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/pendulum.hpp>

namespace chens {
namespace {

using Sys = HamiltonDirac<Pendulum<double>>;
using State = Sys::State;

const Sys sys{Pendulum<double>{1.0, 1.0, 1.0}};
const State z0{{0.6, -0.8, 1.2, 0.9}};  // on the circle, q.p = 0: a rotation

State flow(double t) {
  const int n = static_cast<int>(std::lround(t * 65536));
  State z = z0, zn;
  const ExplicitRk<Rk4Tableau> rk4{};
  for (int i = 0; i < n; ++i) {
    rk4.step(sys, z, t / n, zn);
    z = zn;
  }
  return z;
}

double distance(const State& a, const State& b) {
  double s = 0;
  for (int c = 0; c < State::size; ++c) s += (a[c] - b[c]) * (a[c] - b[c]);
  return std::sqrt(s);
}

// The 8th-order solution of n fixed steps of size T / n (the error estimate ignored).
State fixed_steps(double T, int n) {
  const Dop853<double> m{1e-6, 1e-9};
  State z = z0, zn, k, kn;
  sys.rhs(z, k);
  for (int i = 0; i < n; ++i) {
    m.attempt(sys, z, k, T / n, zn, kn);
    z = zn;
    k = kn;
  }
  return z;
}

TEST(Dop853, FixedStepsConvergeAtOrderEight) {
  const double T = 2.0;
  const State exact = flow(T);
  double previous = 0;
  // Measured: 6.73e-10, 3.41e-12, 1.20e-14 (orders 7.6, 8.2); at 5 steps (h = 0.4) the
  // ratio is still pre-asymptotic (order 6.8).
  for (int n : {10, 20, 40}) {
    const double e = distance(fixed_steps(T, n), exact);
    if (previous > 0) {
      const double order = std::log2(previous / e);
      EXPECT_GT(order, 7.5) << n << " steps: " << previous << " -> " << e;
      EXPECT_LT(order, 8.6) << n << " steps: " << previous << " -> " << e;
    }
    previous = e;
  }
}

// An adaptive run to T as the per-instance driver takes it (no step past T); its right-hand
// sides counted: per_attempt per trial step (DOPRI5's 6, DOP853's 12), and the first.
template <class Method>
State adaptive(const Method& m, double T, int per_attempt, std::uint64_t& rhs) {
  Dopri5Controller<double> ctl;
  State z = z0, zn, k, kn;
  sys.rhs(z, k);
  rhs = 1;
  double t = 0, h = 0.01;
  while (t < T) {
    const bool last = t + 1.01 * h >= T;
    const double step = last ? T - t : h;
    const double err = m.attempt(sys, z, k, step, zn, kn);
    rhs += static_cast<std::uint64_t>(per_attempt);
    if (err <= 1.0) {
      t = last ? T : t + step;
      z = zn;
      k = kn;
      h = m.next_step(ctl, err, step, true);
    } else {
      h = m.next_step(ctl, err, step, false);
    }
  }
  return z;
}

TEST(Dop853, TightTolerancesReachTheFlowAndCostLessThanDopri5) {
  const double T = 10.0;
  const State exact = flow(T);
  for (double tol : {1e-10, 1e-12}) {
    std::uint64_t rhs8 = 0, rhs5 = 0;
    const double e8 = distance(adaptive(Dop853<double>{tol, tol}, T, Dop853<double>::rhs_per_attempt, rhs8), exact);
    const double e5 = distance(adaptive(Dopri5<double>{tol, tol}, T, 6, rhs5), exact);
    // Measured: DOP853 3.06e-10 with 841 right-hand sides and 9.91e-13 with 1405, DOPRI5
    // 2.73e-9 with 2107 and 2.67e-11 with 5275. Tolerance proportionality: the global error
    // a modest multiple of the tolerance.
    EXPECT_LT(e8, 100 * tol) << "tol " << tol;
    // Fewer right-hand sides than DOPRI5 for an error no larger than DOPRI5's.
    EXPECT_LT(rhs8, rhs5) << "tol " << tol << ": errors " << e8 << " and " << e5;
    EXPECT_LT(e8, 10 * e5 + 1e-15) << "tol " << tol;
  }
}

}  // namespace
}  // namespace chens
