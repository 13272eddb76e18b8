// Models from V and phi alone (include/chens/models/auto_model.hpp, issue 19;
// docs/custom-models.md), against independent numbers:
//   1. the planar pendulum written as a user model (examples/custom_model/models/
//      planar_pendulum.hpp) against chens's hand-written pendulum (models/pendulum.hpp): every
//      primitive and the right-hand sides of the naive, Hamilton-Dirac, impetus-striction and
//      Baumgarte equations at random states on and off the manifold to 1e-14 relative, and
//      ensembles of perturbed pendulums integrated by both to the same final states;
//   2. the spherical pendulum and the rigid triatomic molecule against the dense oracle
//      (tests/support/dense_dirac_oracle.hpp: H and phi alone, its own dual numbers, dense
//      Eigen algebra): Q, S, {psi, H}, Hess(phi) v and the right-hand sides to 1e-13;
//   3. the spherical pendulum against an independent integration in spherical angles (long
//      double RK4) to 1e-9 away from the poles, and L_z conserved to round-off by RATTLE;
//   4. convergence orders of RK4, Gauss2 (Hamilton-Dirac) and RATTLE on the triatomic
//      molecule within 0.15 of nominal;
//   5. the dense Cholesky and LU solves against Eigen, the condition number against Eigen's
//      singular values.
// Measured values are printed as "[ measured ]" lines; the bounds hold them with margin.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <chens/formulations/baumgarte.hpp>
#include <chens/formulations/constrained.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/rattle.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/auto_model.hpp>
#include <chens/models/pendulum.hpp>
#include <chens/projections/momentum.hpp>
#include <chens/projections/position.hpp>

#include "../examples/custom_model/models/planar_pendulum.hpp"
#include "../examples/custom_model/models/spherical_pendulum.hpp"
#include "../examples/custom_model/models/triatomic.hpp"
#include "support/dense_dirac_oracle.hpp"
#include "support/eigen_vec.hpp"
#include "support/integrate.hpp"
#include "support/rigid_tetrahedron.hpp"

namespace chens {
namespace {

using test::to_eigen;

template <class Spec>
using Auto = AutoModel<Spec, double>;

// The spec's default parameters, or the given ones.
template <class Spec>
Auto<Spec> make_model(std::vector<double> k = {}) {
  typename Auto<Spec>::Params p;
  for (int i = 0; i < Auto<Spec>::parameter_count; ++i)
    p[i] = k.empty() ? Spec::parameters[i].value : k[static_cast<std::size_t>(i)];
  return Auto<Spec>::make(p);
}

template <int N>
double relative(const Vec<double, N>& got, const Vec<double, N>& want) {
  double d = 0, w = 0;
  for (int i = 0; i < N; ++i) {
    d = std::max(d, std::fabs(got[i] - want[i]));
    w = std::max(w, std::fabs(want[i]));
  }
  return d / (1.0 + w);
}
double relative(const Eigen::MatrixXd& got, const Eigen::MatrixXd& want) {
  return (got - want).lpNorm<Eigen::Infinity>() / (1.0 + want.lpNorm<Eigen::Infinity>());
}

void report(const char* what, const std::map<std::string, double>& worst) {
  for (const auto& [k, v] : worst) std::printf("[ measured ] %s: %-22s %.2e\n", what, k.c_str(), v);
}

// ---- 1. the planar pendulum from V and phi equals the hand-written one ----------------------

using AdPendulum = Auto<PlanarPendulum>;
using Hand = Pendulum<double>;

std::vector<Hand::State> pendulum_states(double l, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> angle(-3.14159, 3.14159), mom(-2.0, 2.0), off(-0.1, 0.1);
  std::vector<Hand::State> out;
  for (int i = 0; i < 64; ++i) {
    const double a = angle(rng);
    Hand::State z{{l * std::cos(a), l * std::sin(a), mom(rng), mom(rng)}};
    if (i % 2 == 1) {
      z[0] += off(rng);
      z[1] += off(rng);
    }
    out.push_back(z);
  }
  return out;
}

template <template <class> class F>
double rhs_difference(const AdPendulum& ad, const Hand& hand, const Hand::State& z) {
  F<AdPendulum> fa{ad};
  F<Hand> fh{hand};
  Hand::State da, dh;
  fa.rhs(z, da);
  fh.rhs(z, dh);
  return relative(da, dh);
}

// The hand-written pendulum (m, l, g) against the user model with parameters `k`.
std::map<std::string, double> pendulum_discrepancies(double m, double l, double g, const std::vector<double>& k,
                                                     std::uint64_t seed) {
  const AdPendulum ad = make_model<PlanarPendulum>(k);
  const Hand hand{m, l, g};
  std::mt19937_64 rng(seed + 7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::map<std::string, double> worst;
  auto add = [&](const std::string& what, double e) { worst[what] = std::max(worst[what], e); };
  for (const Hand::State& z : pendulum_states(l, seed)) {
    const Hand::Coords q = Hand::q_of(z), v{{u(rng), u(rng)}};
    const Hand::Multipliers lam{{u(rng)}};
    add("H", std::fabs(ad.energy(z) - hand.energy(z)) / (1 + std::fabs(hand.energy(z))));
    add("phi", relative(ad.phi(q), hand.phi(q)));
    add("psi", relative(ad.psi(z), hand.psi(z)));
    add("grad V", relative(ad.grad_potential(q), hand.grad_potential(q)));
    add("J v", relative(ad.jac_mul(q, v), hand.jac_mul(q, v)));
    add("J^T lambda", relative(ad.jac_t_mul(q, lam), hand.jac_t_mul(q, lam)));
    add("Hess(phi) v", relative(ad.hess_phi_mul(q, lam, v), hand.hess_phi_mul(q, lam, v)));
    add("Q^-1 r", relative(ad.gram(q).solve(lam), hand.gram(q).solve(lam)));
    add("{psi, H}", relative(ad.psi_h_bracket(z), hand.psi_h_bracket(z)));
    add("S nu (= 0)", relative(ad.s_mul(z, lam), Hand::Multipliers{{0.0}}));
    const Hand::Coords qb{{q[0] + 0.05 * u(rng), q[1] + 0.05 * u(rng)}};
    add("cross_gram^-1 r", relative(ad.cross_gram(q, qb).solve(lam), hand.cross_gram(q, qb).solve(lam)));
    add("rhs naive", rhs_difference<Naive>(ad, hand, z));
    add("rhs dirac", rhs_difference<HamiltonDirac>(ad, hand, z));
    add("rhs impetus", rhs_difference<ImpetusStriction>(ad, hand, z));
    add("rhs baumgarte", rhs_difference<Baumgarte>(ad, hand, z));
  }
  return worst;
}

TEST(AutoModel, PlanarPendulumEqualsTheHandWrittenPendulum) {
  for (std::uint64_t seed : {1u, 2u}) {
    const auto worst = pendulum_discrepancies(1.3, 0.8, 2.0, {1.3, 0.8, 2.0}, seed);
    report("AD pendulum vs pendulum.hpp", worst);
    for (const auto& [what, e] : worst) EXPECT_LE(e, 1e-14) << what << " (seed " << seed << ")";
  }
  // The comparison can fail: a user model whose rod is 0.1 % longer differs in phi (the
  // right-hand sides do not depend on l: only phi's derivatives enter them), one whose
  // gravity is 0.1 % stronger in every right-hand side, by far more than the bound.
  EXPECT_GT(pendulum_discrepancies(1.3, 0.8, 2.0, {1.3, 0.8008, 2.0}, 1).at("phi"), 1e-6);
  const auto heavier = pendulum_discrepancies(1.3, 0.8, 2.0, {1.3, 0.8, 2.002}, 1);
  EXPECT_GT(heavier.at("rhs dirac"), 1e-6);
  EXPECT_GT(heavier.at("rhs naive"), 1e-6);
}

// Perturbed pendulums integrated by both models, Hamilton-Dirac + RK4 with the momentum
// projection, and by RATTLE: the same trajectories to round-off accumulated over 2000 steps.
TEST(AutoModel, PlanarPendulumEnsembleEqualsTheHandWrittenOne) {
  const AdPendulum ad = make_model<PlanarPendulum>({1.3, 0.8, 2.0});
  const Hand hand{1.3, 0.8, 2.0};
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1e-3, 1e-3);
  double worst_rk4 = 0, worst_rattle = 0;
  for (int i = 0; i < 32; ++i) {
    Hand::State z0{{0.8 + u(rng), u(rng), u(rng), -2.0 + u(rng)}};
    position_project(hand, z0, 1e-15, 50);
    momentum_project(hand, z0);
    Hand::State za = z0, zh = z0;
    const HamiltonDirac<AdPendulum> sa{ad};
    const HamiltonDirac<Hand> sh{hand};
    const ExplicitRk<Rk4Tableau> rk4{};
    for (int s = 0; s < 2000; ++s) {
      Hand::State na, nh;
      rk4.step(sa, za, 0.005, na);
      rk4.step(sh, zh, 0.005, nh);
      momentum_project(ad, na);
      momentum_project(hand, nh);
      za = na;
      zh = nh;
    }
    worst_rk4 = std::max(worst_rk4, relative(za, zh));
    za = zh = z0;
    const Constrained<AdPendulum> ca{ad};
    const Constrained<Hand> ch{hand};
    const Rattle<double> rattle{1e-14, 50};
    for (int s = 0; s < 2000; ++s) {
      Hand::State na, nh;
      rattle.step(ca, za, 0.005, na);
      rattle.step(ch, zh, 0.005, nh);
      za = na;
      zh = nh;
    }
    worst_rattle = std::max(worst_rattle, relative(za, zh));
  }
  std::printf("[ measured ] AD vs hand-written pendulum after 2000 steps: dirac + rk4 %.2e, rattle %.2e\n", worst_rk4,
              worst_rattle);
  EXPECT_LE(worst_rk4, 1e-11);
  EXPECT_LE(worst_rattle, 1e-11);
}

// ---- 2. the example models against the dense oracle -------------------------------------------

// The oracle's H and phi from the spec's V and phi, with masses from the spec.
template <class Spec>
auto make_oracle(const Auto<Spec>& model) {
  constexpr int n = Spec::dof;
  const auto k = model.k;
  auto H = [k](const auto& q, const auto& p) {
    using T = typename std::decay_t<decltype(q)>::value_type;
    Vec<T, n> qv;
    for (int i = 0; i < n; ++i) qv[i] = q[static_cast<std::size_t>(i)];
    T t = T(0.0);
    for (int i = 0; i < n; ++i)
      t = t + p[static_cast<std::size_t>(i)] * p[static_cast<std::size_t>(i)] / (2.0 * Spec::mass(k, i));
    return t + Spec::potential(k, qv);
  };
  auto phi = [k](const auto& q) {
    using T = typename std::decay_t<decltype(q)>::value_type;
    Vec<T, n> qv;
    for (int i = 0; i < n; ++i) qv[i] = q[static_cast<std::size_t>(i)];
    const auto f = Spec::constraint(k, qv);
    return std::vector<T>(f.v, f.v + Spec::constraints);
  };
  return test::make_dense_dirac_oracle<n>(H, phi);
}

// Random states near the spec's default initial state: positions moved by up to 0.3 and
// projected onto the manifold (or left off it), momenta random (psi != 0) or projected.
template <class Spec>
std::vector<typename Auto<Spec>::State> states_near_default(const Auto<Spec>& model, std::uint64_t seed) {
  using M = Auto<Spec>;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double k[M::parameter_count], z0[M::state_size];
  for (int i = 0; i < M::parameter_count; ++i) k[i] = model.k[i];
  Spec::initial(k, z0);
  std::vector<typename M::State> out;
  for (int s = 0; s < 24; ++s) {
    typename M::State z;
    for (int i = 0; i < M::state_size; ++i) z[i] = z0[i] + (i < M::dof ? 0.3 : 1.0) * u(rng);
    if (s % 3 != 2) position_project(model, z, 1e-14, 50);
    if (s % 3 == 1) momentum_project(model, z);
    out.push_back(z);
  }
  return out;
}

template <class Spec>
std::map<std::string, double> oracle_discrepancies(const Auto<Spec>& model, std::uint64_t seed) {
  using M = Auto<Spec>;
  constexpr int n = M::dof, m = M::constraints;
  const auto oracle = make_oracle<Spec>(model);
  using O = decltype(oracle);
  std::mt19937_64 rng(seed + 3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::map<std::string, double> worst;
  auto add = [&](const std::string& what, double e) { worst[what] = std::max(worst[what], e); };
  Eigen::VectorXd w(n);
  for (int i = 0; i < n; ++i) w[i] = model.inv_mass[i];
  for (const typename M::State& z : states_near_default(model, seed)) {
    const auto Pt = oracle.at(to_eigen(z));
    const typename M::Coords q = M::q_of(z);
    const Eigen::MatrixXd J = Pt.grad_phi.leftCols(n);
    typename M::Coords v;
    typename M::Multipliers lam;
    for (int i = 0; i < n; ++i) v[i] = u(rng);
    for (int a = 0; a < m; ++a) lam[a] = u(rng);
    add("H", std::fabs(model.energy(z) - Pt.H) / (1 + std::fabs(Pt.H)));
    add("phi", relative(to_eigen(model.phi(q)), Pt.phi));
    add("psi", relative(to_eigen(model.psi(z)), Pt.psi));
    add("grad V", relative(to_eigen(model.grad_potential(q)), Pt.grad_H.head(n)));
    add("J v", relative(to_eigen(model.jac_mul(q, v)), J * to_eigen(v)));
    add("J^T lambda", relative(to_eigen(model.jac_t_mul(q, lam)), J.transpose() * to_eigen(lam)));
    // d psi / dq = Hess(phi_a) M^-1 p: sum_a lambda_a Hess(phi_a) v at v = M^-1 p.
    const typename M::Coords vp = model.minv_mul(M::p_of(z));
    add("Hess(phi) v",
        relative(to_eigen(model.hess_phi_mul(q, lam, vp)), Pt.grad_psi.leftCols(n).transpose() * to_eigen(lam)));
    const Eigen::MatrixXd Q = O::Q(Pt);
    add("Q", relative(Q, J * w.asDiagonal() * J.transpose()));
    add("Q (gram_matrix)", [&] {
      const auto A = model.gram_matrix(q);
      Eigen::MatrixXd E(m, m);
      for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b) E(a, b) = A.a[a][b];
      return relative(E, Q);
    }());
    add("Q^-1 r", relative(to_eigen(model.gram(q).solve(lam)), Q.fullPivLu().solve(to_eigen(lam))));
    typename M::Coords qb = q;
    for (int i = 0; i < n; ++i) qb[i] += 0.05 * u(rng);
    const Eigen::VectorXd zb = [&] {
      Eigen::VectorXd r = to_eigen(z);
      for (int i = 0; i < n; ++i) r[i] = qb[i];
      return r;
    }();
    const Eigen::MatrixXd A = J * w.asDiagonal() * oracle.at(zb).grad_phi.leftCols(n).transpose();
    add("cross_gram^-1 r", relative(to_eigen(model.cross_gram(q, qb).solve(lam)), A.fullPivLu().solve(to_eigen(lam))));
    add("S nu", relative(to_eigen(model.s_mul(z, lam)), O::S(Pt) * to_eigen(lam)));
    add("{psi, H}", relative(to_eigen(model.psi_h_bracket(z)), O::psi_H(Pt)));
    typename M::State dz;
    HamiltonDirac<M>{model}.rhs(z, dz);
    add("rhs dirac", relative(to_eigen(dz), O::dirac(Pt)));
    Naive<M>{model}.rhs(z, dz);
    add("rhs naive", relative(to_eigen(dz), O::naive(Pt)));
    ImpetusStriction<M>{model}.rhs(z, dz);
    add("rhs impetus", relative(to_eigen(dz), oracle.impetus(Pt)));
    const double alpha = 0.7, beta = 1.9;
    Baumgarte<M>{model, alpha, beta}.rhs(z, dz);
    const Eigen::VectorXd lb = Q.fullPivLu().solve(-O::psi_H(Pt) - 2 * alpha * Pt.psi - beta * beta * Pt.phi);
    Eigen::VectorXd want = O::hamiltonian_field(Pt.grad_H);
    want.tail(n) += J.transpose() * lb;
    add("rhs baumgarte", relative(to_eigen(dz), want));
  }
  return worst;
}

TEST(AutoModel, SphericalPendulumAgreesWithTheDenseOracle) {
  for (const auto& k : {std::vector<double>{}, std::vector<double>{2.5, 0.7, 9.81}}) {
    const auto worst = oracle_discrepancies<SphericalPendulum>(make_model<SphericalPendulum>(k), 5);
    report("spherical pendulum vs oracle", worst);
    for (const auto& [what, e] : worst) EXPECT_LE(e, 1e-13) << what;
  }
}

TEST(AutoModel, TriatomicAgreesWithTheDenseOracle) {
  for (const auto& k : {std::vector<double>{}, std::vector<double>{1.0, 12.0, 16.0, 1.1, 1.2, 1.5, 0.5, 2.0, 3.0}}) {
    const auto worst = oracle_discrepancies<Triatomic>(make_model<Triatomic>(k), 9);
    report("triatomic vs oracle", worst);
    for (const auto& [what, e] : worst) EXPECT_LE(e, 1e-13) << what;
  }
  // A mass off by 0.1 % in the model (not in the oracle's H) fails the comparisons.
  Auto<Triatomic> wrong = make_model<Triatomic>();
  const auto oracle_model = make_model<Triatomic>();
  wrong.inv_mass[4] *= 1.001;
  const auto oracle = make_oracle<Triatomic>(oracle_model);
  const auto z = states_near_default(oracle_model, 9)[0];
  Auto<Triatomic>::State dz;
  HamiltonDirac<Auto<Triatomic>>{wrong}.rhs(z, dz);
  EXPECT_GT(relative(to_eigen(dz), decltype(oracle)::dirac(oracle.at(to_eigen(z)))), 1e-6);
}

// n = 12, m = 6 (the sizes the GPU holds in registers): a rigid tetrahedron, fewer states (the
// oracle's nested duals cost O((2n)^2) per operation).
TEST(AutoModel, RigidTetrahedronAgreesWithTheDenseOracle) {
  const auto worst = oracle_discrepancies<RigidTetrahedron>(make_model<RigidTetrahedron>(), 13);
  report("rigid tetrahedron vs oracle", worst);
  for (const auto& [what, e] : worst) EXPECT_LE(e, 1e-13) << what;
}

// ---- 3. the spherical pendulum against spherical angles ---------------------------------------

// Lagrange's equations in the polar angle theta (from the downward vertical) and the azimuth
// varphi, q = l (sin t cos f, sin t sin f, -cos t):
//   theta'' = sin t cos t varphi'^2 - (g / l) sin t,   varphi'' = -2 cot t theta' varphi',
// in long double by RK4; regular while theta stays away from 0 and pi.
struct Angles {
  long double t, f, dt, df;
};
Angles angle_rhs(const Angles& a, long double gl) {
  using std::cos;
  using std::sin;
  return {a.dt, a.df, sin(a.t) * cos(a.t) * a.df * a.df - gl * sin(a.t), -2.0L * cos(a.t) / sin(a.t) * a.dt * a.df};
}
Angles angles_after(Angles a, long double gl, long double T, int n) {
  const long double h = T / n;
  auto axpy = [](const Angles& x, long double c, const Angles& k) {
    return Angles{x.t + c * k.t, x.f + c * k.f, x.dt + c * k.dt, x.df + c * k.df};
  };
  for (int s = 0; s < n; ++s) {
    const Angles k1 = angle_rhs(a, gl), k2 = angle_rhs(axpy(a, h / 2, k1), gl), k3 = angle_rhs(axpy(a, h / 2, k2), gl),
                 k4 = angle_rhs(axpy(a, h, k3), gl);
    a = Angles{a.t + h / 6 * (k1.t + 2 * k2.t + 2 * k3.t + k4.t), a.f + h / 6 * (k1.f + 2 * k2.f + 2 * k3.f + k4.f),
               a.dt + h / 6 * (k1.dt + 2 * k2.dt + 2 * k3.dt + k4.dt),
               a.df + h / 6 * (k1.df + 2 * k2.df + 2 * k3.df + k4.df)};
  }
  return a;
}
Vec<double, 6> cartesian(const Angles& a, long double m, long double l) {
  using std::cos;
  using std::sin;
  const long double st = sin(a.t), ct = cos(a.t), sf = sin(a.f), cf = cos(a.f);
  const long double vx = l * (a.dt * ct * cf - st * sf * a.df), vy = l * (a.dt * ct * sf + st * cf * a.df),
                    vz = l * a.dt * st;
  return Vec<double, 6>{
      {double(l * st * cf), double(l * st * sf), double(-l * ct), double(m * vx), double(m * vy), double(m * vz)}};
}

TEST(AutoModel, SphericalPendulumAgreesWithAnIntegrationInAngles) {
  const double m = 1.7, l = 0.9, g = 9.81, T = 3.0;
  const auto model = make_model<SphericalPendulum>({m, l, g});
  double k[3] = {m, l, g};
  Vec<double, 6> z0;
  SphericalPendulum::initial(k, z0.v);  // theta = 1, varphi = 0, theta' = 0.3, varphi' = 1.2
  const Angles a0{1.0L, 0.0L, 0.3L, 1.2L};
  ASSERT_LE(relative(cartesian(a0, m, l), z0), 1e-15);
  const Angles aT = angles_after(a0, g / static_cast<long double>(l), T, 30000);
  // theta stays in [0.3, 2.8] along the way (away from the poles): checked at the end and by
  // the angular momentum's bound sin^2 theta >= L_z^2 / (m^2 l^4 varphi'^2 ...), here directly.
  ASSERT_GT(static_cast<double>(aT.t), 0.3);
  ASSERT_LT(static_cast<double>(aT.t), 2.8);
  const Vec<double, 6> want = cartesian(aT, m, l);
  const HamiltonDirac<Auto<SphericalPendulum>> sys{model};
  const auto got = test::integrate_fixed(sys, ExplicitRk<Rk4Tableau>{}, z0, T, 6000);
  const double err = relative(got, want);
  std::printf("[ measured ] spherical pendulum, dirac + rk4 (h = 5e-4) vs angles (long double): %.2e\n", err);
  EXPECT_LE(err, 1e-9);
  const auto got_g2 = test::integrate_fixed(sys, ImplicitRk<Gauss2Tableau, double>{1e-15, 100}, z0, T, 3000);
  const double err_g2 = relative(got_g2, want);
  std::printf("[ measured ] spherical pendulum, dirac + gauss2 (h = 1e-3) vs angles: %.2e\n", err_g2);
  EXPECT_LE(err_g2, 1e-9);
}

TEST(AutoModel, RattleConservesTheSphericalPendulumsAngularMomentum) {
  const auto model = make_model<SphericalPendulum>({1.7, 0.9, 9.81});
  double k[3] = {1.7, 0.9, 9.81};
  Vec<double, 6> z;
  SphericalPendulum::initial(k, z.v);
  const double L0 = model.momentum_integrals(z)[2];
  const Constrained<Auto<SphericalPendulum>> sys{model};
  const Rattle<double> rattle{1e-14, 50};
  double worst = 0, worst_h = 0;
  const double H0 = model.energy(z);
  for (int s = 0; s < 20000; ++s) {
    Vec<double, 6> zn;
    ASSERT_TRUE(rattle.step(sys, z, 0.01, zn).finite);
    z = zn;
    worst = std::max(worst, std::fabs(model.momentum_integrals(z)[2] - L0));
    worst_h = std::max(worst_h, std::fabs(model.energy(z) - H0));
  }
  std::printf("[ measured ] RATTLE h = 0.01, 20000 steps: |L_z - L_z(0)| <= %.2e (L_z = %.3f), |H - H0| <= %.2e\n", worst,
              L0, worst_h);
  EXPECT_LE(worst, 2e-13);   // round-off: about 1e-16 per step at worst
  EXPECT_LE(worst_h, 1e-2);  // bounded, O(h^2) (not round-off: RATTLE is not energy-conserving)
}

// ---- 4. convergence orders on a user model ------------------------------------------------------

template <class System, class Method>
double triatomic_order(const System& sys, const Method& method, const std::vector<int>& steps, const Vec<double, 18>& z0,
                       const Vec<double, 18>& ref, double T, std::string* errs) {
  std::vector<double> hs, es;
  for (int n : steps) {
    const auto z = test::integrate_fixed(sys, method, z0, T, n);
    double e = 0;
    for (int i = 0; i < 18; ++i) e += (z[i] - ref[i]) * (z[i] - ref[i]);
    hs.push_back(T / n);
    es.push_back(std::sqrt(e));
    errs->append(" ").append(::testing::PrintToString(std::sqrt(e)));
  }
  return test::loglog_slope(hs, es);
}

TEST(AutoModel, ConvergenceOrdersOnTheTriatomicMolecule) {
  const auto model = make_model<Triatomic>();
  double k[9];
  for (int i = 0; i < 9; ++i) k[i] = model.k[i];
  Vec<double, 18> z0;
  Triatomic::initial(k, z0.v);
  const double T = 1.0;
  const HamiltonDirac<Auto<Triatomic>> dirac{model};
  // The reference: Gauss2 (order 4) with 4000 steps, error ~ 1e-15 here.
  const auto ref = test::integrate_fixed(dirac, ImplicitRk<Gauss2Tableau, double>{1e-15, 100}, z0, T, 4000);
  struct Row {
    const char* name;
    double nominal, observed;
    std::string errs;
  };
  std::vector<Row> rows;
  Row r{"dirac + rk4", 4, 0, ""};
  r.observed = triatomic_order(dirac, ExplicitRk<Rk4Tableau>{}, {20, 40, 80, 160}, z0, ref, T, &r.errs);
  rows.push_back(r);
  r = Row{"dirac + gauss2", 4, 0, ""};
  r.observed = triatomic_order(dirac, ImplicitRk<Gauss2Tableau, double>{1e-15, 100}, {10, 20, 40, 80}, z0, ref, T, &r.errs);
  rows.push_back(r);
  r = Row{"rattle", 2, 0, ""};
  r.observed = triatomic_order(Constrained<Auto<Triatomic>>{model}, Rattle<double>{1e-14, 50}, {50, 100, 200, 400}, z0, ref,
                               T, &r.errs);
  rows.push_back(r);
  for (const Row& row : rows) {
    std::printf("[ measured ] triatomic %s: order %.3f, errors%s\n", row.name, row.observed, row.errs.c_str());
    EXPECT_NEAR(row.observed, row.nominal, 0.15) << row.name << ": errors" << row.errs;
  }
}

// ---- 5. the small dense solves -----------------------------------------------------------------

TEST(DenseSolve, CholeskyLuAndConditionNumberAgreeWithEigen) {
  std::mt19937_64 rng(21);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double worst_chol = 0, worst_lu = 0, worst_cond = 0;
  for (int trial = 0; trial < 50; ++trial) {
    Eigen::MatrixXd B(6, 6);
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j) B(i, j) = u(rng);
    const Eigen::MatrixXd S = B * B.transpose() + 0.1 * Eigen::MatrixXd::Identity(6, 6);
    const Eigen::MatrixXd N = S + 0.05 * B;  // near an SPD matrix, as RATTLE's Newton matrix
    Mat<double, 6> As, An;
    Vec<double, 6> r;
    for (int i = 0; i < 6; ++i) {
      r[i] = u(rng);
      for (int j = 0; j < 6; ++j) {
        As.a[i][j] = S(i, j);
        An.a[i][j] = N(i, j);
      }
    }
    worst_chol = std::max(worst_chol, relative(to_eigen(DenseCholesky<double, 6>::factor(As).solve(r)),
                                               Eigen::MatrixXd(S.llt().solve(to_eigen(r)))));
    worst_lu = std::max(worst_lu, relative(to_eigen(DenseLu<double, 6>::factor(An).solve(r)),
                                           Eigen::MatrixXd(N.fullPivLu().solve(to_eigen(r)))));
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(S);
    const double cond = svd.singularValues()(0) / svd.singularValues()(5);
    worst_cond = std::max(worst_cond, std::fabs(spd_condition_number(As) - cond) / cond);
  }
  std::printf("[ measured ] dense solves vs Eigen: cholesky %.2e, lu %.2e, condition number %.2e\n", worst_chol, worst_lu,
              worst_cond);
  EXPECT_LE(worst_chol, 1e-11);
  EXPECT_LE(worst_lu, 1e-11);
  EXPECT_LE(worst_cond, 1e-10);
  // Dependent constraints: a singular Q has an infinite condition number, and its Cholesky
  // solve is not finite (never a silent wrong answer).
  Mat<double, 2> sing{{{1.0, 2.0}, {2.0, 4.0}}};
  EXPECT_GT(spd_condition_number(sing), 1e12);
  EXPECT_FALSE(all_finite(DenseCholesky<double, 2>::factor(sing).solve(Vec<double, 2>{{1.0, 1.0}})));
}

}  // namespace
}  // namespace chens
