// The 3-stage Lobatto IIIA-IIIB pair on the constrained equations
// (integrators/lobatto_iiia_iiib.hpp, issue 44 item 2) against independent numbers:
//  - its step is the solution of the pair's equations written from the two tableaus (Jay
//    1996) and solved here apart, by a dense Newton iteration in Eigen with a finite-difference
//    Jacobian over all stages (P_1, P_2, P_3, Q_2, Q_3, Lambda_1, Lambda_2) and the projection
//    for Lambda_3: on the pendulum, the double pendulum and the Lennard-Jones hexagon;
//  - order 4 against the pendulum's closed form (Jacobi elliptic functions), against the double
//    pendulum integrated in angle coordinates by code written apart from chens
//    (tests/support/double_pendulum_angles.hpp), and by self-convergence on the hexagon;
//  - on the manifold: |phi| within the Newton tolerance and |psi| to rounding after each step;
//  - symmetric: a step of -h undoes a step of h;
//  - symplectic: the dual-number derivative (output.wedge's) is the step map's finite
//    difference, and omega of two tangents is kept to rounding over 1000 steps;
//  - the energy error bounded without drift over 10^6 steps;
//  - an unconverged Newton iteration is reported, not hidden.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <chens/formulations/constrained.hpp>
#include <chens/geometry/tangent_system.hpp>
#include <chens/integrators/lobatto_iiia_iiib.hpp>
#include <chens/integrators/rattle.hpp>
#include <chens/models/chain.hpp>
#include <chens/models/double_pendulum.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "support/double_pendulum_angles.hpp"
#include "support/integrate.hpp"
#include "support/random_states.hpp"
#include "support/tangent_derivative.hpp"
#include "support/wide_swing.hpp"

namespace chens {
namespace {

using Pend = Pendulum<double>;
using DoublePend = DoublePendulum<double>;
using Hexagon = Chain<double, 7>;

constexpr double newton_tol = 1e-15;
const LobattoIIIAB3<double> kLobatto{newton_tol, 100};

const DoublePend kDouble{1.0, 0.7, 1.0, 0.8, 9.81};

test::angles::Params angle_params(const DoublePend& m) { return {m.m1, m.m2, m.l1, m.l2, m.g}; }

// The Cartesian (q, p) of angles and rates, by the angle code written apart from chens (its
// own forward-mode numbers, used here with zero derivatives).
DoublePend::State cartesian_of(const test::angles::Fwd (&y)[4]) {
  test::angles::Fwd z[8];
  test::angles::cartesian(angle_params(kDouble), y, z);
  DoublePend::State s;
  for (int c = 0; c < 8; ++c) s[c] = z[c].v;
  return s;
}
constexpr double kAngles[4] = {1.1, -0.4, 0.3, -0.9};  // theta1, theta2, omega1, omega2

// A consistent double-pendulum state.
DoublePend::State double_initial() {
  const test::angles::Fwd y[4] = {kAngles[0], kAngles[1], kAngles[2], kAngles[3]};
  return cartesian_of(y);
}

template <class Model>
Eigen::VectorXd to_eigen(const typename Model::Coords& v) {
  Eigen::VectorXd e(Model::Coords::size);
  for (int i = 0; i < Model::Coords::size; ++i) e(i) = v[i];
  return e;
}
template <class V>
V from_eigen(const Eigen::VectorXd& e, int offset) {
  V v;
  for (int i = 0; i < V::size; ++i) v[i] = e(offset + i);
  return v;
}

// One step of the pair from its tableaus (Lobatto IIIA a, IIIB ahat, weights b), its stage
// equations solved by Newton's method with a central-difference Jacobian over every unknown,
// then Lambda_3 from J(q_n+1) M^-1 p_n+1 = 0. Uses the model's primitives (phi, grad V,
// J^T, M^-1) and nothing of the method's elimination or iteration.
template <class Model>
typename Model::State oracle_step(const Model& model, const typename Model::State& z, double h) {
  using Coords = typename Model::Coords;
  using Mult = typename Model::Multipliers;
  constexpr int n = Coords::size, m = Mult::size;
  const double a[3][3] = {{0, 0, 0}, {5.0 / 24, 1.0 / 3, -1.0 / 24}, {1.0 / 6, 2.0 / 3, 1.0 / 6}};
  const double ahat[3][3] = {{1.0 / 6, -1.0 / 6, 0}, {1.0 / 6, 1.0 / 3, 0}, {1.0 / 6, 5.0 / 6, 0}};
  const double b[3] = {1.0 / 6, 2.0 / 3, 1.0 / 6};
  const Coords q = Model::q_of(z), p = Model::p_of(z);
  // Unknowns: P_1, P_2, P_3 (3n), Q_2, Q_3 (2n), Lambda_1, Lambda_2 (2m).
  const int N = 5 * n + 2 * m;
  auto stages = [&](const Eigen::VectorXd& w, Coords(&P)[3], Coords(&Q)[3], Mult(&L)[2]) {
    for (int i = 0; i < 3; ++i) P[i] = from_eigen<Coords>(w, i * n);
    Q[0] = q;
    Q[1] = from_eigen<Coords>(w, 3 * n);
    Q[2] = from_eigen<Coords>(w, 4 * n);
    L[0] = from_eigen<Mult>(w, 5 * n);
    L[1] = from_eigen<Mult>(w, 5 * n + m);
  };
  auto force = [&](const Coords& Q, const Mult& L) { return -1.0 * (model.grad_potential(Q) + model.jac_t_mul(Q, L)); };
  auto residual = [&](const Eigen::VectorXd& w) {
    Coords P[3], Q[3];
    Mult L[2];
    stages(w, P, Q, L);
    const Coords F[2] = {force(Q[0], L[0]), force(Q[1], L[1])};
    Eigen::VectorXd r(N);
    for (int i = 0; i < 3; ++i) {
      const Coords ri = P[i] - p - h * (ahat[i][0] * F[0] + ahat[i][1] * F[1]);
      r.segment(i * n, n) = to_eigen<Model>(ri);
    }
    for (int i = 1; i < 3; ++i) {
      Coords s = Coords::zero();
      for (int j = 0; j < 3; ++j) s = s + a[i][j] * model.minv_mul(P[j]);
      r.segment((2 + i) * n, n) = to_eigen<Model>(Q[i] - q - h * s);
    }
    const Mult g2 = model.phi(Q[1]), g3 = model.phi(Q[2]);
    for (int k = 0; k < m; ++k) {
      r(5 * n + k) = g2[k];
      r(5 * n + m + k) = g3[k];
    }
    return r;
  };
  Eigen::VectorXd w = Eigen::VectorXd::Zero(N);
  const Coords v = model.minv_mul(p);
  for (int i = 0; i < 3; ++i) w.segment(i * n, n) = to_eigen<Model>(p);
  w.segment(3 * n, n) = to_eigen<Model>(q + 0.5 * h * v);
  w.segment(4 * n, n) = to_eigen<Model>(q + h * v);
  for (int it = 0; it < 60; ++it) {
    const Eigen::VectorXd r = residual(w);
    if (r.lpNorm<Eigen::Infinity>() < 1e-15) break;
    Eigen::MatrixXd J(N, N);
    for (int k = 0; k < N; ++k) {
      const double eps = 1e-7 * (1.0 + std::fabs(w(k)));
      Eigen::VectorXd wp = w, wm = w;
      wp(k) += eps;
      wm(k) -= eps;
      J.col(k) = (residual(wp) - residual(wm)) / (2 * eps);
    }
    w -= J.partialPivLu().solve(r);
  }
  Coords P[3], Q[3];
  Mult L[2];
  stages(w, P, Q, L);
  const Coords pt = p + h * (b[0] * force(Q[0], L[0]) + b[1] * force(Q[1], L[1])) - (h * b[2]) * model.grad_potential(Q[2]);
  // p_n+1 = pt - J^T mu with J M^-1 p_n+1 = 0, in dense matrices.
  Eigen::MatrixXd Jm(m, n), Minv(n, n);
  for (int k = 0; k < m; ++k) {
    Mult e = Mult::zero();
    e[k] = 1.0;
    Jm.row(k) = to_eigen<Model>(model.jac_t_mul(Q[2], e)).transpose();
  }
  for (int k = 0; k < n; ++k) {
    Coords e = Coords::zero();
    e[k] = 1.0;
    Minv.col(k) = to_eigen<Model>(model.minv_mul(e));
  }
  const Eigen::VectorXd pe = to_eigen<Model>(pt);
  const Eigen::VectorXd mu = (Jm * Minv * Jm.transpose()).ldlt().solve(Jm * Minv * pe);
  return Model::join(Q[2], from_eigen<Coords>(pe - Jm.transpose() * mu, 0));
}

template <class Model>
double max_state_difference(const typename Model::State& x, const typename Model::State& y) {
  double d = 0;
  for (int c = 0; c < Model::State::size; ++c) d = std::max(d, std::fabs(x[c] - y[c]));
  return d;
}

template <class Model>
void expect_step_is_the_tableaus(const Model& model, typename Model::State z, double h, int steps, const char* name) {
  const Constrained<Model> sys{model};
  double worst = 0;
  for (int i = 0; i < steps; ++i) {
    typename Model::State zn;
    const StepStatus st = kLobatto.step(sys, z, h, zn);
    ASSERT_TRUE(st.converged && st.finite) << name << ", step " << i;
    worst = std::max(worst, max_state_difference<Model>(zn, oracle_step(model, z, h)));
    z = zn;
  }
  std::printf("[ oracle   ] %-16s h = %.3g: %d steps, largest difference from the dense tableau solve %.2e\n", name, h,
              steps, worst);
  EXPECT_LT(worst, 1e-12) << name;
}

TEST(Lobatto, TheStepSolvesThePairsEquationsFromTheTableaus) {
  expect_step_is_the_tableaus(test::wide_swing_pendulum, test::wide_swing_start(), 0.1, 20, "pendulum");
  expect_step_is_the_tableaus(kDouble, double_initial(), 0.02, 20, "double pendulum");
  const Hexagon hex = Hexagon::uniform(1.0, 0.1);
  expect_step_is_the_tableaus(hex, Hexagon::default_initial(hex), 0.02, 10, "hexagon");
}

TEST(Lobatto, ConvergesAtOrderFourToThePendulumsClosedForm) {
  const Constrained<Pend> sys{test::wide_swing_pendulum};
  const double T = 2.0;
  const Pend::State z0 = test::wide_swing_start();
  const auto ref = PendulumExact<double>::make(test::wide_swing_pendulum, z0).eval(T);
  std::vector<double> hs, es;
  for (int n : {20, 40, 80, 160}) {
    const Pend::State z = test::integrate_fixed(sys, kLobatto, z0, T, n);
    hs.push_back(T / n);
    es.push_back(max_state_difference<Pend>(z, ref));
  }
  const double slope = test::loglog_slope(hs, es);
  std::printf("[ order    ] pendulum: observed %.2f; errors %.3e %.3e %.3e %.3e\n", slope, es[0], es[1], es[2], es[3]);
  EXPECT_NEAR(slope, 4.0, 0.3);
  EXPECT_LT(es.back(), 1e-7);
}

TEST(Lobatto, ConvergesAtOrderFourToTheDoublePendulumInAngles) {
  const Constrained<DoublePend> sys{kDouble};
  const double T = 1.0;
  // The reference: RK4 in angle coordinates at h = 1e-4 (error ~1e-14), apart from chens.
  test::angles::Fwd y[4] = {kAngles[0], kAngles[1], kAngles[2], kAngles[3]};
  for (int i = 0; i < 10000; ++i) test::angles::angle_rk4(angle_params(kDouble), y, T / 10000);
  const DoublePend::State ref = cartesian_of(y);
  std::vector<double> hs, es;
  for (int n : {40, 80, 160, 320}) {
    const DoublePend::State z = test::integrate_fixed(sys, kLobatto, double_initial(), T, n);
    hs.push_back(T / n);
    es.push_back(max_state_difference<DoublePend>(z, ref));
  }
  const double slope = test::loglog_slope(hs, es);
  std::printf("[ order    ] double pendulum: observed %.2f; errors %.3e %.3e %.3e %.3e\n", slope, es[0], es[1], es[2],
              es[3]);
  EXPECT_NEAR(slope, 4.0, 0.3);
}

TEST(Lobatto, ConvergesAtOrderFourOnTheHexagon) {
  // Self-convergence |z_h - z_h/2| on the seven-atom Lennard-Jones chain of 002 §7 (the force
  // at Q_2 is iterated, unlike the pendulums' constant gravity).
  const Hexagon m = Hexagon::uniform(1.0, 0.1);
  const Constrained<Hexagon> sys{m};
  const auto z0 = Hexagon::default_initial(m);
  const double T = 2.0;
  std::vector<double> hs, diffs;
  auto prev = test::integrate_fixed(sys, kLobatto, z0, T, 40);
  for (int n : {80, 160, 320}) {
    const auto z = test::integrate_fixed(sys, kLobatto, z0, T, n);
    hs.push_back(T / n);
    diffs.push_back(max_state_difference<Hexagon>(z, prev));
    prev = z;
  }
  const double slope = test::loglog_slope(hs, diffs);
  std::printf("[ order    ] hexagon: observed %.2f; successive differences %.3e %.3e %.3e\n", slope, diffs[0], diffs[1],
              diffs[2]);
  EXPECT_NEAR(slope, 4.0, 0.3);
}

template <class Model>
void expect_on_the_manifold(const Model& model, typename Model::State z, double h, int steps, const char* name) {
  const Constrained<Model> sys{model};
  long iterations = 0;
  double phi = 0, psi = 0;
  for (int i = 0; i < steps; ++i) {
    typename Model::State zn;
    const StepStatus st = kLobatto.step(sys, z, h, zn);
    ASSERT_TRUE(st.finite && st.converged) << name << ", step " << i;
    EXPECT_EQ(st.rhs_evals, st.iterations + 3) << name << ", step " << i;
    iterations += st.iterations;
    z = zn;
    phi = std::max(phi, max_abs(model.phi(Model::q_of(z))));
    psi = std::max(psi, max_abs(model.psi(z)));
  }
  std::printf("[ manifold ] %-16s h = %.3g: max |phi| %.2e, max |psi| %.2e, %.2f Newton sweeps per step\n", name, h, phi,
              psi, double(iterations) / steps);
  EXPECT_LE(phi, newton_tol) << name;
  EXPECT_LE(psi, 1e-13) << name;
}

TEST(Lobatto, StaysOnTheManifold) {
  expect_on_the_manifold(test::wide_swing_pendulum, test::wide_swing_start(), 0.1, 500, "pendulum");
  expect_on_the_manifold(kDouble, double_initial(), 0.01, 500, "double pendulum");
  const Hexagon hex = Hexagon::uniform(1.0, 0.1);
  expect_on_the_manifold(hex, Hexagon::default_initial(hex), 0.02, 500, "hexagon");
}

TEST(Lobatto, IsSymmetric) {
  const Hexagon m = Hexagon::uniform(1.0, 0.1);
  const Constrained<Hexagon> sys{m};
  const auto z0 = Hexagon::default_initial(m);
  Hexagon::State z1, back;
  ASSERT_TRUE(kLobatto.step(sys, z0, 0.05, z1).converged);
  ASSERT_TRUE(kLobatto.step(sys, z1, -0.05, back).converged);
  const double d = max_state_difference<Hexagon>(back, z0);
  std::printf("[ symmetry ] hexagon, h = 0.05 then -0.05: %.2e from the start\n", d);
  EXPECT_LT(d, 1e-13);
  EXPECT_GT(max_state_difference<Hexagon>(z1, z0), 1e-3);
}

TEST(Lobatto, IsSymplectic) {
  using Sys = Constrained<Pend>;
  using T = TangentSystem<Sys>;
  const Sys sys{test::wide_swing_pendulum};
  const T ts = T::of(sys);
  const std::uint64_t seed = test::default_seed + 45;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const TangentStepper<LobattoIIIAB3<double>> stepper{kLobatto};
  for (int trial = 0; trial < 4; ++trial) {
    // The dual-number derivative of the step is the central difference of the step map.
    const Pend::State z = test::consistent_state(test::wide_swing_pendulum, rng);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const Pend::State v1{{u(rng), u(rng), u(rng), u(rng)}}, v2{{u(rng), u(rng), u(rng), u(rng)}};
    EXPECT_LT(test::tangent_vs_fd(sys, kLobatto, z, v1, v2, 0.05), 1e-7) << "trial " << trial;
  }
  // omega of the consistent tangents (004 §3.2) is 1 and stays 1 to rounding.
  auto W = ts.with_initial_tangents(test::wide_swing_start());
  for (int i = 0; i < 1000; ++i) {
    typename T::State Wn;
    ASSERT_TRUE(stepper.step(ts, W, 0.05, Wn).finite);
    W = Wn;
  }
  std::printf("[ wedge    ] pendulum, 1000 steps of 0.05: omega - 1 = %.2e\n", T::wedge(W) - 1.0);
  EXPECT_NEAR(T::wedge(W), 1.0, 1e-11);
}

// 10^6 steps at h = 0.05 (t = 5e4, about 1.4e4 periods): a drift would make the last tenth's
// largest energy error exceed the first tenth's several times.
TEST(Lobatto, EnergyErrorStaysBoundedOverAMillionSteps) {
  const int steps = 1000000;
  const test::EnergyTenths e = test::energy_error_tenths(Constrained<Pend>{test::wide_swing_pendulum}, kLobatto,
                                                         test::wide_swing_start(), 0.05, steps);
  ASSERT_EQ(e.steps_done, steps);
  std::printf("[ energy   ] lobatto3, 1e6 steps of 0.05: max |H - H0| first tenth %.3e, last tenth %.3e\n", e.first, e.last);
  EXPECT_GT(e.first, 0.0);
  EXPECT_LT(e.last, 1.5 * e.first);
}

TEST(Lobatto, AnUnconvergedIterationIsReported) {
  const Hexagon m = Hexagon::uniform(1.0, 0.1);
  Hexagon::State z1;
  const StepStatus st = LobattoIIIAB3<double>{1e-16, 1}.step(Constrained<Hexagon>{m}, Hexagon::default_initial(m), 0.1, z1);
  EXPECT_FALSE(st.converged);
  EXPECT_TRUE(st.finite);
  EXPECT_EQ(st.iterations, 1);
  EXPECT_EQ(st.rhs_evals, 4);
}

}  // namespace
}  // namespace chens
