// Projections (002 §11, 001 §4-5) against a dense Eigen solution of the constrained
// least-norm problems and against the papers' analytical statements:
//  - 001 Prop. 2 / 002 eq. 66: the mass-orthogonal momentum projection is the minimiser of
//    |p' - p|_M subject to psi(q, p') = 0 (dense KKT solve);
//  - 002 eqs. 67/69: the frozen-matrix Newton position projection ends on |q| = l, radially;
//  - 001 Prop. 4: after one step of an order-r method the momentum projection changes the
//    energy by O(h^(2r+2));
//  - 001 §5, eqs. 21-24: one Euler step, then position vs momentum projection.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>

#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/projections/momentum.hpp>
#include <chens/projections/position.hpp>

#include "support/integrate.hpp"
#include "support/random_states.hpp"

namespace chens {
namespace {

using Model = Pendulum<double>;
using State = Model::State;

TEST(MomentumProjection, IsTheMassOrthogonalLeastNormCorrection) {
  std::mt19937_64 rng(test::default_seed + 10);
  SCOPED_TRACE("seed " + std::to_string(test::default_seed + 10));
  for (const Model m : {Model{1, 1, 1}, Model{3.0, 0.6, 9.81}}) {
    for (int trial = 0; trial < 100; ++trial) {
      State z = test::inconsistent_state(m, rng);
      // Dense KKT system: minimise (p'-p)^T M^-1 (p'-p)/2 s.t. G M^-1 p' = 0 with G = grad phi^T.
      const Eigen::Vector2d q(z[0], z[1]), p(z[2], z[3]);
      const Eigen::Matrix2d Minv = Eigen::Matrix2d::Identity() / m.m;
      const Eigen::RowVector2d G = q.transpose();
      Eigen::Matrix3d K = Eigen::Matrix3d::Zero();
      K.topLeftCorner<2, 2>() = Minv;
      K.topRightCorner<2, 1>() = (G * Minv).transpose();
      K.bottomLeftCorner<1, 2>() = G * Minv;
      Eigen::Vector3d rhs;
      rhs << Minv * p, 0.0;
      const Eigen::Vector3d sol = K.fullPivLu().solve(rhs);
      momentum_project(m, z);
      EXPECT_NEAR(z[2], sol(0), 1e-14 * (1 + p.norm()));
      EXPECT_NEAR(z[3], sol(1), 1e-14 * (1 + p.norm()));
      EXPECT_NEAR(m.psi(z)[0], 0.0, 1e-15 * (1 + p.norm()) * q.norm());
      EXPECT_EQ(z[0], q(0));  // positions untouched
      EXPECT_EQ(z[1], q(1));
    }
  }
}

TEST(PositionProjection, FrozenNewtonEndsRadiallyOnTheCircle) {
  std::mt19937_64 rng(test::default_seed + 11);
  SCOPED_TRACE("seed " + std::to_string(test::default_seed + 11));
  const Model m{1.4, 2.0, 1.0};
  for (int trial = 0; trial < 100; ++trial) {
    State z = test::inconsistent_state(m, rng);
    const State before = z;
    const double r = std::hypot(z[0], z[1]);
    const ProjectionStatus st = position_project(m, z, 1e-14, 100);
    EXPECT_TRUE(st.converged);
    EXPECT_GE(st.iterations, 1);
    EXPECT_NEAR(z[0], before[0] * m.l / r, 4e-15 * m.l);  // 002 eq. 69: the radial point
    EXPECT_NEAR(z[1], before[1] * m.l / r, 4e-15 * m.l);
    EXPECT_EQ(z[2], before[2]);
    EXPECT_EQ(z[3], before[3]);
  }
  // Non-convergence is reported, not hidden.
  State far{{3.0, 0.0, 0.0, 0.0}};
  const ProjectionStatus st = position_project(m, far, 1e-14, 1);
  EXPECT_FALSE(st.converged);
  EXPECT_EQ(st.iterations, 1);
}

// 001 Prop. 4. The mass-orthogonal momentum projection changes the energy by exactly
// -(1/2) psi^T Q^-1 psi (the kinetic energy of the removed constraint-normal momentum;
// checked first at points where that change is large enough to resolve in double
// precision). After one step of an order-r method from a consistent point psi = O(h^(r+1)),
// so the change is O(h^(2r+2)); we measure the order of psi and of the change.
TEST(MomentumProjection, EnergyChangeIsMinusHalfPsiQInversePsi) {
  std::mt19937_64 rng(test::default_seed + 12);
  SCOPED_TRACE("seed " + std::to_string(test::default_seed + 12));
  for (const Model m : {Model{1, 1, 1}, Model{3.0, 0.6, 9.81}}) {
    for (int trial = 0; trial < 100; ++trial) {
      State z = test::inconsistent_state(m, rng);
      const double psi = m.psi(z)[0];
      const double predicted = -0.5 * psi * m.gram_solve(Model::q_of(z), Model::Multipliers{{psi}})[0];
      const double e0 = m.energy(z);
      momentum_project(m, z);
      EXPECT_NEAR(m.energy(z) - e0, predicted, 1e-13 * (1 + std::abs(e0)));
    }
  }
}

TEST(MomentumProjection, EnergyChangeAfterOneStepIsOrderTwoRPlusTwo) {
  const Model m{1, 1, 1};
  const Naive<Model> sys{m};  // the classical equations (13) of 001 §6
  std::mt19937_64 rng(test::default_seed + 13);
  SCOPED_TRACE("seed " + std::to_string(test::default_seed + 13));
  for (int trial = 0; trial < 5; ++trial) {
    const State a = test::consistent_state(m, rng);
    SCOPED_TRACE("trial " + std::to_string(trial));
    auto orders = [&](const auto& method, std::vector<double> hs) {
      std::vector<double> psi, de;
      for (double h : hs) {
        State b;
        method.step(sys, a, h, b);
        const double r = m.psi(b)[0];
        psi.push_back(std::abs(r));
        de.push_back(0.5 * r * m.gram_solve(Model::q_of(b), Model::Multipliers{{r}})[0]);
      }
      return std::pair<double, double>(test::loglog_slope(hs, psi), test::loglog_slope(hs, de));
    };
    const auto [p1, e1] = orders(ExplicitRk<EulerTableau>{}, {0.02, 0.01, 0.005, 0.0025});
    EXPECT_NEAR(p1, 2.0, 0.15);
    EXPECT_NEAR(e1, 4.0, 0.15);
    const auto [p2, e2] = orders(ExplicitRk<Rk2Tableau>{}, {0.04, 0.02, 0.01, 0.005});
    EXPECT_NEAR(p2, 3.0, 0.15);
    EXPECT_NEAR(e2, 6.0, 0.15);
    const auto [p4, e4] = orders(ExplicitRk<Rk4Tableau>{}, {0.04, 0.02, 0.01, 0.005});
    EXPECT_NEAR(p4, 5.0, 0.15);
    EXPECT_NEAR(e4, 10.0, 0.3);
    // psi is a quadratic first integral of the naive flow (psi' = 0 identically, 002 §10):
    // the Gauss methods keep it, so their projection changes the energy by round-off only.
    State b;
    ImplicitRk<Gauss1Tableau, double>{1e-15, 200}.step(sys, a, 0.05, b);
    EXPECT_NEAR(m.psi(b)[0], 0.0, 1e-14);
    ImplicitRk<Gauss2Tableau, double>{1e-15, 200}.step(sys, a, 0.05, b);
    EXPECT_NEAR(m.psi(b)[0], 0.0, 1e-14);
  }
}

// 001 §5 for the classical equations (13) with m = l = g = 1: one Euler step from a point A
// on the manifold to B, then B^(p) (position projection) or B^(m) (momentum projection).
TEST(OneEulerStep, PositionVersusMomentumProjectionEnergyErrors) {
  const Model m{1, 1, 1};
  const Naive<Model> sys{m};
  const ExplicitRk<EulerTableau> euler;
  std::mt19937_64 rng(test::default_seed + 13);
  SCOPED_TRACE("seed " + std::to_string(test::default_seed + 13));
  for (int trial = 0; trial < 20; ++trial) {
    const State a = test::consistent_state(m, rng);
    const double x = a[0], y = a[1], px = a[2], py = a[3], p2 = px * px + py * py;
    const double c23 = 0.5 * (px * (x * py - y * px) + x * x + p2 * p2);  // 001 eq. 23c
    std::vector<double> hs, d_mom, d_pos_minus;
    for (double h : {4e-3, 2e-3, 1e-3, 5e-4}) {
      State b;
      euler.step(sys, a, h, b);
      State bp = b, bm = b;
      position_project(m, bp, 1e-15, 50);
      momentum_project(m, bm);
      const double de = m.energy(b) - m.energy(a);
      const double de_p = m.energy(bp) - m.energy(a);
      // (23c): Delta E^(p) = c23 h^2 + O(h^3).
      EXPECT_NEAR(de_p / (h * h), c23, 8 * h * (1 + p2 * p2)) << "h = " << h;
      // Delta E - Delta E^(p) = y |p|^2 h^2 / 2 + O(h^3) (001 §5, after eq. 24).
      EXPECT_NEAR((de - de_p) / (h * h), 0.5 * y * p2, 8 * h * (1 + p2 * p2)) << "h = " << h;
      // Delta E - Delta E^(m) = psi^T Q^-1 psi / 2 at B (the identity tested above; a
      // difference of energies could not resolve it in double precision).
      const double psi_b = m.psi(b)[0];
      hs.push_back(h);
      d_mom.push_back(0.5 * psi_b * m.gram_solve(Model::q_of(b), Model::Multipliers{{psi_b}})[0]);
    }
    EXPECT_NEAR(test::loglog_slope(hs, d_mom), 4.0, 0.15);  // = O(h^4), as Prop. 4 predicts for r = 1
  }
}

// The same for the RK2 of 001 §5: Delta E - Delta E^(m) = O(h^6), Delta E - Delta E^(p) = O(h^3).
TEST(OneRk2Step, MomentumProjectionIsSixthOrderPositionThird) {
  const Model m{1, 1, 1};
  const Naive<Model> sys{m};
  const ExplicitRk<Rk2Tableau> rk2;
  std::mt19937_64 rng(test::default_seed + 14);
  SCOPED_TRACE("seed " + std::to_string(test::default_seed + 14));
  for (int trial = 0; trial < 20; ++trial) {
    const State a = test::consistent_state(m, rng);
    std::vector<double> hs, d_mom, d_pos;
    for (double h : {2e-3, 1e-3, 5e-4, 2.5e-4}) {
      State b;
      rk2.step(sys, a, h, b);
      State bp = b;
      position_project(m, bp, 1e-16, 50);
      const double psi_b = m.psi(b)[0];
      hs.push_back(h);
      d_mom.push_back(0.5 * psi_b * m.gram_solve(Model::q_of(b), Model::Multipliers{{psi_b}})[0]);
      d_pos.push_back(std::abs(bp[1] - b[1]));  // the position projection changes only m g y
    }
    EXPECT_NEAR(test::loglog_slope(hs, d_mom), 6.0, 0.15);
    EXPECT_NEAR(test::loglog_slope(hs, d_pos), 3.0, 0.15);
  }
}

}  // namespace
}  // namespace chens
