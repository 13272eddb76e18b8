// The chain molecule (include/chens/models/chain.hpp) and the generic formulations over it
// (Hamilton-Dirac, naive, impetus-striction) against the dense oracle of
// tests/support/dense_dirac_oracle.hpp, which knows only H and phi, written below from
// their definitions (002 eqs. 39-41, general masses), and derives psi, Q = {phi, psi},
// S = {psi, psi}, {psi, H}, C = {chi, chi} and the vector fields by nested automatic
// differentiation and dense full-pivoting LU.
//
// For N = 3, 7, 16 atoms and four models (unit and non-uniform masses, mass ratio up to 10;
// (L, eps) = (1, 0.1), the paper's, and (1.25, 0.6)) at seeded points on the constraint
// manifold (the default initial data, a nearly straight chain where Q is worst conditioned,
// two random self-avoiding chains; exact bond lengths, momenta projected onto psi = 0 by the
// oracle) and off it (each of those perturbed by a random vector of size 1e-2..1e-1):
//   - phi, psi, energy, grad V, J v, J^T lambda, Q (through gram(q).solve), cross_gram,
//     S (s_mul), {psi, H} and the right-hand sides of all three formulations (impetus: also
//     physical()) agree with the oracle;
//   - the Dirac field keeps phi and psi as strong invariants: grad phi . z' = grad psi . z' = 0
//     off the manifold (gradients from the oracle, and by central differences of chens' own
//     phi and psi); the naive field has phi' = psi, psi' = 0 (the sign of its multiplier);
//   - on the manifold the Dirac and naive fields agree (and impetus moves q the same way);
//   - N = 7 default initial data: the numbers of docs/numerics.md / 002 §7;
//   - mutation: a model whose mass w[2] (or eps) differs by 0.1% from the oracle's fails the
//     comparisons by orders of magnitude, so the comparisons can fail.
//
// Discrepancy measure ("relative"): ||got - want||_inf / (1 + ||want||_inf), want = oracle.
// Tolerances, with the worst discrepancies measured over all samples (g++ 12, -O2; printed
// by the tests as "[ worst ]" lines), all at least ~50x below the tolerance:
//   kTolValue  = 1e-13  phi, psi, energy, grad V, J v, J^T lambda, S nu, {psi, H}: a few
//                       roundings of O(1) quantities, O(N^2) for the LJ sums (worst 2.2e-15);
//   kTolSolve  = 1e-12  Q^-1 r, cross_gram solves: forward error ~ cond(Q) u, and cond_1(Q)
//                       reaches ~3.4e2 for the straight 16-atom chain (worst 3.8e-15);
//   kTolRhs    = 1e-12  right-hand sides and physical(): up to three Q-solves chained plus the
//                       LJ gradient (worst 6.6e-15);
//   kTolInvariant = 1e-13  |grad chi . z' - expected| / (||grad chi||_2 ||z'||_2): cancellation
//                       in one dot product (worst 7.2e-16);
//   kTolOnManifold = 1e-13 Dirac vs naive on the manifold, where they differ only by terms
//                       proportional to psi ~ 1e-16 (worst 1.9e-15).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/models/chain.hpp>

#include "support/dense_dirac_oracle.hpp"
#include "support/dense_oracle.hpp"
#include "support/eigen_vec.hpp"

namespace chens {
namespace {

constexpr double kTolValue = 1e-13;
constexpr double kTolSolve = 1e-12;
constexpr double kTolRhs = 1e-12;
constexpr double kTolInvariant = 1e-13;
constexpr double kTolOnManifold = 1e-13;

constexpr std::uint64_t kBaseSeed = 20261125;

// ---- the chain from its definition, for the oracle only (002 eqs. 39-41) ---------------
//   H = sum_i |p_i|^2 / (2 m_i) + eps sum_{i<j} (r_ij^-12 - 2 r_ij^-6),
//   phi_a = (|q_{a+1} - q_a|^2 - L^2) / 2,  q = (x_0, y_0, x_1, y_1, ...).
// Written with r = sqrt(dx^2 + dy^2) and masses (not inverse masses) on purpose, so that it
// shares no expression with chain.hpp.
template <int N>
struct ChainDefinition {
  std::array<double, N> mass;
  double L;
  double eps;

  template <class T>
  T hamiltonian(const std::vector<T>& q, const std::vector<T>& p) const {
    using std::sqrt;
    T kinetic(0.0);
    for (int i = 0; i < N; ++i) kinetic = kinetic + (p[2 * i] * p[2 * i] + p[2 * i + 1] * p[2 * i + 1]) / (2.0 * mass[i]);
    T v(0.0);
    for (int i = 0; i < N; ++i) {
      for (int j = i + 1; j < N; ++j) {
        const T dx = q[2 * j] - q[2 * i], dy = q[2 * j + 1] - q[2 * i + 1];
        const T r = sqrt(dx * dx + dy * dy);
        const T r3 = r * r * r;
        const T inv6 = 1.0 / (r3 * r3);
        v = v + (inv6 * inv6 - 2.0 * inv6);
      }
    }
    return kinetic + eps * v;
  }
  template <class T>
  std::vector<T> constraints(const std::vector<T>& q) const {
    std::vector<T> c;
    for (int a = 0; a + 1 < N; ++a) {
      const T dx = q[2 * a + 2] - q[2 * a], dy = q[2 * a + 3] - q[2 * a + 1];
      c.push_back((dx * dx + dy * dy - L * L) / 2.0);
    }
    return c;
  }
};

template <int N>
auto make_oracle(const ChainDefinition<N>& def) {
  return test::make_dense_dirac_oracle<2 * N>([def](const auto& q, const auto& p) { return def.hamiltonian(q, p); },
                                              [def](const auto& q) { return def.constraints(q); });
}

// ---- conversions and comparisons ------------------------------------------------------
using test::from_eigen;
using test::to_eigen;

double inf_norm(const Eigen::VectorXd& v) { return v.lpNorm<Eigen::Infinity>(); }
double relative(const Eigen::VectorXd& got, const Eigen::VectorXd& want) {
  return inf_norm(got - want) / (1.0 + inf_norm(want));
}

// Worst discrepancy per quantity, printed at the end of a test.
struct Tally {
  std::map<std::string, double> worst;
  void add(const std::string& what, double err) {
    auto it = worst.find(what);
    if (it == worst.end() || err > it->second) worst[what] = err;
  }
  void print(const char* test, int atoms) const {  // atoms = 0: not a chain
    const std::string n = atoms > 0 ? " N=" + std::to_string(atoms) : "";
    for (const auto& [what, err] : worst) std::printf("[ worst    ] %s%s %-30s %.2e\n", test, n.c_str(), what.c_str(), err);
  }
};

::testing::AssertionResult agree(const std::string& what, const Eigen::VectorXd& got, const Eigen::VectorXd& want,
                                 double tol, Tally& tally) {
  const double err = relative(got, want);
  tally.add(what, err);
  if (err <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": relative discrepancy " << err << " > " << tol
                                       << "\n  chens  = " << got.transpose() << "\n  oracle = " << want.transpose();
}

// ---- models -----------------------------------------------------------------------------
struct Config {
  const char* name;
  double L;
  double eps;
  bool unit_mass;
};
constexpr Config kConfigs[] = {
    {"unit masses, L=1, eps=0.1", 1.0, 0.1, true},
    {"non-uniform masses, L=1, eps=0.1", 1.0, 0.1, false},
    {"unit masses, L=1.25, eps=0.6", 1.25, 0.6, true},
    {"non-uniform masses, L=1.25, eps=0.6", 1.25, 0.6, false},
};
constexpr int kConfigCount = sizeof(kConfigs) / sizeof(kConfigs[0]);

template <int N>
struct Setup {
  ChainDefinition<N> def;
  Chain<double, N> model;
};

// Non-uniform masses in [0.3, 3] (a mass ratio up to 10), from a fixed seed.
template <int N>
Setup<N> make_setup(const Config& c) {
  Setup<N> s;
  s.def.L = c.L;
  s.def.eps = c.eps;
  std::mt19937_64 rng(kBaseSeed + 7 * N);
  std::uniform_real_distribution<double> mass(0.3, 3.0);
  for (int i = 0; i < N; ++i) s.def.mass[i] = c.unit_mass ? 1.0 : mass(rng);
  s.model = Chain<double, N>::uniform(c.L, c.eps);
  for (int i = 0; i < N; ++i) s.model.w[i] = 1.0 / s.def.mass[i];
  return s;
}

// Random planar chain with bonds of length exactly L (up to rounding), turning angles in
// [-max_turn, max_turn] (at most 2pi/3) and every non-bonded pair at least 0.85 L apart
// (no LJ blow-up); velocities uniform in [-1, 1]^2, p = m v. Momenta are NOT yet consistent.
template <int N>
Eigen::VectorXd random_chain(const ChainDefinition<N>& def, double max_turn, std::mt19937_64& rng) {
  constexpr double pi = std::numbers::pi;
  std::uniform_real_distribution<double> unit(-1.0, 1.0), angle(-pi, pi), turn(-max_turn, max_turn);
  Eigen::VectorXd z(4 * N);
  for (;;) {
    z[0] = 2.0 * unit(rng);
    z[1] = 2.0 * unit(rng);
    double th = angle(rng);
    bool ok = true;
    for (int i = 1; i < N && ok; ++i) {
      int tries = 0;
      for (;; ++tries) {
        if (tries == 200) {
          ok = false;
          break;
        }
        const double t = th + (i > 1 ? turn(rng) : 0.0);
        const double x = z[2 * i - 2] + def.L * std::cos(t), y = z[2 * i - 1] + def.L * std::sin(t);
        bool clear = true;
        for (int j = 0; j + 1 < i; ++j) clear = clear && std::hypot(x - z[2 * j], y - z[2 * j + 1]) >= 0.85 * def.L;
        if (clear) {
          z[2 * i] = x;
          z[2 * i + 1] = y;
          th = t;
          break;
        }
      }
    }
    if (ok) break;
  }
  for (int i = 0; i < N; ++i) {
    z[2 * N + 2 * i] = def.mass[i] * unit(rng);
    z[2 * N + 2 * i + 1] = def.mass[i] * unit(rng);
  }
  return z;
}

// A point of the sample: on the manifold (phi = 0 up to rounding, momenta projected onto
// psi = 0 by the oracle's mass-orthogonal projection) or a perturbation of one.
struct Sample {
  std::uint64_t seed;
  bool on_manifold;
  Eigen::VectorXd z;
};

// Per (N, config): the default initial data, a nearly straight random chain (turning
// angles within 0.15 rad: Q is then worst conditioned, ~ (N / pi)^2 times the mass ratio),
// two random chains, and a perturbation of each (on, off, on, off, ...).
template <int N, class Oracle>
std::vector<Sample> samples(const Setup<N>& s, const Oracle& oracle, int config) {
  std::vector<Sample> out;
  for (int k = 0; k < 4; ++k) {
    const std::uint64_t seed = kBaseSeed + 1000 * N + 100 * config + k;
    std::mt19937_64 rng(seed);
    Eigen::VectorXd on;
    if (k == 0) {
      on = to_eigen(Chain<double, N>::default_initial(s.model));
    } else {
      const double max_turn = k == 1 ? 0.15 : 2.0 * std::numbers::pi / 3.0;
      on = oracle.impetus_physical(oracle.at(random_chain(s.def, max_turn, rng)));
    }
    out.push_back({seed, true, on});
    std::uniform_real_distribution<double> unit(-1.0, 1.0), log_size(std::log(1e-2), std::log(1e-1));
    const double size = std::exp(log_size(rng));
    Eigen::VectorXd off = on;
    for (int i = 0; i < off.size(); ++i) off[i] += size * unit(rng);
    out.push_back({seed, false, off});
  }
  return out;
}

// Everything the tests of one N share, computed once (the oracle costs O((4N)^2) per
// arithmetic operation): per config the model, the oracle, the samples and the oracle's
// evaluation at each of them.
template <int N>
using OracleOf = decltype(make_oracle(std::declval<ChainDefinition<N>>()));

template <int N>
struct Case {
  int config;
  Setup<N> setup;
  OracleOf<N> oracle;
  std::vector<Sample> samples;
  std::vector<typename OracleOf<N>::Point> points;
  explicit Case(int c) : config(c), setup(make_setup<N>(kConfigs[c])), oracle(make_oracle(setup.def)) {
    samples = chens::samples(setup, oracle, c);
    for (const Sample& smp : samples) points.push_back(oracle.at(smp.z));
  }
};

template <int N>
const std::vector<Case<N>>& cases() {
  static const std::vector<Case<N>> all = [] {
    std::vector<Case<N>> v;
    for (int c = 0; c < kConfigCount; ++c) v.emplace_back(c);
    return v;
  }();
  return all;
}

std::string trace(const Config& c, const Sample& s, int atoms) {
  return "N=" + std::to_string(atoms) + ", " + c.name + ", seed " + std::to_string(s.seed) +
         (s.on_manifold ? ", on the manifold" : ", off the manifold (perturbed)");
}

template <class F, class State>
Eigen::VectorXd rhs_of(const F& f, const State& z) {
  State dz;
  f.rhs(z, dz);
  return to_eigen(dz);
}

// All structured pieces and right-hand sides of `model` against the oracle at one point;
// returns the discrepancies (used as they are by the mutation test).
template <int N, class Oracle>
std::map<std::string, double> discrepancies(const Chain<double, N>& model, const Oracle& oracle,
                                            const typename Oracle::Point& P, std::mt19937_64& rng) {
  using Model = Chain<double, N>;
  using State = typename Model::State;
  constexpr int k = N - 1;
  const State z = from_eigen<4 * N>(P.z);
  const auto q = Model::q_of(z);
  std::map<std::string, double> d;
  std::uniform_real_distribution<double> unit(-1.0, 1.0);

  d["phi"] = relative(to_eigen(model.phi(q)), P.phi);
  d["psi"] = relative(to_eigen(model.psi(z)), P.psi);
  d["energy"] = relative(Eigen::VectorXd::Constant(1, model.energy(z)), Eigen::VectorXd::Constant(1, P.H));
  d["grad V"] = relative(to_eigen(model.grad_potential(q)), P.grad_H.head(2 * N));
  Vec<double, 2 * N> v;
  for (int i = 0; i < 2 * N; ++i) v[i] = unit(rng);
  const Eigen::MatrixXd Jo = P.grad_phi.leftCols(2 * N);  // J = d phi / d q
  d["J v"] = relative(to_eigen(model.jac_mul(q, v)), Jo * to_eigen(v));
  Vec<double, k> r, nu;
  for (int a = 0; a < k; ++a) {
    r[a] = unit(rng);
    nu[a] = unit(rng);
  }
  d["J^T lambda"] = relative(to_eigen(model.jac_t_mul(q, r)), Jo.transpose() * to_eigen(r));
  const Eigen::MatrixXd Q = Oracle::Q(P);
  d["Q^-1 r (gram solve)"] = relative(to_eigen(model.gram(q).solve(r)), Q.fullPivLu().solve(to_eigen(r)));
  d["S nu (s_mul)"] = relative(to_eigen(model.s_mul(z, nu)), Oracle::S(P) * to_eigen(nu));
  d["{psi,H}"] = relative(to_eigen(model.psi_h_bracket(z)), Oracle::psi_H(P));
  d["rhs dirac"] = relative(rhs_of(HamiltonDirac<Model>{model}, z), Oracle::dirac(P));
  d["rhs naive"] = relative(rhs_of(Naive<Model>{model}, z), Oracle::naive(P));
  d["rhs impetus"] = relative(rhs_of(ImpetusStriction<Model>{model}, z), oracle.impetus(P));
  d["impetus physical"] = relative(to_eigen(ImpetusStriction<Model>{model}.physical(z)), Oracle::impetus_physical(P));
  return d;
}

double tolerance_of(const std::string& what) {
  if (what.rfind("rhs", 0) == 0 || what == "impetus physical") return kTolRhs;
  if (what.rfind("Q^-1", 0) == 0) return kTolSolve;
  return kTolValue;
}

// |grad f_a . zdot| / (||grad f_a||_2 ||zdot||_2), worst over a.
double rate_relative(const Eigen::MatrixXd& grads, const Eigen::VectorXd& zdot, const Eigen::VectorXd& expected) {
  double worst = 0.0;
  for (int a = 0; a < grads.rows(); ++a) {
    const double scale = grads.row(a).norm() * zdot.norm();
    worst = std::max(worst, std::abs(grads.row(a).dot(zdot) - expected[a]) / scale);
  }
  return worst;
}

template <class Size>
class ChainVsDenseOracle : public ::testing::Test {};

template <int N>
struct Atoms {
  static constexpr int value = N;
};
using AtomCounts = ::testing::Types<Atoms<3>, Atoms<7>, Atoms<16>>;
TYPED_TEST_SUITE(ChainVsDenseOracle, AtomCounts);

// ---- structured pieces and right-hand sides = oracle ---------------------------------
TYPED_TEST(ChainVsDenseOracle, PiecesAndRightHandSidesAgree) {
  constexpr int N = TypeParam::value;
  using Model = Chain<double, N>;
  using Oracle = OracleOf<N>;
  constexpr int k = N - 1;
  Tally tally;
  for (const Case<N>& cs : cases<N>()) {
    for (std::size_t i = 0; i < cs.samples.size(); ++i) {
      const Sample& smp = cs.samples[i];
      const auto& P = cs.points[i];
      SCOPED_TRACE(trace(kConfigs[cs.config], smp, N));
      std::mt19937_64 rng(smp.seed ^ (smp.on_manifold ? 0x5eedU : 0xf00dU));
      for (const auto& [what, err] : discrepancies<N>(cs.setup.model, cs.oracle, P, rng)) {
        tally.add(what, err);
        EXPECT_LE(err, tolerance_of(what)) << what;
      }
      // cross_gram(qa, qb) = J(qa) M^-1 J(qb)^T between an unperturbed point qa and its
      // perturbation qb; densely: d phi(qa)/dq times d psi(qb, p)/dp transposed (psi = J M^-1 p
      // has p-gradient M^-1 J^T).
      if (!smp.on_manifold) {
        const auto& Pa = cs.points[i - 1];
        const Eigen::MatrixXd A = Pa.grad_phi.leftCols(2 * N) * P.grad_psi.rightCols(2 * N).transpose();
        std::uniform_real_distribution<double> unit(-1.0, 1.0);
        Vec<double, k> r;
        for (int a = 0; a < k; ++a) r[a] = unit(rng);
        const auto qa = Model::q_of(from_eigen<4 * N>(Pa.z)), qb = Model::q_of(from_eigen<4 * N>(P.z));
        EXPECT_TRUE(agree("cross_gram(qa,qb) solve", to_eigen(cs.setup.model.cross_gram(qa, qb).solve(r)),
                          A.fullPivLu().solve(to_eigen(r)), kTolSolve, tally));
      }
      // Sanity of the oracle itself: {phi, phi} = 0 exactly (phi has no p-dependence),
      // Q = {phi, psi} symmetric positive definite, S = {psi, psi} skew (up to rounding).
      const Eigen::MatrixXd C = Oracle::C(P);
      EXPECT_EQ(C.topLeftCorner(k, k).norm(), 0.0);
      const Eigen::MatrixXd Q = Oracle::Q(P);
      EXPECT_LE((Q - Q.transpose()).norm(), 1e-14 * Q.norm());
      EXPECT_EQ(Q.llt().info(), Eigen::Success);
      const auto norm1 = [](const Eigen::MatrixXd& m) { return m.cwiseAbs().colwise().sum().maxCoeff(); };
      tally.add("(info) cond_1(Q)", norm1(Q) * norm1(Q.fullPivLu().inverse()));
      const Eigen::MatrixXd S = Oracle::S(P);
      EXPECT_LE((S + S.transpose()).norm(), 1e-14 * (1.0 + S.norm()));
      if (smp.on_manifold) {
        EXPECT_LE(inf_norm(P.phi), 1e-14 * cs.setup.def.L * cs.setup.def.L);
        EXPECT_LE(inf_norm(P.psi), 1e-14);
      }
    }
  }
  tally.print("agree", N);
}

// ---- phi and psi are strong invariants of the Dirac field; naive: phi' = psi, psi' = 0 ----
TYPED_TEST(ChainVsDenseOracle, DiracKeepsConstraintsOffTheManifold) {
  constexpr int N = TypeParam::value;
  using Model = Chain<double, N>;
  using Oracle = OracleOf<N>;
  Tally tally;
  for (const Case<N>& cs : cases<N>()) {
    const Model& model = cs.setup.model;
    for (std::size_t i = 0; i < cs.samples.size(); ++i) {
      const Sample& smp = cs.samples[i];
      const auto& P = cs.points[i];
      if (smp.on_manifold) continue;
      SCOPED_TRACE(trace(kConfigs[cs.config], smp, N));
      const auto z = from_eigen<4 * N>(smp.z);
      const Eigen::VectorXd zero = Eigen::VectorXd::Zero(N - 1);
      const Eigen::VectorXd dirac = rhs_of(HamiltonDirac<Model>{model}, z);
      const Eigen::VectorXd naive = rhs_of(Naive<Model>{model}, z);
      // Make sure the point really is off the manifold.
      ASSERT_GT(inf_norm(P.phi), 1e-4);
      ASSERT_GT(inf_norm(P.psi), 1e-4);
      const double dphi = rate_relative(P.grad_phi, dirac, zero), dpsi = rate_relative(P.grad_psi, dirac, zero);
      tally.add("dirac: d phi/dt", dphi);
      tally.add("dirac: d psi/dt", dpsi);
      EXPECT_LE(dphi, kTolInvariant);
      EXPECT_LE(dpsi, kTolInvariant);
      // The same for the oracle's own field (a check of the oracle).
      const Eigen::VectorXd odirac = Oracle::dirac(P);
      const double ophi = rate_relative(P.grad_phi, odirac, zero), opsi = rate_relative(P.grad_psi, odirac, zero);
      tally.add("oracle dirac: d chi/dt", std::max(ophi, opsi));
      EXPECT_LE(ophi, kTolInvariant);
      EXPECT_LE(opsi, kTolInvariant);
      // Naive: d phi/dt = psi, d psi/dt = d^2 phi/dt^2 = 0 (002 eq. 26; the sign of lambda).
      const double nphi = rate_relative(P.grad_phi, naive, P.psi), npsi = rate_relative(P.grad_psi, naive, zero);
      tally.add("naive: d phi/dt - psi", nphi);
      tally.add("naive: d psi/dt", npsi);
      EXPECT_LE(nphi, kTolInvariant);
      EXPECT_LE(npsi, kTolInvariant);
      // The same invariance checked without the oracle's gradients: central differences of
      // chens' phi and psi along the Dirac field. phi and psi are quadratic in z, so the
      // central difference is exact up to rounding, ~ u |chi| / h ~ 1e-12 for h = 1e-4.
      const double h = 1e-4;
      const auto zp = from_eigen<4 * N>(smp.z + h * dirac), zm = from_eigen<4 * N>(smp.z - h * dirac);
      const Eigen::VectorXd fd_phi = (to_eigen(model.phi(Model::q_of(zp))) - to_eigen(model.phi(Model::q_of(zm)))) / (2 * h);
      const Eigen::VectorXd fd_psi = (to_eigen(model.psi(zp)) - to_eigen(model.psi(zm))) / (2 * h);
      const double fd_scale = P.grad_psi.norm() * dirac.norm();
      tally.add("dirac: central diff / scale", std::max(inf_norm(fd_phi), inf_norm(fd_psi)) / fd_scale);
      EXPECT_LE(inf_norm(fd_phi), 1e-10 * fd_scale);
      EXPECT_LE(inf_norm(fd_psi), 1e-10 * fd_scale);
    }
  }
  tally.print("invariants", N);
}

// ---- on the manifold the Dirac and naive fields coincide --------------------------------
TYPED_TEST(ChainVsDenseOracle, DiracEqualsNaiveOnTheManifold) {
  constexpr int N = TypeParam::value;
  using Model = Chain<double, N>;
  using Oracle = OracleOf<N>;
  Tally tally;
  for (const Case<N>& cs : cases<N>()) {
    const Model& model = cs.setup.model;
    for (std::size_t i = 0; i < cs.samples.size(); ++i) {
      const Sample& smp = cs.samples[i];
      const auto& P = cs.points[i];
      if (!smp.on_manifold) continue;
      SCOPED_TRACE(trace(kConfigs[cs.config], smp, N));
      const auto z = from_eigen<4 * N>(smp.z);
      const Eigen::VectorXd dirac = rhs_of(HamiltonDirac<Model>{model}, z);
      const Eigen::VectorXd naive = rhs_of(Naive<Model>{model}, z);
      EXPECT_TRUE(agree("chens dirac vs naive", dirac, naive, kTolOnManifold, tally));
      EXPECT_TRUE(agree("oracle dirac vs naive", Oracle::dirac(P), Oracle::naive(P), kTolOnManifold, tally));
      // On the manifold p* = p, so impetus-striction moves q the same way (q*' = M^-1 p);
      // p*' differs from p' (the strictions' gauge freedom, 000 eq. 31), so only q' compares.
      const Eigen::VectorXd impetus = rhs_of(ImpetusStriction<Model>{model}, z);
      EXPECT_TRUE(agree("chens impetus q' vs naive q'", impetus.head(2 * N), naive.head(2 * N), kTolOnManifold, tally));
    }
  }
  tally.print("on-manifold", N);
}

// ---- a wrong model must fail the comparison ---------------------------------------------
TYPED_TEST(ChainVsDenseOracle, MutatedModelIsDetected) {
  constexpr int N = TypeParam::value;
  const Case<N>& cs = cases<N>()[1];  // non-uniform masses, L = 1, eps = 0.1
  const std::size_t i = 5;            // a random chain, perturbed off the manifold
  ASSERT_FALSE(cs.samples[i].on_manifold);
  SCOPED_TRACE(trace(kConfigs[cs.config], cs.samples[i], N));
  auto heavier = cs.setup.model;
  heavier.w[2] *= 1.001;  // atom 2's mass changed by 0.1% in the model, not in the oracle
  auto stronger = cs.setup.model;
  stronger.eps *= 1.001;  // the well depth changed by 0.1%
  std::mt19937_64 rng(cs.samples[i].seed);
  const auto dw = discrepancies<N>(heavier, cs.oracle, cs.points[i], rng);
  rng.seed(cs.samples[i].seed);
  const auto de = discrepancies<N>(stronger, cs.oracle, cs.points[i], rng);
  for (const char* what : {"psi", "Q^-1 r (gram solve)", "S nu (s_mul)", "{psi,H}", "rhs dirac", "rhs naive", "rhs impetus",
                           "impetus physical"}) {
    std::printf("[ mutation ] N=%d w[2]*=1.001 %-22s %.2e\n", N, what, dw.at(what));
    EXPECT_GT(dw.at(what), 100.0 * tolerance_of(what)) << what << " does not see a 0.1% mass change";
  }
  for (const char* what : {"energy", "grad V", "{psi,H}", "rhs dirac", "rhs naive", "rhs impetus"}) {
    std::printf("[ mutation ] N=%d eps*=1.001  %-22s %.2e\n", N, what, de.at(what));
    EXPECT_GT(de.at(what), 100.0 * tolerance_of(what)) << what << " does not see a 0.1% change of eps";
  }
}

// ---- the general oracle reduces to the pendulum-only one (tests/support/dense_oracle.hpp) ----
// A cross-check of the oracle itself, on a system where the older oracle has been checked
// against the papers' transcribed formulas (tests/test_formulations.cpp).
TEST(DenseDiracOracle, AgreesWithPendulumOracle) {
  const test::PendulumOracle pend{1.3, 0.8, 2.0};
  const auto oracle = test::make_dense_dirac_oracle<2>(
      [pend](const auto& q, const auto& p) {
        return pend.H(std::array{q[0], q[1], p[0], p[1]});
      },
      [pend](const auto& q) {
        using T = std::decay_t<decltype(q[0])>;
        return std::vector<T>{pend.phi(std::array{q[0], q[1], q[0], q[1]})};  // phi reads q only
      });
  std::mt19937_64 rng(kBaseSeed);
  std::uniform_real_distribution<double> unit(-1.5, 1.5);
  Tally tally;
  for (int n = 0; n < 20; ++n) {
    SCOPED_TRACE("seed " + std::to_string(kBaseSeed) + ", draw " + std::to_string(n));
    const test::Z<double> z{unit(rng), unit(rng), unit(rng), unit(rng)};
    const Eigen::VectorXd ze = Eigen::Vector4d(z[0], z[1], z[2], z[3]);
    const auto P = oracle.at(ze);
    using Oracle = std::decay_t<decltype(oracle)>;
    EXPECT_TRUE(agree("pendulum dirac", Oracle::dirac(P), pend.dirac(z), kTolValue, tally));
    EXPECT_TRUE(agree("pendulum naive", Oracle::naive(P), pend.naive(z), kTolValue, tally));
    EXPECT_TRUE(agree("pendulum impetus", oracle.impetus(P), pend.impetus(z), kTolValue, tally));
    EXPECT_TRUE(agree("pendulum impetus physical", Oracle::impetus_physical(P), pend.impetus_physical(z), kTolValue, tally));
    EXPECT_NEAR(P.psi[0], pend.psi(z), 1e-14 * (1.0 + std::abs(pend.psi(z))));
  }
  tally.print("pendulum", 0);
}

// ---- N = 7 default initial data (002 §7, docs/numerics.md) -----------------------------
TEST(ChainDefaultInitial, SevenAtomHexagon) {
  using Model = Chain<double, 7>;
  const Model model = Model::uniform(1.0, 0.1);
  const auto z = Model::default_initial(model);
  EXPECT_NEAR(model.energy(z), -1.190423157, 1e-9);
  ChainDefinition<7> def{{1, 1, 1, 1, 1, 1, 1}, 1.0, 0.1};
  const auto oracle = make_oracle(def);
  const auto P = oracle.at(to_eigen(z));
  EXPECT_NEAR(P.H, -1.190423157, 1e-9);
  for (int a = 0; a < Model::constraints; ++a) {
    EXPECT_NEAR(model.psi(z)[a], 0.0, 1e-15) << "bond " << a;
    EXPECT_NEAR(P.psi[a], 0.0, 1e-15) << "bond " << a;
    const double dx = z[2 * a + 2] - z[2 * a], dy = z[2 * a + 3] - z[2 * a + 1];
    EXPECT_NEAR(std::hypot(dx, dy), 1.0, 1e-15) << "bond " << a;
  }
  const auto m = model.momentum_integrals(z);
  EXPECT_NEAR(m[0], 0.0, 1e-15);
  EXPECT_NEAR(m[1], 0.0, 1e-15);
  EXPECT_NEAR(m[2], -0.25, 1e-15);
  // Velocities: v_0 = (-0.2165064, -0.125) = -v_6, all others at rest.
  EXPECT_NEAR(z[14], -0.2165064, 1e-7);
  EXPECT_NEAR(z[15], -0.125, 1e-7);
  EXPECT_NEAR(z[14 + 12], 0.2165064, 1e-7);
  EXPECT_NEAR(z[15 + 12], 0.125, 1e-7);
  for (int i = 1; i < 6; ++i) {
    EXPECT_NEAR(z[14 + 2 * i], 0.0, 1e-15) << "atom " << i;
    EXPECT_NEAR(z[15 + 2 * i], 0.0, 1e-15) << "atom " << i;
  }
  // Bonds of length L for another L as well (the hexagon scales with L).
  const Model wide = Model::uniform(1.25, 0.1);
  const auto zw = Model::default_initial(wide);
  for (int a = 0; a < Model::constraints; ++a) EXPECT_NEAR(wide.phi(Model::q_of(zw))[a], 0.0, 1e-14) << "bond " << a;
  EXPECT_NEAR(wide.psi(zw)[0], 0.0, 1e-15);
}

}  // namespace
}  // namespace chens
