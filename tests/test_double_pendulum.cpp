// The planar double pendulum in Cartesian coordinates (include/chens/models/double_pendulum.hpp;
// docs/adding-a-model.md, docs/reproductions/double-pendulum.md):
//   1. against an independent reference: the same motion integrated in the two angles
//      theta1, theta2 (the Lagrangian equations, written out below) in long double by RK4
//      with h = 1e-4, mapped to Cartesian coordinates; chens' Hamilton-Dirac equations
//      integrated by the study's numerical reference (DOPRI5, rtol = atol = 1e-12; measured
//      4.2e-11) and by RK4 with h = 2e-4 (3.2e-13) agree with it to 1e-9 over 5 s of
//      non-chaotic motion with masses and lengths all different; energy is conserved (to
//      2.4e-11, resp. 4.6e-13) and phi, psi stay at DOPRI5's tolerance (9.3e-13), resp. at
//      round-off (4.3e-14);
//   2. against the dense oracle (tests/support/dense_dirac_oracle.hpp, which knows only H and
//      phi and differentiates them automatically): phi, psi, H, grad V, J v, J^T lambda,
//      Q (gram solves), cross_gram, S, {psi, H} and the right-hand sides of the naive,
//      Hamilton-Dirac, impetus-striction and Baumgarte equations at random states on and
//      off the manifold, for three sets of masses and lengths, to 1e-13 relative (worst measured
//      3.2e-15); a model whose mass or length differs by 0.1 % fails the comparisons;
//   3. studies end to end (run_study_cpu and `chens run` / `chens check`): every formulation
//      and method pair the double pendulum has, RATTLE and the projections, with finite
//      results, no lost instances and the constraint residuals each scheme should leave;
//      bad input is refused (tests/test_study_cli.cpp's BadInput has the CLI cases).
// Measured values are printed as "[ measured ]" lines; the bounds hold them with margin.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <chens/ensemble/perturbation.hpp>
#include <chens/formulations/baumgarte.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/double_pendulum.hpp>
#include <chens/projections/momentum.hpp>
#include <chens/reference/numerical.hpp>

#include "cli/cli.hpp"
#include "dispatch/run_study.hpp"
#include "study/study.hpp"
#include "support/cli_runner.hpp"
#include "support/dense_dirac_oracle.hpp"
#include "support/eigen_vec.hpp"
#include "support/temp_dir.hpp"

namespace chens {
namespace {

using DP = DoublePendulum<double>;

// Masses and lengths all different, gravity as on earth.
struct Params {
  double m1 = 1.3, m2 = 0.7, l1 = 1.1, l2 = 0.8, g = 9.81;
  DP model() const { return DP{m1, m2, l1, l2, g}; }
};

// ---- 1. the angle formulation (independent of chens) ------------------------------------
// theta measured from the downward vertical: x1 = l1 sin th1, y1 = -l1 cos th1,
// x2 = x1 + l2 sin th2, y2 = y1 - l2 cos th2. From L = T - V,
//   (m1 + m2) l1 th1'' + m2 l2 th2'' cos d + m2 l2 th2'^2 sin d + (m1 + m2) g sin th1 = 0,
//   l2 th2'' + l1 th1'' cos d - l1 th1'^2 sin d + g sin th2 = 0,          d = th1 - th2.
using LD = long double;
struct Angles {
  LD th1, th2, w1, w2;
};

Angles angle_rhs(const Params& P, const Angles& a) {
  const LD m1 = P.m1, m2 = P.m2, l1 = P.l1, l2 = P.l2, g = P.g;
  const LD d = a.th1 - a.th2, c = std::cos(d), s = std::sin(d);
  const LD a11 = (m1 + m2) * l1, a12 = m2 * l2 * c, a21 = l1 * c, a22 = l2;
  const LD r1 = -m2 * l2 * a.w2 * a.w2 * s - (m1 + m2) * g * std::sin(a.th1);
  const LD r2 = l1 * a.w1 * a.w1 * s - g * std::sin(a.th2);
  const LD det = a11 * a22 - a12 * a21;
  return Angles{a.w1, a.w2, (r1 * a22 - a12 * r2) / det, (a11 * r2 - a21 * r1) / det};
}

Angles angle_rk4(const Params& P, Angles a, LD h) {
  auto axpy = [](const Angles& x, LD c, const Angles& k) {
    return Angles{x.th1 + c * k.th1, x.th2 + c * k.th2, x.w1 + c * k.w1, x.w2 + c * k.w2};
  };
  const Angles k1 = angle_rhs(P, a);
  const Angles k2 = angle_rhs(P, axpy(a, h / 2, k1));
  const Angles k3 = angle_rhs(P, axpy(a, h / 2, k2));
  const Angles k4 = angle_rhs(P, axpy(a, h, k3));
  const LD w = h / 6;
  return Angles{a.th1 + w * (k1.th1 + 2 * k2.th1 + 2 * k3.th1 + k4.th1),
                a.th2 + w * (k1.th2 + 2 * k2.th2 + 2 * k3.th2 + k4.th2), a.w1 + w * (k1.w1 + 2 * k2.w1 + 2 * k3.w1 + k4.w1),
                a.w2 + w * (k1.w2 + 2 * k2.w2 + 2 * k3.w2 + k4.w2)};
}

// The Cartesian state (q, p = M v) of an angle state.
DP::State cartesian(const Params& P, const Angles& a) {
  const LD x1 = P.l1 * std::sin(a.th1), y1 = -P.l1 * std::cos(a.th1);
  const LD x2 = x1 + P.l2 * std::sin(a.th2), y2 = y1 - P.l2 * std::cos(a.th2);
  const LD vx1 = P.l1 * a.w1 * std::cos(a.th1), vy1 = P.l1 * a.w1 * std::sin(a.th1);
  const LD vx2 = vx1 + P.l2 * a.w2 * std::cos(a.th2), vy2 = vy1 + P.l2 * a.w2 * std::sin(a.th2);
  return DP::State{{double(x1), double(y1), double(x2), double(y2), double(P.m1 * vx1), double(P.m1 * vy1),
                    double(P.m2 * vx2), double(P.m2 * vy2)}};
}

// Moderate, non-chaotic swings: |theta| <= ~0.5.
constexpr Angles kStart{0.3L, -0.2L, 0.4L, 0.1L};
constexpr double kSampleDt = 0.5;
constexpr int kSamples = 10;  // to t = 5

// The angle reference at t = k * kSampleDt, k = 0..kSamples (RK4, h = 1e-4, long double).
std::vector<DP::State> angle_reference(const Params& P) {
  constexpr int steps_per_sample = 5000;
  const LD h = LD(kSampleDt) / steps_per_sample;
  std::vector<DP::State> out{cartesian(P, kStart)};
  Angles a = kStart;
  for (int k = 1; k <= kSamples; ++k) {
    for (int i = 0; i < steps_per_sample; ++i) a = angle_rk4(P, a, h);
    out.push_back(cartesian(P, a));
  }
  return out;
}

double max_diff(const DP::State& a, const DP::State& b) { return max_abs(a - b); }

TEST(DoublePendulumMotion, DiracEquationsFollowTheAngleFormulation) {
  const Params P;
  const DP m = P.model();
  const std::vector<DP::State> ref = angle_reference(P);
  const DP::State z0 = ref[0];
  // The mapped initial state lies on the manifold to rounding.
  EXPECT_LE(max_abs(m.phi(DP::q_of(z0))), 1e-15);
  EXPECT_LE(max_abs(m.psi(z0)), 1e-15);
  const double H0 = m.energy(z0);

  // (a) the study's numerical reference: DOPRI5 on the Dirac equations, rtol = atol = 1e-12.
  RunParams<double> rp;
  rp.fixed_step = false;
  rp.t_end = kSampleDt * kSamples;
  rp.sample_dt = kSampleDt;
  rp.samples = kSamples;
  rp.h = 0.01;
  rp.reference = true;
  rp.reference_tol = 1e-12;
  auto num = NumericalReference<DP>::make(m, z0, rp);
  double dev_dopri = 0, res_dopri = 0, energy_dopri = 0;
  for (index_t k = 1; k <= rp.samples; ++k) {
    num.advance(m, rp, k);
    ASSERT_FALSE(num.failed());
    ASSERT_EQ(num.run.t, rp.sample_time(k));
    const DP::State z = num.eval(rp.sample_time(k));
    dev_dopri = std::max(dev_dopri, max_diff(z, ref[static_cast<std::size_t>(k)]));
    res_dopri = std::max({res_dopri, max_abs(m.phi(DP::q_of(z))), max_abs(m.psi(z))});
    energy_dopri = std::max(energy_dopri, std::fabs(m.energy(z) - H0));
  }

  // (b) RK4 with h = 2e-4 on the Dirac equations, through the per-instance step: its
  // truncation error in phi and psi (~ h^5 per step) is then below round-off.
  const HamiltonDirac<DP> sys{m};
  const ExplicitRk<Rk4Tableau> rk4;
  constexpr int steps_per_sample = 2500;
  DP::State z = z0;
  double dev_rk4 = 0, res_rk4 = 0, energy_rk4 = 0;
  for (int k = 1; k <= kSamples; ++k) {
    for (int i = 0; i < steps_per_sample; ++i) {
      DP::State zn;
      ASSERT_TRUE(rk4.step(sys, z, kSampleDt / steps_per_sample, zn).finite);
      z = zn;
      res_rk4 = std::max({res_rk4, max_abs(m.phi(DP::q_of(z))), max_abs(m.psi(z))});
    }
    dev_rk4 = std::max(dev_rk4, max_diff(z, ref[static_cast<std::size_t>(k)]));
    energy_rk4 = std::max(energy_rk4, std::fabs(m.energy(z) - H0));
  }
  std::printf("[ measured ] angle reference vs DOPRI5 1e-12: max |dz| %.2e, max |phi|,|psi| %.2e, max |H - H0| %.2e "
              "(%llu steps)\n",
              dev_dopri, res_dopri, energy_dopri, static_cast<unsigned long long>(num.run.c.steps));
  std::printf("[ measured ] angle reference vs RK4 h = 2e-4:  max |dz| %.2e, max |phi|,|psi| %.2e, max |H - H0| %.2e\n",
              dev_rk4, res_rk4, energy_rk4);
  EXPECT_LT(dev_dopri, 1e-9);
  EXPECT_LT(dev_rk4, 1e-9);
  EXPECT_LT(energy_dopri, 1e-10 * std::fabs(H0) + 1e-12);
  EXPECT_LT(energy_rk4, 1e-10 * std::fabs(H0) + 1e-12);
  EXPECT_LT(res_dopri, 1e-11);  // DOPRI5's tolerance (measured 9.3e-13)
  EXPECT_LT(res_rk4, 2e-13);    // round-off (measured 4.3e-14)
  // The motion did swing: the states moved by O(1).
  EXPECT_GT(max_diff(ref.back(), z0), 0.3);
}

TEST(DoublePendulumMotion, TheDefaultInitialStateIsConsistent) {
  const DP m{2.0, 0.5, 1.5, 0.75, 9.81};
  const DP::State z = DP::default_initial(m);
  EXPECT_EQ(max_abs(m.phi(DP::q_of(z))), 0.0);
  EXPECT_EQ(max_abs(m.psi(z)), 0.0);
  // Links horizontal, the rod turning downwards with angular velocity 1.
  EXPECT_EQ(z[0], 1.5);
  EXPECT_EQ(z[2], 2.25);
  EXPECT_EQ(z[5], -2.0 * 1.5);
  EXPECT_EQ(z[7], -0.5 * 2.25);
}

TEST(DoublePendulumMotion, PerturbedInstancesLieOnTheConstraintManifold) {
  const DP m = Params{}.model();
  const DP::State z0 = cartesian(Params{}, kStart);
  for (std::uint64_t i = 1; i < 50; ++i) {
    SCOPED_TRACE("seed 5, instance " + std::to_string(i));
    bool ok = false;
    const DP::State z = perturbed_initial_state(m, z0, 1e-2, 5, i, &ok);
    EXPECT_TRUE(ok);
    EXPECT_LE(max_abs(m.phi(DP::q_of(z))), 1e-15);
    EXPECT_LE(max_abs(m.psi(z)), 1e-14);
    EXPECT_GT(max_abs(z - z0), 1e-4);
  }
}

// ---- 2. the dense oracle ------------------------------------------------------------------
// H and phi from their definitions, with masses (not inverse masses) and r = |q| written
// differently from double_pendulum.hpp, for the oracle only.
struct Definition {
  Params P;
  template <class T>
  T hamiltonian(const std::vector<T>& q, const std::vector<T>& p) const {
    const T k1 = (p[0] * p[0] + p[1] * p[1]) / (2.0 * P.m1);
    const T k2 = (p[2] * p[2] + p[3] * p[3]) / (2.0 * P.m2);
    return k1 + k2 + P.m1 * P.g * q[1] + P.m2 * P.g * q[3];
  }
  template <class T>
  std::vector<T> constraints(const std::vector<T>& q) const {
    const T ex = q[2] - q[0], ey = q[3] - q[1];
    return {(q[0] * q[0] + q[1] * q[1] - P.l1 * P.l1) / 2.0, (ex * ex + ey * ey - P.l2 * P.l2) / 2.0};
  }
};

auto make_oracle(const Definition& def) {
  return test::make_dense_dirac_oracle<4>([def](const auto& q, const auto& p) { return def.hamiltonian(q, p); },
                                          [def](const auto& q) { return def.constraints(q); });
}

using test::to_eigen;
double relative(const Eigen::MatrixXd& got, const Eigen::MatrixXd& want) {  // vectors too
  return (got - want).lpNorm<Eigen::Infinity>() / (1.0 + want.lpNorm<Eigen::Infinity>());
}

// Random states: bobs at the link lengths (on the manifold) or moved off by up to 0.1,
// momenta uniform in [-2, 2] (psi != 0 in general) or projected onto psi = 0.
std::vector<DP::State> random_states(const Params& P, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> angle(-3.14159, 3.14159), mom(-2.0, 2.0), off(-0.1, 0.1);
  const DP m = P.model();
  std::vector<DP::State> out;
  for (int i = 0; i < 40; ++i) {
    const double a = angle(rng), b = angle(rng);
    DP::State z{{P.l1 * std::cos(a), P.l1 * std::sin(a), 0, 0, mom(rng), mom(rng), mom(rng), mom(rng)}};
    z[2] = z[0] + P.l2 * std::cos(b);
    z[3] = z[1] + P.l2 * std::sin(b);
    if (i % 4 == 1) momentum_project(m, z);  // on the manifold, psi = 0
    if (i % 4 >= 2)
      for (int c = 0; c < 4; ++c) z[c] += off(rng);  // off the manifold
    out.push_back(z);
  }
  return out;
}

// Worst discrepancy per quantity over the states, against the oracle of `def` for chens'
// model `m` (the same parameters, or a mutated model).
std::map<std::string, double> discrepancies(const DP& m, const Definition& def, std::uint64_t seed) {
  const auto oracle = make_oracle(def);
  using O = decltype(oracle);
  std::map<std::string, double> worst;
  auto add = [&](const std::string& what, double err) { worst[what] = std::max(worst[what], err); };
  std::mt19937_64 rng(seed + 1);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double alpha = 0.7, beta = 1.9;  // Baumgarte's parameters
  for (const DP::State& z : random_states(def.P, seed)) {
    const auto Pt = oracle.at(to_eigen(z));
    const DP::Coords q = DP::q_of(z);
    const Eigen::MatrixXd J = Pt.grad_phi.leftCols(4);
    Eigen::VectorXd w(4);  // diag M^-1
    w << 1 / def.P.m1, 1 / def.P.m1, 1 / def.P.m2, 1 / def.P.m2;
    const DP::Coords v{{u(rng), u(rng), u(rng), u(rng)}};
    const DP::Multipliers lam{{u(rng), u(rng)}};
    add("H", std::fabs(m.energy(z) - Pt.H) / (1 + std::fabs(Pt.H)));
    add("phi", relative(to_eigen(m.phi(q)), Pt.phi));
    add("psi", relative(to_eigen(m.psi(z)), Pt.psi));
    add("grad V", relative(to_eigen(m.grad_potential(q)), Pt.grad_H.head(4)));
    add("J v", relative(to_eigen(m.jac_mul(q, v)), J * to_eigen(v)));
    add("J^T lambda", relative(to_eigen(m.jac_t_mul(q, lam)), J.transpose() * to_eigen(lam)));
    // Q = {phi, psi}: Q^-1 r and Q x through the factor (Q x = r  <=>  gram.solve(r) = x).
    const Eigen::MatrixXd Q = O::Q(Pt);
    add("Q^-1 r", relative(to_eigen(m.gram(q).solve(lam)), Q.fullPivLu().solve(to_eigen(lam))));
    add("Q (J M^-1 J^T)", relative(Q, J * w.asDiagonal() * J.transpose()));
    // cross_gram: J(qa) M^-1 J(qb)^T with qb the state's own q moved off.
    DP::State zb = z;
    for (int c = 0; c < 4; ++c) zb[c] += 0.05 * u(rng);
    const Eigen::MatrixXd Jb = oracle.at(to_eigen(zb)).grad_phi.leftCols(4);
    const Eigen::MatrixXd A = J * w.asDiagonal() * Jb.transpose();
    add("cross_gram^-1 r", relative(to_eigen(m.cross_gram(q, DP::q_of(zb)).solve(lam)), A.fullPivLu().solve(to_eigen(lam))));
    // S = {psi, psi}, column by column.
    const Eigen::MatrixXd S = O::S(Pt);
    Eigen::MatrixXd Sc(2, 2);
    Sc.col(0) = to_eigen(m.s_mul(z, DP::Multipliers{{1.0, 0.0}}));
    Sc.col(1) = to_eigen(m.s_mul(z, DP::Multipliers{{0.0, 1.0}}));
    add("S", relative(Sc, S));
    add("{psi, H}", relative(to_eigen(m.psi_h_bracket(z)), O::psi_H(Pt)));
    // The right-hand sides (which also exercise sum_a lambda_a Hess(phi_a) v).
    DP::State dz;
    Naive<DP>{m}.rhs(z, dz);
    add("naive rhs", relative(to_eigen(dz), O::naive(Pt)));
    HamiltonDirac<DP>{m}.rhs(z, dz);
    add("dirac rhs", relative(to_eigen(dz), O::dirac(Pt)));
    add("dirac: grad phi . z'", (Pt.grad_phi * to_eigen(dz)).lpNorm<Eigen::Infinity>() / (1 + to_eigen(dz).norm()));
    add("dirac: grad psi . z'",
        (Pt.grad_psi * to_eigen(dz)).lpNorm<Eigen::Infinity>() / ((1 + Pt.grad_psi.norm()) * (1 + to_eigen(dz).norm())));
    const ImpetusStriction<DP> imp{m};
    imp.rhs(z, dz);
    add("impetus rhs", relative(to_eigen(dz), oracle.impetus(Pt)));
    add("impetus physical", relative(to_eigen(imp.physical(z)), O::impetus_physical(Pt)));
    // Baumgarte: the Hamiltonian field plus J^T lambda, Q lambda = -{psi, H} - 2 alpha psi - beta^2 phi.
    const Eigen::VectorXd lb = Q.fullPivLu().solve(-O::psi_H(Pt) - 2 * alpha * Pt.psi - beta * beta * Pt.phi);
    Eigen::VectorXd want = O::hamiltonian_field(Pt.grad_H);
    want.tail(4) += J.transpose() * lb;
    Baumgarte<DP>{m, alpha, beta}.rhs(z, dz);
    add("baumgarte rhs", relative(to_eigen(dz), want));
  }
  return worst;
}

TEST(DoublePendulumOracle, PrimitivesAndRightHandSidesAgreeWithTheDenseOracle) {
  // Non-uniform masses and lengths (mass ratio 3.3, length ratio 2.2), and the unit model.
  const Params configs[] = {{1.3, 0.7, 1.1, 0.8, 9.81}, {0.6, 2.0, 0.5, 1.1, 1.0}, {1, 1, 1, 1, 1}};
  std::uint64_t seed = 20261127;
  for (const Params& P : configs) {
    SCOPED_TRACE("m1 = " + std::to_string(P.m1) + ", m2 = " + std::to_string(P.m2) + ", l1 = " + std::to_string(P.l1) +
                 ", l2 = " + std::to_string(P.l2) + ", g = " + std::to_string(P.g) + ", seed " + std::to_string(seed));
    const auto worst = discrepancies(P.model(), Definition{P}, seed++);
    for (const auto& [what, err] : worst) {
      std::printf("[ measured ] m1=%.1f m2=%.1f l1=%.1f l2=%.1f %-22s %.2e\n", P.m1, P.m2, P.l1, P.l2, what.c_str(), err);
      EXPECT_LE(err, 1e-13) << what;  // measured <= 3.2e-15
    }
  }
}

TEST(DoublePendulumOracle, AModelOffByATenthOfAPercentFails) {
  // The comparisons can fail: m2 (resp. l2) 0.1 % off in chens' model.
  const Params P;
  DP mass_off = P.model(), length_off = P.model();
  mass_off.m2 *= 1.001;
  length_off.l2 *= 1.001;
  const auto a = discrepancies(mass_off, Definition{P}, 7);
  const auto b = discrepancies(length_off, Definition{P}, 7);
  EXPECT_GT(a.at("dirac rhs"), 1e-5);
  EXPECT_GT(a.at("S"), 1e-5);
  EXPECT_GT(b.at("phi"), 1e-5);
}

// ---- 3. studies end to end ------------------------------------------------------------------
Study study_of(FormulationId f, MethodId m) {
  const Params P;
  Study s;
  s.model_kind = ModelKind::double_pendulum;
  s.masses = {P.m1, P.m2};
  s.model_values["model.lengths"] = std::vector<double>{P.l1, P.l2};  // its own key (double_pendulum.cpp)
  s.gravity = P.g;
  const DP::State z0 = cartesian(P, kStart);
  s.initial.assign(z0.v, z0.v + DP::state_size);
  s.formulation = f;
  s.method = m;
  s.h = 0.01;
  s.t_end = 2.0;
  s.sample_dt = 0.5;
  s.size = 70;  // more than one block of 64
  s.perturbation = 1e-3;
  s.seed = 3;
  s.reference = "auto";
  for (const char* k : {"model.kind", "model.masses", "model.lengths", "model.gravity", "model.initial"}) s.given.insert(k);
  return s;
}

struct Case {
  const char* name;
  FormulationId formulation;
  MethodId method;
  bool position = false, momentum = false;
  const char* scheme = "endpoint";
  double max_error;  // integration error at t = 2, all instances
  double max_phi;    // |phi| at every sample
  double max_psi;    // |psi| at every sample
};

TEST(DoublePendulumStudy, EveryFormulationAndMethodRunsWithTheExpectedResiduals) {
  using F = FormulationId;
  using M = MethodId;
  // Bounds: about 10x the measured values (printed; in brackets below), except where a scheme
  // guarantees one: the position projection to projection.tol = 1e-10 (psi is not: the
  // momentum projection is decided from the step's result, before the position projection
  // moves q, 002 §11), RATTLE's phi to integrator.tol = 1e-12, the impetus formulation's
  // physical psi = 0 by construction, and the Gauss methods, which keep the quadratic
  // invariants phi and psi (and H, quadratic here) of the Dirac flow to the iteration's tol.
  const Case cases[] = {
      {"naive euler", F::naive, M::euler, false, false, "endpoint", 3.0, 0.4, 0.3},  // [0.37, 0.042, 0.028]
      {"naive rk2", F::naive, M::rk2, false, false, "endpoint", 4e-2, 2e-3, 2e-3},   // [3.7e-3, 1.9e-4, 1.7e-4]
      {"naive rk4", F::naive, M::rk4, false, false, "endpoint", 1e-5, 3e-6, 3e-6},   // [6.2e-7, 3.0e-7, 3.4e-7]
      {"naive rk4 + projections", F::naive, M::rk4, true, true, "endpoint", 1e-5, 1e-10,
       3e-9},                                                                                   // [6.1e-7, 8.9e-16, 2.8e-10]
      {"dirac rk4", F::dirac, M::rk4, false, false, "endpoint", 1e-5, 4e-8, 1e-6},              // [7.3e-7, 3.8e-9, 1.2e-7]
      {"dirac dopri5", F::dirac, M::dopri5, false, false, "endpoint", 2e-7, 4e-9, 2e-8},        // [1.5e-8, 3.8e-10, 1.5e-9]
      {"dirac midpoint", F::dirac, M::midpoint, false, false, "endpoint", 3e-2, 1e-12, 1e-11},  // [2.5e-3, 1.8e-14, 4.3e-13]
      {"dirac gauss2", F::dirac, M::gauss2, false, false, "endpoint", 2e-6, 1e-12, 1e-12},      // [2.1e-7, 8.3e-15, 4.9e-14]
      {"dirac midpoint, stage projection", F::dirac, M::midpoint, true, true, "midpoint", 2e-2, 3e-5, 4e-3},
      // [1.9e-3, 2.4e-6, 3.9e-4]: the stage is projected, the end point is not (004 §4)
      {"impetus rk4", F::impetus, M::rk4, false, false, "endpoint", 1e-5, 1e-7, 1e-13},     // [9.5e-7, 8.0e-9, 1.4e-14]
      {"baumgarte rk4", F::baumgarte, M::rk4, false, false, "endpoint", 1e-5, 1e-6, 1e-6},  // [4.4e-7, 9.4e-8, 6.7e-8]
      {"rattle", F::constrained, M::rattle, false, false, "endpoint", 2e-2, 1e-12, 1e-13},  // [1.8e-3, 9.8e-15, 1.7e-16]
      {"rattle + projections", F::constrained, M::rattle, true, true, "endpoint", 2e-2, 1e-12,
       1e-13},  // the same: none fires
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Study s = study_of(c.formulation, c.method);
    s.position = c.position;
    s.momentum = c.momentum;
    s.projection_tol = 1e-10;
    s.projection_scheme = c.scheme;
    if (c.method == M::dopri5) {
      s.rtol = 1e-8;
      s.atol = 1e-10;
    }
    if (c.method == M::midpoint || c.method == M::gauss2 || c.method == M::rattle) s.tol = 1e-12;
    const RunParams<double> rp = resolve(s);
    const EnsembleResult r = run_study_cpu(s, rp, ensemble_spec(s, 1));
    ASSERT_TRUE(r.reference_available);
    EXPECT_EQ(r.lost_total(), 0u);
    EXPECT_EQ(r.instances, 70u);
    EXPECT_FALSE(r.momentum_metrics);
    ASSERT_EQ(r.series.size(), 5u);
    double phi = 0, psi = 0;
    for (const SampleStats& st : r.series) {
      for (int m = 0; m < 4; ++m) EXPECT_TRUE(std::isfinite(st.metric[m].max)) << metric_name(m) << " at t = " << st.t;
      phi = std::max(phi, st.metric[int(MetricId::phi)].max);
      psi = std::max(psi, st.metric[int(MetricId::psi)].max);
    }
    const double err = r.series.back().metric[int(MetricId::integration_error)].max;
    const double energy = r.series.back().metric[int(MetricId::energy_error)].max;
    std::printf("[ measured ] %-34s error %.2e  energy %.2e  |phi| %.2e  |psi| %.2e  steps %llu  projections %llu/%llu\n",
                c.name, err, energy, phi, psi, static_cast<unsigned long long>(r.totals.steps),
                static_cast<unsigned long long>(r.totals.position_projections),
                static_cast<unsigned long long>(r.totals.momentum_projections));
    EXPECT_GT(err, 0.0);
    EXPECT_LE(err, c.max_error);
    EXPECT_LE(phi, c.max_phi);
    EXPECT_LE(psi, c.max_psi);
    if (c.position && std::string(c.scheme) == "endpoint" && c.method != M::rattle) {
      EXPECT_GT(r.totals.position_projections + r.totals.momentum_projections, 0u);
    }
    EXPECT_EQ(r.state_names, (std::vector<std::string>{"x1", "y1", "x2", "y2", "px1", "py1", "px2", "py2"}));
    EXPECT_NE(r.reference_kind.find("numerical"), std::string::npos) << r.reference_kind;
  }
}

TEST(DoublePendulumStudy, ResultsAreBitwiseIdenticalForAnyThreadCount) {
  const Study s = study_of(FormulationId::dirac, MethodId::rk4);
  const RunParams<double> rp = resolve(s);
  const EnsembleResult a = run_study_cpu(s, rp, ensemble_spec(s, 1)), b = run_study_cpu(s, rp, ensemble_spec(s, 2));
  ASSERT_EQ(a.series.size(), b.series.size());
  for (std::size_t k = 0; k < a.series.size(); ++k)
    for (int m = 0; m < metric_count; ++m) {
      EXPECT_EQ(a.series[k].metric[m].mean, b.series[k].metric[m].mean);
      EXPECT_EQ(a.series[k].metric[m].max, b.series[k].metric[m].max);
    }
  EXPECT_EQ(a.instance0_physical, b.instance0_physical);
}

using test::CliResult;
using test::run_cli;

TEST(DoublePendulumCli, RunWritesTheStudyAndTheDoublePendulumState) {
  test::TempDir dir;
  const std::string out = dir.str("out");
  const CliResult r =
      run_cli({"run", "--single", "--set", "model.kind=double-pendulum", "--set", "model.masses=[1.5, 0.5]", "--set",
               "model.lengths=[1.0, 0.5]", "--set", "integrator.t_end=2", "--set", "ensemble.size=5", "--set",
               "output.reference=auto", "--set", "output.trajectory=true", "--out", out, "--no-progress"});
  ASSERT_EQ(r.code, exit_ok) << r.err;
  std::ifstream f(out + "/summary.json");
  const nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_EQ(j["study"]["model"]["kind"], "double-pendulum");
  EXPECT_EQ(j["study"]["model"]["masses"], nlohmann::json::array({1.5, 0.5}));
  EXPECT_EQ(j["study"]["model"]["lengths"], nlohmann::json::array({1.0, 0.5}));
  EXPECT_FALSE(j["study"]["model"].contains("mass"));
  EXPECT_FALSE(j["study"]["model"].contains("atoms"));
  // The default initial state: links horizontal, the rod turning down with angular velocity 1.
  EXPECT_EQ(j["study"]["model"]["initial"], nlohmann::json::array({1.0, 0.0, 1.5, 0.0, 0.0, -1.5, 0.0, -0.75}));
  for (const char* metric : {"integration_error", "energy_error", "phi", "psi"})
    EXPECT_TRUE(j[metric]["final_max"].is_number()) << metric;
  std::ifstream t(out + "/trajectory.csv");
  std::string header;
  std::getline(t, header);
  EXPECT_NE(header.find("x1,y1,x2,y2,px1,py1,px2,py2"), std::string::npos) << header;
  // --dry-run prints the study as given, and it reads back.
  const CliResult dry = run_cli({"run", "--single", "--dry-run", "--set", "model.kind=double-pendulum", "--set",
                                 "model.length=0.5", "--set", "model.masses=[2, 3]"});
  ASSERT_EQ(dry.code, exit_ok) << dry.err;
  EXPECT_NE(dry.out.find("kind = \"double-pendulum\""), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("masses = [2.0, 3.0]"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("length = 0.5"), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find("lengths"), std::string::npos) << dry.out;
}

TEST(DoublePendulumCli, CheckValidatesAndBadInputIsRefused) {
  test::TempDir dir;
  const CliResult ok = run_cli({"check", "--single", "--set", "model.kind=double-pendulum", "--set",
                                "integrator.method=rattle", "--set", "projection.momentum=true", "--backend", "cpu"});
  ASSERT_EQ(ok.code, exit_ok) << ok.err;
  EXPECT_NE(ok.out.find(": valid, 1 run"), std::string::npos) << ok.out;
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      // (more in tests/test_study_cli.cpp's BadInput: wrong initial size, a negative length,
      // three masses, a link off its length, a pendulum-only formulation)
      {{"model.length=-1"}, "model.length = -1: must be a finite number > 0"},
      {{"model.lengths=[1, 2]", "model.length=1"}, "model.length and model.lengths are both given"},
      {{"model.masses=[1, 2]", "model.mass=1"}, "model.mass and model.masses are both given"},
      {{"model.initial=[0, 0, 1, 0, 0, 0, 0, 0]"}, "model.initial: link 1 (pivot to bob 1) has length 0, but l1 = 1"},
      {{"integrator.formulation=impetus-modified"},
       "integrator.formulation = \"impetus-modified\": model.kind "
       "= \"double-pendulum\" has \"naive\""},
      {{"integrator.precision=float", "integrator.formulation=naive"}, "integrator.precision = \"float\" is built for"},
      {{"output.wedge=true"}, "output.wedge is written for model.kind = \"pendulum\" and \"penalty-pendulum\""},
      {{"model.atoms=7"}, "model.atoms applies to model.kind = \"chain\" only"},
      {{"output.phase_error=[1]"}, "output.phase_error measures the pendulum's phase"},
  };
  for (const auto& [sets, message] : bad) {
    std::vector<std::string> args = {"check", "--single", "--set", "model.kind=double-pendulum"};
    for (const std::string& set : sets) {
      args.push_back("--set");
      args.push_back(set);
    }
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.code, exit_bad_input) << sets.front();
    EXPECT_NE(r.err.find(message), std::string::npos) << sets.front() << ": stderr was " << r.err;
  }
  // model.lengths is the double pendulum's.
  const CliResult pend = run_cli({"check", "--single", "--set", "model.lengths=[1, 2]"});
  EXPECT_EQ(pend.code, exit_bad_input);
  EXPECT_NE(pend.err.find("model.lengths applies to model.kind = \"double-pendulum\" only"), std::string::npos) << pend.err;
}

}  // namespace
}  // namespace chens
