// Geometry building blocks (issue 8) against independent oracles:
//  - the dual-number tangent propagation of geometry/tangent_system.hpp equals central finite
//    differences of the plain step map, for every kind of step (explicit and implicit
//    Runge-Kutta, RATTLE, Stormer-Verlet, the midpoint rule with stage projection) and
//    for the projections: it is the derivative of the map the run applies (004 §3.2, §4);
//  - the initial tangents satisfy 004's four consistency conditions, omega_0 = 1;
//  - the momentum projection keeps omega for tangents with G dq = 0 (001 Prop. 2), the
//    position projection scales it by l / |q| (001 Prop. 3; the radial projection's
//    derivative in closed form);
//  - the Baumgarte formulation makes phi follow the damped oscillator
//    phi'' + 2 alpha phi' + beta^2 phi = 0 in closed form, and is the naive one for
//    alpha = beta = 0, bit for bit;
//  - the penalty model's force is the gradient of its potential (dense finite differences),
//    and Stormer-Verlet is of order 2 (convergence test) and symplectic (Jacobian
//    determinant 1 and omega kept, via the tangents).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <chens/ensemble/instance.hpp>
#include <chens/formulations/baumgarte.hpp>
#include <chens/formulations/constrained.hpp>
#include <chens/formulations/extended_hamiltonian.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/formulations/penalty.hpp>
#include <chens/geometry/tangent_system.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/midpoint_projection.hpp>
#include <chens/integrators/rattle.hpp>
#include <chens/integrators/stormer_verlet.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/penalty_pendulum.hpp>
#include <chens/projections/momentum.hpp>
#include <chens/projections/position.hpp>

#include "support/integrate.hpp"
#include "support/tangent_derivative.hpp"
#include "support/random_states.hpp"

namespace chens {
namespace {

using Model = Pendulum<double>;
using State = Model::State;


State random_vector(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  return State{{u(rng), u(rng), u(rng), u(rng)}};
}

TEST(WedgeTangents, DualNumberStepDerivativeIsTheFiniteDifferenceOfTheStepMap) {
  const std::uint64_t seed = test::default_seed + 80;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Model m{1.0, 1.0, 1.0};
  const double h = 0.05;
  for (int trial = 0; trial < 10; ++trial) {
    const State z = test::consistent_state(m, rng);
    const State v1 = random_vector(rng), v2 = random_vector(rng);
    // Central differences with eps = 1e-6 are accurate to about 1e-9 here.
    const double tol = 1e-7;
    EXPECT_LT(test::tangent_vs_fd(HamiltonDirac<Model>{m}, ExplicitRk<Rk4Tableau>{}, z, v1, v2, h), tol) << "rk4";
    EXPECT_LT(
        test::tangent_vs_fd(ExtendedHamiltonian<Model>{m}, ImplicitRk<Gauss1Tableau, double>{1e-15, 200}, z, v1, v2, h), tol)
        << "midpoint";
    EXPECT_LT(
        test::tangent_vs_fd(ExtendedHamiltonian<Model>{m}, ImplicitRk<Gauss2Tableau, double>{1e-15, 200}, z, v1, v2, h), tol)
        << "gauss2";
    EXPECT_LT(test::tangent_vs_fd(Constrained<Model>{m}, Rattle<double>{1e-15, 100}, z, v1, v2, h), tol) << "rattle";
    EXPECT_LT(test::tangent_vs_fd(Baumgarte<Model>{m, 2.0, 3.0}, ExplicitRk<Rk4Tableau>{}, z, v1, v2, h), tol)
        << "baumgarte";
    EXPECT_LT(test::tangent_vs_fd(HamiltonDirac<Model>{m}, MidpointProjection<double>{1e-15, 200, true, true, 1e-15, 50}, z,
                                  v1, v2, h),
              tol)
        << "midpoint with stage projection";
    for (PenaltyConstraint c : {PenaltyConstraint::g, PenaltyConstraint::g1}) {
      const auto pm = PenaltyPendulum<double>::make(1.0, 1.0, 1.0, 10.0, c);
      EXPECT_LT(test::tangent_vs_fd(PenaltyOde<PenaltyPendulum<double>>{pm}, StormerVerlet{}, z, v1, v2, 0.01), tol)
          << "verlet, constraint " << int(c);
    }
  }
}

TEST(WedgeTangents, InitialTangentsSatisfy004ConsistencyConditions) {
  const std::uint64_t seed = test::default_seed + 81;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const Model m : {Model{1, 1, 1}, Model{2.5, 0.7, 9.81}}) {
    const auto ts = TangentSystem<HamiltonDirac<Model>>::of(HamiltonDirac<Model>{m});
    for (int trial = 0; trial < 20; ++trial) {
      const State z = trial % 2 ? test::consistent_state(m, rng) : test::inconsistent_state(m, rng);
      const auto Z = ts.with_initial_tangents(z);
      const double x = z[0], y = z[1], px = z[2], py = z[3];
      for (int k = 1; k <= 2; ++k) {
        const double dqx = Z[4 * k], dqy = Z[4 * k + 1], dpx = Z[4 * k + 2], dpy = Z[4 * k + 3];
        EXPECT_NEAR(x * dqx + y * dqy, 0.0, 1e-15) << "G dq = 0, tangent " << k;
        EXPECT_NEAR(px * dqx + py * dqy + x * dpx + y * dpy, 0.0, 1e-14) << "G_q(p, dq) + G dp = 0, tangent " << k;
      }
      EXPECT_NEAR(TangentSystem<HamiltonDirac<Model>>::wedge(Z), 1.0, 4e-16);
    }
  }
}

// Tangent state (z, dz1, dz2) at z with the consistent tangents, projections over duals.
template <class F>
double omega_after(const Model& m, const State& z, F&& project) {
  using T = TangentSystem<Naive<Model>>;
  const T ts = T::of(Naive<Model>{m});
  auto zd = T::unpack(ts.with_initial_tangents(z));
  const auto dm = m.rebound<Dual2<double>>();
  project(dm, zd);
  return T::wedge(T::pack(zd));
}

TEST(WedgeTangents, MomentumProjectionKeepsOmegaPositionProjectionScalesIt) {
  const std::uint64_t seed = test::default_seed + 82;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const Model m : {Model{1, 1, 1}, Model{2.5, 0.7, 9.81}}) {
    for (int trial = 0; trial < 50; ++trial) {
      const State z = test::inconsistent_state(m, rng);
      const double r = std::sqrt(z[0] * z[0] + z[1] * z[1]);
      const double om_mom = omega_after(m, z, [](const auto& dm, auto& zd) { momentum_project(dm, zd); });
      EXPECT_NEAR(om_mom, 1.0, 1e-14) << "001 Prop. 2: the momentum projection is canonical";
      const double om_pos = omega_after(m, z, [](const auto& dm, auto& zd) {
        EXPECT_TRUE(position_project(dm, zd, Dual2<double>(1e-14), 100).converged);
      });
      EXPECT_NEAR(om_pos, m.l / r, 1e-13) << "001 Prop. 3: q -> l q/|q| scales omega by l/|q| = " << m.l / r;
      EXPECT_GT(std::fabs(om_pos - 1.0), 1e-6) << "a non-trivial position projection changed omega";
    }
  }
}

TEST(Baumgarte, ZeroParametersAreTheNaiveEquationsBitForBit) {
  const std::uint64_t seed = test::default_seed + 83;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Model m{1.3, 0.8, 9.81};
  for (int trial = 0; trial < 100; ++trial) {
    const State z = test::inconsistent_state(m, rng);
    State a, b;
    Baumgarte<Model>{m, 0.0, 0.0}.rhs(z, a);
    Naive<Model>{m}.rhs(z, b);
    for (int c = 0; c < 4; ++c) EXPECT_EQ(a[c], b[c]);
  }
}

// phi(t) of phi'' + 2 alpha phi' + beta^2 phi = 0 with phi(0) = f0, phi'(0) = g0.
double damped_oscillator(double alpha, double beta, double f0, double g0, double t) {
  const double e = std::exp(-alpha * t);
  if (alpha == beta) return e * (f0 + (g0 + alpha * f0) * t);
  if (beta > alpha) {
    const double w = std::sqrt(beta * beta - alpha * alpha);
    return e * (f0 * std::cos(w * t) + (g0 + alpha * f0) / w * std::sin(w * t));
  }
  const double w = std::sqrt(alpha * alpha - beta * beta);
  return e * (f0 * std::cosh(w * t) + (g0 + alpha * f0) / w * std::sinh(w * t));
}

TEST(Baumgarte, ConstraintFollowsTheDampedOscillatorInClosedForm) {
  // Along the exact flow phi' = psi and psi' = {psi, H} + Q lambda = -2 alpha psi - beta^2 phi:
  // the residual is a damped oscillator whatever the motion. RK4 at h = 1e-3 is exact to ~1e-12.
  const Model m{1.0, 1.0, 1.0};
  const State z0{{1.05, 0.0, 0.1, -2.0}};  // phi0 = (1.05^2 - 1)/2, psi0 = 0.105
  const double f0 = m.phi(Model::q_of(z0))[0], g0 = m.psi(z0)[0];
  for (const auto& [alpha, beta] : {std::pair{1.0, 1.0}, std::pair{0.5, 2.0}, std::pair{3.0, 1.0}}) {
    const Baumgarte<Model> sys{m, alpha, beta};
    const ExplicitRk<Rk4Tableau> rk4;
    State z = z0;
    const double h = 1e-3;
    for (int n = 1; n <= 3000; ++n) {
      State zn;
      rk4.step(sys, z, h, zn);
      z = zn;
      if (n % 500 == 0) {
        const double t = n * h;
        EXPECT_NEAR(m.phi(Model::q_of(z))[0], damped_oscillator(alpha, beta, f0, g0, t), 1e-10)
            << "alpha " << alpha << " beta " << beta << " t " << t;
      }
    }
  }
}

TEST(PenaltyPendulum, ForceIsTheGradientOfThePotential) {
  const std::uint64_t seed = test::default_seed + 84;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  for (PenaltyConstraint c : {PenaltyConstraint::g, PenaltyConstraint::g1}) {
    const auto pm = PenaltyPendulum<double>::make(1.7, 0.9, 9.81, 37.0, c);
    for (int trial = 0; trial < 50; ++trial) {
      const Model::Coords q{{u(rng), u(rng)}};
      const auto g = pm.grad_potential(q);
      for (int i = 0; i < 2; ++i) {
        const double eps = 1e-6;
        Model::Coords qp = q, qm = q;
        qp[i] += eps;
        qm[i] -= eps;
        const double fd = (pm.potential(qp) - pm.potential(qm)) / (2 * eps);
        EXPECT_NEAR(g[i], fd, 1e-6 * (1 + std::fabs(fd))) << "constraint " << int(c) << " component " << i;
      }
    }
  }
  // H = T + V with the potential above.
  const auto pm = PenaltyPendulum<double>::make(1.7, 0.9, 9.81, 37.0, PenaltyConstraint::g1);
  const State z{{0.3, -0.8, 1.2, -0.4}};
  EXPECT_DOUBLE_EQ(pm.energy(z), (1.2 * 1.2 + 0.4 * 0.4) / (2 * pm.m) + pm.potential(Model::Coords{{0.3, -0.8}}));
}

TEST(StormerVerlet, IsOfOrderTwoAndSymplectic) {
  const PenaltyOde<PenaltyPendulum<double>> sys{PenaltyPendulum<double>::make(1.0, 1.0, 1.0, 5.0, PenaltyConstraint::g1)};
  const State z0{{1.0, 0.0, 0.3, -2.0}};
  auto run = [&](int n) {
    State z = z0;
    for (int i = 0; i < n; ++i) {
      State zn;
      StormerVerlet{}.step(sys, z, 1.0 / n, zn);
      z = zn;
    }
    return z;
  };
  const State ref = run(64000);
  double prev = 0.0;
  for (int n : {250, 500, 1000, 2000}) {
    const State d = run(n) - ref;
    const double err = std::sqrt(dot(d, d));
    if (prev > 0) {
      EXPECT_NEAR(prev / err, 4.0, 0.2) << "n " << n;
    }
    prev = err;
  }
  // omega of any two tangents is kept to rounding over 1000 steps (a plain Hamiltonian system).
  using T = TangentSystem<PenaltyOde<PenaltyPendulum<double>>>;
  const T ts = T::of(sys);
  auto Z = ts.with_initial_tangents(z0);
  const TangentStepper<StormerVerlet> stepper{};
  for (int i = 0; i < 1000; ++i) {
    typename T::State Zn;
    stepper.step(ts, Z, 0.01, Zn);
    Z = Zn;
  }
  EXPECT_NEAR(T::wedge(Z), 1.0, 1e-12);
}

}  // namespace
}  // namespace chens
