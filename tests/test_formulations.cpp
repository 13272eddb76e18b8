// Right-hand sides of all formulations against three independent sources:
//  (1) the papers' formulas transcribed verbatim for m = l = g = 1
//      (001 eqs. 13-15, 002 eqs. 35-38, 000 eqs. 50, 53),
//  (2) the dense automatic-differentiation oracle built from H and phi alone
//      (tests/support/dense_oracle.hpp), for general m, l, g,
//  (3) the structure the papers predict: on the manifold all agree; off it the
//      differences are proportional to phi (total) or psi (Dirac) only.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>

#include <chens/formulations/extended_hamiltonian.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/impetus_modified.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/formulations/total_hamiltonian.hpp>

#include "support/dense_oracle.hpp"
#include "support/dual.hpp"
#include "support/random_states.hpp"

namespace chens {
namespace {

using Model = Pendulum<double>;
using State = Model::State;

Eigen::Vector4d as_eigen(const State& z) { return Eigen::Vector4d(z[0], z[1], z[2], z[3]); }
test::Z<double> as_z(const State& z) { return {z[0], z[1], z[2], z[3]}; }

template <class F>
Eigen::Vector4d rhs_of(const F& f, const State& z) {
  State dz;
  f.rhs(z, dz);
  return as_eigen(dz);
}

// Relative agreement with the scale of the vectors involved.
::testing::AssertionResult close(const Eigen::Vector4d& a, const Eigen::Vector4d& b, double tol) {
  const double scale = std::max({1.0, a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff()});
  const double d = (a - b).cwiseAbs().maxCoeff();
  if (d <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max difference " << d << " > " << tol << " * " << scale
                                       << "\n  a = " << a.transpose() << "\n  b = " << b.transpose();
}

// ---- (1) the papers' equations, m = l = g = 1 -----------------------------------------
Eigen::Vector4d paper_naive(const State& z) {  // 002 eq. 38 with lambda of eq. 36 (= 001 eq. 13)
  const double x = z[0], y = z[1], px = z[2], py = z[3], r2 = x * x + y * y;
  const double lam = -(px * px + py * py - y) / r2;
  return {px, py, lam * x, lam * y - 1};
}
Eigen::Vector4d paper_total(const State& z) {  // 001 eq. 14
  const double x = z[0], y = z[1], px = z[2], py = z[3], r2 = x * x + y * y;
  const double mu = (px * px + py * py - y) / r2, phi = (r2 - 1) / 2;
  return {px + 2 * px / r2 * phi, py + 2 * py / r2 * phi, -mu * x + 2 * x * mu / r2 * phi,
          -mu * y - 1 + (2 * y * mu + 1) / r2 * phi};
}
Eigen::Vector4d paper_dirac(const State& z) {  // 002 eqs. 35-36
  const double x = z[0], y = z[1], px = z[2], py = z[3], r2 = x * x + y * y;
  const double lam = -(px * px + py * py - y) / r2, mu = -(x * px + y * py) / r2;
  return {px + mu * x, py + mu * y, lam * x - mu * px, lam * y - mu * py - 1};
}
Eigen::Vector4d paper_dirac_001(const State& z) {  // 001 eq. 15
  const double x = z[0], y = z[1], px = z[2], py = z[3], r2 = x * x + y * y;
  const double mu = (px * px + py * py - y) / r2, psi = x * px + y * py;
  return {px - x / r2 * psi, py - y / r2 * psi, -mu * x + px / r2 * psi, -mu * y - 1 + py / r2 * psi};
}
Eigen::Vector4d paper_extended(const State& z) {  // 002 eq. 37
  const double x = z[0], y = z[1], px = z[2], py = z[3], r2 = x * x + y * y;
  const double lam = -(px * px + py * py - y) / r2, mu = -(x * px + y * py) / r2;
  return {(2 - 1 / r2) * px + 2 * mu * x, (2 - 1 / r2) * py + 2 * mu * y, lam * x / r2 - 2 * mu * px - 2 * mu * mu * x,
          lam * y / r2 - 2 * mu * py - 2 * mu * mu * y - 0.5 * (1 + 1 / r2)};
}
Eigen::Vector4d paper_impetus(const State& z) {  // 000 eq. 50
  const double x = z[0], y = z[1], pxs = z[2], pys = z[3];
  const double lam = (x * pxs + y * pys) / (x * x + y * y);
  const double px = pxs - lam * x, py = pys - lam * y;
  return {px, py, lam * px, lam * py - 1};
}
Eigen::Vector4d paper_impetus_modified(const State& z) {  // 000 eq. 53, v = x* py* - y* px*
  const double x = z[0], y = z[1], px = z[2], py = z[3], v = x * py - y * px;
  return {-v * y, v * x, -v * py, v * px - 1};
}

TEST(Formulations, MatchThePapersEquationsAtUnitConstants) {
  const Model m{1.0, 1.0, 1.0};
  std::mt19937_64 rng(test::default_seed);
  SCOPED_TRACE("seed " + std::to_string(test::default_seed));
  for (int trial = 0; trial < 200; ++trial) {
    const State z = trial % 2 ? test::consistent_state(m, rng) : test::inconsistent_state(m, rng);
    SCOPED_TRACE("trial " + std::to_string(trial));
    EXPECT_TRUE(close(rhs_of(Naive<Model>{m}, z), paper_naive(z), 1e-14));
    EXPECT_TRUE(close(rhs_of(TotalHamiltonian<Model>{m}, z), paper_total(z), 1e-14));
    EXPECT_TRUE(close(rhs_of(ExtendedHamiltonian<Model>{m}, z), paper_extended(z), 1e-14));
    EXPECT_TRUE(close(rhs_of(HamiltonDirac<Model>{m}, z), paper_dirac(z), 1e-14));
    EXPECT_TRUE(close(paper_dirac(z), paper_dirac_001(z), 1e-14));  // 001 eq. 15 = 002 eq. 35
    EXPECT_TRUE(close(rhs_of(ImpetusStriction<Model>{m}, z), paper_impetus(z), 1e-14));
    EXPECT_TRUE(close(rhs_of(ImpetusModified<Model>{m}, z), paper_impetus_modified(z), 1e-14));
  }
}

// ---- (2) dense oracle, general constants ------------------------------------------------
class FormulationsVsDenseOracle : public ::testing::TestWithParam<std::array<double, 3>> {};

TEST_P(FormulationsVsDenseOracle, AgreeAtRandomPoints) {
  const auto [mass, length, gravity] = GetParam();
  const Model m{mass, length, gravity};
  const test::PendulumOracle o{mass, length, gravity};
  std::mt19937_64 rng(test::default_seed + 1);
  SCOPED_TRACE("seed " + std::to_string(test::default_seed + 1));
  for (int trial = 0; trial < 100; ++trial) {
    const State z = trial % 2 ? test::consistent_state(m, rng) : test::inconsistent_state(m, rng);
    const auto zz = as_z(z);
    SCOPED_TRACE("trial " + std::to_string(trial));
    EXPECT_TRUE(close(rhs_of(Naive<Model>{m}, z), o.naive(zz), 1e-13));
    EXPECT_TRUE(close(rhs_of(TotalHamiltonian<Model>{m}, z), o.total(zz), 1e-13));
    EXPECT_TRUE(close(rhs_of(ExtendedHamiltonian<Model>{m}, z), o.extended(zz), 1e-13));
    EXPECT_TRUE(close(rhs_of(HamiltonDirac<Model>{m}, z), o.dirac(zz), 1e-13));
    EXPECT_TRUE(close(rhs_of(ImpetusStriction<Model>{m}, z), o.impetus(zz), 1e-13));
    EXPECT_TRUE(close(rhs_of(ImpetusModified<Model>{m}, z), o.impetus_modified(zz), 1e-13));
    EXPECT_TRUE(close(as_eigen(ImpetusStriction<Model>{m}.physical(z)), o.impetus_physical(zz), 1e-14));
    // psi = {phi, H} (001 eq. 2) and Q = {phi, psi} = J M^-1 J^T (002 eq. 28).
    EXPECT_NEAR(m.psi(z)[0], o.psi(zz), 1e-14 * (1 + std::abs(o.psi(zz))));
    const double q_oracle = o.bracket(o.fphi(), o.fpsi(), zz);
    EXPECT_NEAR(m.gram_solve(Model::q_of(z), Model::Multipliers{{1.0}})[0], 1.0 / q_oracle, 1e-13 / q_oracle);
    EXPECT_NEAR(m.psi_h_bracket(z)[0], o.bracket(o.fpsi(), o.fH(), zz), 1e-13 * (1 + std::abs(m.psi_h_bracket(z)[0])));
  }
}

INSTANTIATE_TEST_SUITE_P(Constants, FormulationsVsDenseOracle,
                         ::testing::Values(std::array<double, 3>{1.0, 1.0, 1.0}, std::array<double, 3>{2.5, 0.7, 9.81},
                                           std::array<double, 3>{0.3, 1.9, 0.45}, std::array<double, 3>{1.0, 1.0, 0.0}));

// ---- (3) structure ------------------------------------------------------------------------
// Time derivative of the physical state along a formulation's flow (impetus variables
// are mapped through p = p* - J^T lambda with exact dual-number derivatives).
template <template <class> class F>
Eigen::Vector4d physical_velocity(const Model& m, const State& z) {
  using D = test::Dual<double, 1>;
  using DModel = Pendulum<D>;
  const F<Model> f{m};
  State dz;
  f.rhs(z, dz);
  const F<DModel> fd{DModel{D(m.m), D(m.l), D(m.g)}};
  typename DModel::State zd;
  for (int i = 0; i < 4; ++i) {
    zd[i] = D(z[i]);
    zd[i].d[0] = dz[i];
  }
  const auto phys = fd.physical(zd);
  return {phys[0].d[0], phys[1].d[0], phys[2].d[0], phys[3].d[0]};
}

TEST(Formulations, AllAgreeOnTheConstraintManifold) {
  for (const Model m : {Model{1.0, 1.0, 1.0}, Model{2.5, 0.7, 9.81}}) {
    std::mt19937_64 rng(test::default_seed + 2);
    SCOPED_TRACE("seed " + std::to_string(test::default_seed + 2) + ", m = " + std::to_string(m.m));
    for (int trial = 0; trial < 200; ++trial) {
      const State z = test::consistent_state(m, rng);
      const Eigen::Vector4d ref = rhs_of(Naive<Model>{m}, z);
      EXPECT_TRUE(close(rhs_of(TotalHamiltonian<Model>{m}, z), ref, 1e-14));
      EXPECT_TRUE(close(rhs_of(ExtendedHamiltonian<Model>{m}, z), ref, 1e-14));
      EXPECT_TRUE(close(rhs_of(HamiltonDirac<Model>{m}, z), ref, 1e-14));
      // Impetus variables coincide with the physical ones on the manifold (lambda = 0);
      // compare the physical velocity they generate.
      EXPECT_TRUE(close(physical_velocity<ImpetusStriction>(m, z), ref, 1e-14));
      EXPECT_TRUE(close(physical_velocity<ImpetusModified>(m, z), ref, 1e-14));
      EXPECT_TRUE(close(physical_velocity<HamiltonDirac>(m, z), ref, 1e-14));
    }
  }
}

// 001 §1: the total-Hamiltonian equations differ from the classical ones only by terms
// proportional to phi, the Hamilton-Dirac equations only by terms proportional to psi.
// At points with psi = 0 but phi != 0, Dirac = naive; with phi = 0 but psi != 0,
// total = naive; and the differences scale linearly with the residual.
TEST(Formulations, OffManifoldDifferencesFollowThePapersTerms) {
  const Model m{1.3, 0.9, 2.0};
  std::mt19937_64 rng(test::default_seed + 3);
  SCOPED_TRACE("seed " + std::to_string(test::default_seed + 3));
  for (int trial = 0; trial < 100; ++trial) {
    const State c = test::consistent_state(m, rng);
    for (const double eps : {1e-2, 1e-3, 1e-4}) {
      // phi = O(eps), psi = 0: scale q radially, p stays orthogonal to q.
      const State zp{{c[0] * (1 + eps), c[1] * (1 + eps), c[2], c[3]}};
      EXPECT_TRUE(close(rhs_of(HamiltonDirac<Model>{m}, zp), rhs_of(Naive<Model>{m}, zp), 1e-13));
      // phi = 0, psi = O(eps): add a radial momentum component.
      const State zm{{c[0], c[1], c[2] + eps * c[0], c[3] + eps * c[1]}};
      EXPECT_TRUE(close(rhs_of(TotalHamiltonian<Model>{m}, zm), rhs_of(Naive<Model>{m}, zm), 1e-13));
    }
    // The differences are first order in the residual: halving it halves them.
    const double e1 = 1e-4, e2 = 5e-5;
    auto radial = [&](double e) { return State{{c[0], c[1], c[2] + e * c[0], c[3] + e * c[1]}}; };
    auto stretched = [&](double e) { return State{{c[0] * (1 + e), c[1] * (1 + e), c[2], c[3]}}; };
    const double dd1 = (rhs_of(HamiltonDirac<Model>{m}, radial(e1)) - rhs_of(Naive<Model>{m}, radial(e1))).norm();
    const double dd2 = (rhs_of(HamiltonDirac<Model>{m}, radial(e2)) - rhs_of(Naive<Model>{m}, radial(e2))).norm();
    EXPECT_NEAR(dd1 / dd2, 2.0, 1e-3);
    const double dt1 = (rhs_of(TotalHamiltonian<Model>{m}, stretched(e1)) - rhs_of(Naive<Model>{m}, stretched(e1))).norm();
    const double dt2 = (rhs_of(TotalHamiltonian<Model>{m}, stretched(e2)) - rhs_of(Naive<Model>{m}, stretched(e2))).norm();
    EXPECT_NEAR(dt1 / dt2, 2.0, 1e-3);
  }
}

// 002 §10 / eq. 59 and 001 §2: the constraint residuals' own equations of motion.
// naive: phi' = psi, psi' = 0; Dirac: phi' = psi' = 0 (002 eq. 47); extended (m = l = g = 1):
// phi' = 2 psi phi / r^2 - psi, psi' = (4|p|^2 - y) phi / r^2 - 2 psi^2 / r^2.
TEST(Formulations, ResidualDynamicsMatch002Section10) {
  const Model m{1.0, 1.0, 1.0};
  std::mt19937_64 rng(test::default_seed + 4);
  SCOPED_TRACE("seed " + std::to_string(test::default_seed + 4));
  auto rates = [&](const Eigen::Vector4d& dz, const State& z) {
    // d phi/dt = q . q', d psi/dt = q' . p + q . p'  (m = 1)
    const double dphi = z[0] * dz[0] + z[1] * dz[1];
    const double dpsi = dz[0] * z[2] + dz[1] * z[3] + z[0] * dz[2] + z[1] * dz[3];
    return std::pair<double, double>(dphi, dpsi);
  };
  for (int trial = 0; trial < 100; ++trial) {
    const State z = test::inconsistent_state(m, rng);
    const double x = z[0], y = z[1], px = z[2], py = z[3], r2 = x * x + y * y;
    const double phi = (r2 - 1) / 2, psi = x * px + y * py, p2 = px * px + py * py;
    const auto [nphi, npsi] = rates(rhs_of(Naive<Model>{m}, z), z);
    EXPECT_NEAR(nphi, psi, 1e-13 * (1 + std::abs(psi)));
    EXPECT_NEAR(npsi, 0.0, 1e-13 * (1 + p2));
    const auto [dphi, dpsi] = rates(rhs_of(HamiltonDirac<Model>{m}, z), z);
    EXPECT_NEAR(dphi, 0.0, 1e-13 * (1 + std::abs(psi)));
    EXPECT_NEAR(dpsi, 0.0, 1e-13 * (1 + p2));
    const auto [ephi, epsi] = rates(rhs_of(ExtendedHamiltonian<Model>{m}, z), z);
    EXPECT_NEAR(ephi, 2 * psi * phi / r2 - psi, 1e-13 * (1 + std::abs(psi)));
    EXPECT_NEAR(epsi, (4 * p2 - y) * phi / r2 - 2 * psi * psi / r2, 1e-12 * (1 + p2));
  }
}

}  // namespace
}  // namespace chens
