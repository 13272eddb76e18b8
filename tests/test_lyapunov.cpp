// Finite-time Lyapunov exponents' per-instance pieces (geometry/lyapunov.hpp, issue 43) against
// independent numbers:
//  - tangent_projection lands in T_z M (G dq = 0 and dpsi = 0 to rounding), is idempotent and
//    fixes the Hamilton-Dirac field, which is tangent to M (002 eq. 47);
//  - the double pendulum's exponent from chens's Cartesian Hamilton-Dirac equations, its
//    tangent carried by RK4's step over dual numbers (TangentStepper), equals the one from an
//    independent computation written here in angle coordinates (Lagrange's equations, RK4,
//    its own forward-mode numbers), the tangent mapped into (q, p): the same vector, so the
//    same growth up to the two discretisations' errors;
//  - renormalising (orthonormalise) changes no exponent, and the exponent does not depend on
//    the initial tangent beyond O(1/t);
//  - the integrable pendulum's exponent goes to 0 like log t / t (the shear of a
//    non-isochronous oscillator grows linearly);
//  - the double pendulum's spectrum on its 4-dimensional manifold comes in pairs
//    lambda_i = -lambda_{5-i} with a zero pair (the flow's direction and the energy's), and
//    sums to zero: the flow preserves the symplectic volume on M.
// Seeds are fixed and printed on failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/geometry/lyapunov.hpp>
#include <chens/geometry/tangent_system.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/double_pendulum.hpp>
#include <chens/models/pendulum.hpp>

#include "support/double_pendulum_angles.hpp"
#include "support/random_states.hpp"

namespace chens {
namespace {

using test::angles::cartesian_with_tangent;
using test::angles::Fwd;
using test::angles::Params;
using test::angles::angle_rk4;

// ---- chens's side --------------------------------------------------------------------------
using DP = DoublePendulum<double>;
using DiracDP = HamiltonDirac<DP>;
using TangentDP = TangentSystem<DiracDP>;
using Rk4 = ExplicitRk<Rk4Tableau>;

DP model_of(const Params& P) { return DP{P.m1, P.m2, P.l1, P.l2, P.g}; }

// The Euclidean norm of a state or tangent (of any model).
template <class V>
double norm(const V& v) {
  double s = 0;
  for (int c = 0; c < V::size; ++c) s += v[c] * v[c];
  return std::sqrt(s);
}

constexpr int S = DP::State::size;

// (z, dz1, dz2) into one tangent system's state, and its tangents out.
TangentDP::State pack(const DP::State& z, const DP::State& a, const DP::State& b) {
  TangentDP::State Z = TangentDP::State::zero();
  for (int c = 0; c < S; ++c) {
    Z[c] = z[c];
    Z[S + c] = a[c];
    Z[2 * S + c] = b[c];
  }
  return Z;
}
DP::State tangent_of(const TangentDP::State& Z, int which) {
  DP::State v;
  for (int c = 0; c < S; ++c) v[c] = Z[S * (which + 1) + c];
  return v;
}
template <class State>
DP::State tangent_of_spectrum(const State& Z, int which) {
  DP::State v;
  for (int c = 0; c < S; ++c) v[c] = Z[S * (which + 1) + c];
  return v;
}
void set_tangent(TangentDP::State& Z, int which, const DP::State& v) {
  for (int c = 0; c < S; ++c) Z[S * (which + 1) + c] = v[c];
}

// G dq and dpsi of dz at z (forward mode of psi, the test's own check of what the projection removes).
template <class Model>
std::pair<double, double> constraint_residuals(const Model& m, const typename Model::State& z,
                                               const typename Model::State& dz) {
  using D = Dual2<double>;
  const auto gdq = m.jac_mul(Model::q_of(z), Model::q_of(dz));
  typename Model::template rebind<D>::State zd;
  for (int c = 0; c < Model::State::size; ++c) zd[c] = D(z[c], dz[c], 0.0);
  const auto dpsi = m.template rebound<D>().psi(zd);
  double a = 0, b = 0;
  for (int k = 0; k < Model::constraints; ++k) {
    a = std::max(a, std::fabs(gdq[k]));
    b = std::max(b, std::fabs(dpsi[k].d[0]));
  }
  return {a, b};
}

template <class Model>
void expect_projection_properties(const Model& m, const typename Model::State& z, const typename Model::State& dz) {
  const auto pdz = tangent_projection(m, z, dz);
  const auto [gdq, dpsi] = constraint_residuals(m, z, pdz);
  EXPECT_LT(gdq, 1e-14 * (1 + norm(dz)));
  EXPECT_LT(dpsi, 1e-14 * (1 + norm(dz)));
  const auto twice = tangent_projection(m, z, pdz);
  for (int c = 0; c < Model::State::size; ++c) EXPECT_NEAR(twice[c], pdz[c], 1e-14 * (1 + norm(dz))) << c;
  // The Hamilton-Dirac field is tangent to M: fixed.
  typename Model::State f;
  hamilton_dirac_rhs(m, z, f);
  const auto pf = tangent_projection(m, z, f);
  for (int c = 0; c < Model::State::size; ++c) EXPECT_NEAR(pf[c], f[c], 1e-13 * (1 + norm(f))) << c;
}

TEST(Lyapunov, TheProjectionLandsInTheTangentSpaceAndFixesTangentVectors) {
  const std::uint64_t seed = 11;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0), angle(-3.0, 3.0);
  const Pendulum<double> pendulum{1.3, 0.8, 9.81};
  const Params P{1.0, 0.7, 1.2, 0.9, 2.0};
  const DP dp = model_of(P);
  for (int trial = 0; trial < 20; ++trial) {
    const auto z = test::consistent_state(pendulum, rng);
    const Pendulum<double>::State dz{{u(rng), u(rng), u(rng), u(rng)}};
    expect_projection_properties(pendulum, z, dz);
    const double y[4] = {angle(rng), angle(rng), u(rng), u(rng)}, dy[4] = {0, 0, 0, 0};
    DP::State zd, unused, v;
    cartesian_with_tangent(P, y, dy, zd, unused);
    for (int c = 0; c < S; ++c) v[c] = u(rng);
    expect_projection_properties(dp, zd, v);
  }
}

// The exponent over [0, T] from each computation: the same initial tangent (given in angles,
// mapped into (q, p)), its growth at T in the Euclidean norm of (q, p).
TEST(Lyapunov, TheDoublePendulumsExponentIsTheAngleCoordinatesOne) {
  const Params P;                             // m = l = g = 1
  const double y0[4] = {2.0, 2.5, 0.0, 0.0};  // both arms high: chaotic
  const double dy0[4] = {1.0, 0.5, -0.3, 0.2};
  const double h = 1e-3, T = 10.0;
  const int steps = static_cast<int>(std::lround(T / h));

  // Angles.
  double y[4];
  std::copy(std::begin(y0), std::end(y0), y);
  Fwd a[4];
  for (int c = 0; c < 4; ++c) a[c] = {y0[c], dy0[c]};
  for (int n = 0; n < steps; ++n) angle_rk4(P, a, h);
  for (int c = 0; c < 4; ++c) y[c] = a[c].v;
  const double dyT[4] = {a[0].d, a[1].d, a[2].d, a[3].d};
  DP::State z0, dz0, zT_oracle, dzT_oracle;
  cartesian_with_tangent(P, y0, dy0, z0, dz0);
  cartesian_with_tangent(P, y, dyT, zT_oracle, dzT_oracle);
  const double oracle = std::log(norm(dzT_oracle) / norm(dz0)) / T;

  // chens: the tangent carried by RK4's step over dual numbers, renormalised every 100 steps.
  const TangentDP ts = TangentDP::of(DiracDP{model_of(P)});
  const TangentStepper<Rk4> stepper{Rk4{}};
  TangentDP::State Z = pack(z0, dz0, DP::State::zero()), Zn;
  double unrenormalised_log = 0, log_r[1] = {std::log(norm(dz0))};
  {
    DP::State v[1] = {dz0};
    double ignored[1] = {0};
    orthonormalise(v, ignored);
    set_tangent(Z, 0, v[0]);
  }
  TangentDP::State plain = pack(z0, dz0, DP::State::zero());
  for (int n = 0; n < steps; ++n) {
    ASSERT_TRUE(stepper.step(ts, Z, h, Zn).finite);
    Z = Zn;
    ASSERT_TRUE(stepper.step(ts, plain, h, Zn).finite);
    plain = Zn;
    if ((n + 1) % 100 == 0) {
      DP::State v[1] = {tangent_of(Z, 0)};
      orthonormalise(v, log_r);
      set_tangent(Z, 0, v[0]);
    }
  }
  unrenormalised_log = std::log(norm(tangent_of(plain, 0)));
  const double renormalised = (log_r[0] - std::log(norm(dz0))) / T;
  const double unrenormalised = (unrenormalised_log - std::log(norm(dz0))) / T;

  // The two trajectories agree (both computations integrate the same motion).
  for (int c = 0; c < S; ++c) EXPECT_NEAR(Z[c], zT_oracle[c], 1e-8) << "component " << c;
  EXPECT_GT(oracle, 0.5);                              // the tangent grew by e^(lambda T), lambda of order 1
  EXPECT_NEAR(unrenormalised, oracle, 1e-9 * oracle);  // measured 4e-12: the two RK4 discretisations
  EXPECT_NEAR(renormalised, unrenormalised, 1e-12 * oracle);
  // And the direction: the unit tangents agree.
  const DP::State t_chens = tangent_of(plain, 0);
  const double nc = norm(t_chens), no = norm(dzT_oracle);
  for (int c = 0; c < S; ++c) EXPECT_NEAR(t_chens[c] / nc, dzT_oracle[c] / no, 1e-7) << "component " << c;
}

// lambda_1(t) from a tangent that starts as dz, renormalised every `every` steps (projected
// into T_z M there, as a run keeps its tangents on the manifold); at the times listed.
template <class Model>
std::vector<double> largest_exponent(const Model& m, typename Model::State z, typename Model::State dz, double h, int every,
                                     const std::vector<int>& at_steps, std::vector<double>* speed = nullptr) {
  using Sys = HamiltonDirac<Model>;
  using TS = TangentSystem<Sys>;
  constexpr int N = Model::State::size;
  const TS ts = TS::of(Sys{m});
  const TangentStepper<Rk4> stepper{Rk4{}};
  typename TS::State Z = TS::State::zero(), Zn;
  dz = tangent_projection(m, z, dz);
  double log_r[1] = {0};
  {
    Vec<double, N> v[1] = {dz};
    orthonormalise(v, log_r);
    dz = v[0];
    log_r[0] = 0;
  }
  for (int c = 0; c < N; ++c) {
    Z[c] = z[c];
    Z[N + c] = dz[c];
    Z[2 * N + c] = 0;
  }
  std::vector<double> out;
  std::size_t next = 0;
  for (int n = 1; n <= at_steps.back(); ++n) {
    EXPECT_TRUE(stepper.step(ts, Z, h, Zn).finite);
    Z = Zn;
    if (n % every == 0) {
      typename Model::State zz, v;
      for (int c = 0; c < N; ++c) {
        zz[c] = Z[c];
        v[c] = Z[N + c];
      }
      Vec<double, N> w[1] = {tangent_projection(m, zz, v)};
      orthonormalise(w, log_r);
      for (int c = 0; c < N; ++c) Z[N + c] = w[0][c];
    }
    if (next < at_steps.size() && n == at_steps[next]) {
      EXPECT_EQ(n % every, 0);
      out.push_back(log_r[0] / (n * h));
      if (speed) {
        typename Model::State zz, f;
        for (int c = 0; c < N; ++c) zz[c] = Z[c];
        hamilton_dirac_rhs(m, zz, f);
        speed->push_back(norm(f));
      }
      ++next;
    }
  }
  return out;
}

// The pendulum is integrable: a tangent off the flow's direction shears along the orbit,
// dz(t) ~ t b f(z(t)) with f the vector field, so lambda(t) t - log t = log |dz(t)| / |dz(0)| -
// log t stays within a band as wide as log |f| varies along the orbit (plus a / (b t)), and
// lambda -> 0 like log t / t. An exponential growth would leave any band linearly in t.
TEST(Lyapunov, TheIntegrablePendulumsExponentVanishesLikeLogTOverT) {
  const Pendulum<double> m{1.0, 1.0, 1.0};
  const Pendulum<double>::State z{{1.0, 0.0, 0.0, -1.8}};  // a rotation (E = 1.62 > 1)
  const Pendulum<double>::State dz{{0.3, -0.2, 0.5, 0.1}};
  const double h = 0.01;
  std::vector<int> at;
  for (int n = 10000; n <= 100000; n += 100) at.push_back(n);  // t = 100 .. 1000
  std::vector<double> speed;
  const std::vector<double> lam = largest_exponent(m, z, dz, h, 100, at, &speed);
  ASSERT_EQ(lam.size(), at.size());
  double c_min = INFINITY, c_max = -INFINITY, f_min = INFINITY, f_max = 0;
  for (std::size_t k = 0; k < at.size(); ++k) {
    const double t = at[k] * h;
    const double c = lam[k] * t - std::log(t);
    c_min = std::min(c_min, c);
    c_max = std::max(c_max, c);
    f_min = std::min(f_min, speed[k]);
    f_max = std::max(f_max, speed[k]);
  }
  SCOPED_TRACE("lambda t - log t in [" + std::to_string(c_min) + ", " + std::to_string(c_max) + "], |f| in [" +
               std::to_string(f_min) + ", " + std::to_string(f_max) + "]");
  EXPECT_LT(c_max - c_min, std::log(f_max / f_min) + 0.05);
  EXPECT_LT(lam.back(), (std::log(1000.0) + c_max) / 1000.0 + 1e-12);
  EXPECT_GT(lam.back(), 0.0);  // the shear grows
}

// Two initial tangents reach the same exponent: they differ by log(c_a / c_b) / t, c their
// components along the most expanding direction.
TEST(Lyapunov, TheExponentDoesNotDependOnTheInitialTangent) {
  const Params P;
  const double y[4] = {2.0, 2.5, 0.0, 0.0}, none[4] = {0, 0, 0, 0};
  DP::State z, unused;
  cartesian_with_tangent(P, y, none, z, unused);
  const std::uint64_t seed = 7;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  DP::State a, b;
  for (int c = 0; c < S; ++c) {
    a[c] = u(rng);
    b[c] = u(rng);
  }
  const double h = 2e-3;
  const std::vector<int> at = {25000, 100000};  // t = 50, 200
  const auto la = largest_exponent(model_of(P), z, a, h, 50, at);
  const auto lb = largest_exponent(model_of(P), z, b, h, 50, at);
  EXPECT_GT(la[1], 10.0 / 200.0);                                         // clearly positive at this resolution
  EXPECT_LT(std::fabs(la[1] - lb[1]), std::fabs(la[0] - lb[0]) + 1e-12);  // shrinking with t
  EXPECT_LT(std::fabs(la[1] - lb[1]), 2.0 / 200.0);
}

// The spectrum on the double pendulum's manifold (dimension 2(n - m) = 4), two ways over T = 200
// (h = 2e-3, re-orthonormalised every 50 steps), from the same four random tangents in T_z M:
//  - the test's own: four tangents in two tangent systems (Dual2) stepping the same state, each
//    re-orthonormalisation projecting them into T_z M and orthonormalising them (lyapunov.hpp);
//  - the runs' (output.lyapunov_spectrum): TangentSystem<DiracDP, 4>, one state with DualN<4>
//    numbers, re-orthonormalised by its own code (tangent_system.hpp).
// The four parts are the two pairs' bit for bit (a part does not depend on how many others are
// carried), and so are the exponents. The spectrum comes in pairs lambda_i = -lambda_{5-i} with a zero pair (the flow's
// direction and the energy's), and sums to zero: the flow preserves the symplectic volume on M.
TEST(Lyapunov, TheDoublePendulumsSpectrumPairsAndSumsToZero) {
  using SpectrumDP = TangentSystem<DiracDP, 4>;
  static_assert(spectrum_dimension_v<DiracDP> == 4, "2(n - m) = 2 (4 - 2)");
  const Params P;
  const double y[4] = {2.0, 2.5, 0.0, 0.0}, none[4] = {0, 0, 0, 0};
  DP::State z, unused;
  cartesian_with_tangent(P, y, none, z, unused);
  const DP m = model_of(P);
  const std::uint64_t seed = 5;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  DP::State v[4];
  for (auto& w : v) {
    for (int c = 0; c < S; ++c) w[c] = u(rng);
    w = tangent_projection(m, z, w);
  }
  double log_r[4] = {0, 0, 0, 0};
  orthonormalise(v, log_r);
  for (double& l : log_r) l = 0;
  const TangentDP ts = TangentDP::of(DiracDP{m});
  const SpectrumDP ts4 = SpectrumDP::of(DiracDP{m});
  const TangentStepper<Rk4> stepper{Rk4{}};
  TangentDP::State A = pack(z, v[0], v[1]), B = pack(z, v[2], v[3]), Zn;
  SpectrumDP::State Z4 = SpectrumDP::State::zero(), Z4n;
  for (int c = 0; c < S; ++c) {
    Z4[c] = z[c];
    for (int k = 0; k < 4; ++k) Z4[(k + 1) * S + c] = v[k][c];
  }
  const double h = 2e-3;
  const int steps = 100000, every = 50;  // T = 200
  for (int n = 1; n <= steps; ++n) {
    ASSERT_TRUE(stepper.step(ts, A, h, Zn).finite);
    A = Zn;
    ASSERT_TRUE(stepper.step(ts, B, h, Zn).finite);
    B = Zn;
    ASSERT_TRUE(stepper.step(ts4, Z4, h, Z4n).finite);
    Z4 = Z4n;
    for (int c = 0; c < S; ++c) ASSERT_EQ(A[c], B[c]);   // the same state, bit for bit
    for (int c = 0; c < S; ++c) ASSERT_EQ(Z4[c], A[c]);  // and the spectrum system's
    if (n % every == every - 1) {
      for (int c = 0; c < S; ++c) {
        ASSERT_EQ(Z4[S + c], A[S + c]);
        ASSERT_EQ(Z4[2 * S + c], A[2 * S + c]);
        ASSERT_EQ(Z4[3 * S + c], B[S + c]);
        ASSERT_EQ(Z4[4 * S + c], B[2 * S + c]);
      }
    }
    if (n % every == 0) {
      DP::State zz;
      for (int c = 0; c < S; ++c) zz[c] = A[c];
      DP::State w[4] = {tangent_projection(m, zz, tangent_of(A, 0)), tangent_projection(m, zz, tangent_of(A, 1)),
                        tangent_projection(m, zz, tangent_of(B, 0)), tangent_projection(m, zz, tangent_of(B, 1))};
      orthonormalise(w, log_r);
      set_tangent(A, 0, w[0]);
      set_tangent(A, 1, w[1]);
      set_tangent(B, 0, w[2]);
      set_tangent(B, 1, w[3]);
      ts4.renormalise(Z4);
    }
  }
  const double T = steps * h;
  double lam[4], lam4[4], sum = 0;
  ts4.spectrum_exponents(Z4, T, lam4);
  for (int k = 0; k < 4; ++k) {
    lam[k] = log_r[k] / T;
    sum += lam[k];
  }
  SCOPED_TRACE("spectrum " + std::to_string(lam[0]) + " " + std::to_string(lam[1]) + " " + std::to_string(lam[2]) + " " +
               std::to_string(lam[3]));
  for (int k = 0; k < 4; ++k) {
    std::printf("[ spectrum ] lambda_%d: two pairs %.12f, DualN<4> %.12f\n", k + 1, lam[k], lam4[k]);
    EXPECT_EQ(lam4[k], lam[k]) << k;
  }
  EXPECT_EQ(ts4.lyapunov_exponent(Z4, T), lam4[0]);
  const double tol = 5.0 / T;
  EXPECT_GT(lam[0], 10 * tol);  // chaotic: clearly positive at this resolution
  EXPECT_GE(lam[0], lam[1]);
  EXPECT_GE(lam[1], lam[2]);
  EXPECT_GE(lam[2], lam[3]);
  // O(1/T) at T = 200: the Euclidean volume on M differs from the symplectic one by a bounded
  // factor, and the zero pair's tangents grow at most linearly.
  EXPECT_NEAR(lam[0] + lam[3], 0.0, tol);
  EXPECT_NEAR(lam[1] + lam[2], 0.0, tol);
  EXPECT_NEAR(lam[1], 0.0, tol);
  EXPECT_NEAR(sum, 0.0, tol);
}

// The spectrum system's own initial tangents: K = 2(n - m) of them in T_z M, their images
// orthonormal (so r(0) = I and every exponent is 0 at t = 0), for the double pendulum (K = 4)
// and the pendulum (K = 2), and the penalty formulation's 2n on R^2n.
TEST(Lyapunov, TheSpectrumsInitialTangentsAreAnOrthonormalBasisOfTheTangentSpace) {
  const Params P;
  const double y[4] = {2.0, 2.5, 0.3, -0.1}, none[4] = {0, 0, 0, 0};
  DP::State z, unused;
  cartesian_with_tangent(P, y, none, z, unused);
  const DP m = model_of(P);
  using SpectrumDP = TangentSystem<DiracDP, 4>;
  const SpectrumDP ts4 = SpectrumDP::of(DiracDP{m});
  const SpectrumDP::State Z = ts4.with_initial_tangents(z);
  DP::State zz, img[4];
  ts4.projected_images(Z, zz, img);
  for (int j = 0; j < 4; ++j)
    for (int k = 0; k < 4; ++k) {
      double d = 0;
      for (int c = 0; c < S; ++c) d += img[j][c] * img[k][c];
      EXPECT_NEAR(d, j == k ? 1.0 : 0.0, 1e-13) << j << " " << k;
      const auto [gdq, dpsi] = constraint_residuals(m, z, tangent_of_spectrum(Z, k));
      EXPECT_LT(gdq + dpsi, 1e-12) << k;
    }
  double lam[4];
  ts4.spectrum_exponents(Z, 0.0, lam);
  for (double l : lam) EXPECT_EQ(l, 0.0);
  ts4.spectrum_exponents(Z, 1.0, lam);
  for (double l : lam) EXPECT_NEAR(l, 0.0, 1e-14);  // log r_kk of orthonormal images
  static_assert(spectrum_dimension_v<HamiltonDirac<Pendulum<double>>> == 2, "2(2 - 1)");
}
}  // namespace
}  // namespace chens
