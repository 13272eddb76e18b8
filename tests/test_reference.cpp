// The closed-form reference (Jacobi elliptic functions) against independent numbers:
// special values of K, the arithmetic-geometric-mean formula K(m) = pi / (2 AGM(1, sqrt(1-m))),
// the small-amplitude period 2 pi sqrt(l/g), and a long-double RK4 integration of the
// state-space form theta'' = -(g/l) sin(theta) with a step small enough that its own error
// is below 1e-14.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <chens/reference/elliptic.hpp>
#include <chens/reference/pendulum_exact.hpp>

namespace chens {
namespace {

using Model = Pendulum<double>;
using State = Model::State;

long double agm(long double a, long double b) {
  for (int i = 0; i < 60 && std::fabs(a - b) > 1e-19L * a; ++i) {
    const long double an = (a + b) / 2;
    b = std::sqrt(a * b);
    a = an;
  }
  return a;
}

TEST(Elliptic, CompleteIntegralMatchesAgmAndSpecialValues) {
  EXPECT_NEAR(ellint_k(0.0), M_PI / 2, 1e-16);
  EXPECT_NEAR(ellint_k(0.5), 1.8540746773013719, 2e-16);  // K(1/sqrt 2), A&S Table 17.1
  for (double m : {1e-8, 0.1, 0.3, 2.0 / 3.0, 0.9, 0.999, 1 - 1e-9}) {
    const long double k_agm = 3.14159265358979323846264338327950288L / (2 * agm(1.0L, std::sqrt(1.0L - m)));
    EXPECT_NEAR(ellint_k(m), static_cast<double>(k_agm), 4e-16 * static_cast<double>(k_agm)) << "m = " << m;
  }
}

TEST(Elliptic, JacobiFunctionsSatisfyTheirIdentitiesAndDefinition) {
  for (double m : {0.0, 0.2, 0.7, 0.99, 0.999999}) {
    const double kk = ellint_k(m);
    for (double u : {-7.3, -1.0, 0.0, 0.4, 1.9, 12.5, 301.7}) {
      const auto j = jacobi(u, m, kk);
      EXPECT_NEAR(j.sn * j.sn + j.cn * j.cn, 1.0, 1e-15);
      EXPECT_NEAR(m * j.sn * j.sn + j.dn * j.dn, 1.0, 1e-15);
      // F(am(u)) = u: amplitude from (sn, cn), then the incomplete integral.
      // The amplitude of u - 2nK lies in [-pi/2, pi/2]; am(u) = am(u - 2nK) + n pi.
      const double n = std::floor(u / (2 * kk) + 0.5);
      const double sg = std::fmod(std::abs(n), 2.0) == 1.0 ? -1.0 : 1.0;
      const double am = std::atan2(sg * j.sn, sg * j.cn) + n * M_PI;
      // dF/d(am) = 1/dn: the round trip is as well conditioned as dn is large.
      EXPECT_NEAR(ellint_f(am, m), u, 4e-15 * std::max(1.0, std::abs(u)) / j.dn) << "m = " << m << ", u = " << u;
    }
  }
}

// theta'' = -w^2 sin(theta) by RK4 in long double, returning (x, y, px, py) at times ts.
std::vector<State> integrate_state_space(const Model& m, double theta0, double omega0, const std::vector<double>& ts,
                                         long double h) {
  const long double w2 = static_cast<long double>(m.g) / m.l;
  long double th = theta0, om = omega0, t = 0;
  std::vector<State> out;
  auto f = [&](long double a, long double b, long double& da, long double& db) {
    da = b;
    db = -w2 * std::sin(a);
  };
  for (double target : ts) {
    while (t < target) {
      const long double hh = std::min(h, static_cast<long double>(target) - t);
      long double k1a, k1b, k2a, k2b, k3a, k3b, k4a, k4b;
      f(th, om, k1a, k1b);
      f(th + hh / 2 * k1a, om + hh / 2 * k1b, k2a, k2b);
      f(th + hh / 2 * k2a, om + hh / 2 * k2b, k3a, k3b);
      f(th + hh * k3a, om + hh * k3b, k4a, k4b);
      th += hh / 6 * (k1a + 2 * k2a + 2 * k3a + k4a);
      om += hh / 6 * (k1b + 2 * k2b + 2 * k3b + k4b);
      t += hh;
    }
    const double s = static_cast<double>(std::sin(th)), c = static_cast<double>(std::cos(th));
    const double pm = m.m * m.l * static_cast<double>(om);
    out.push_back(State{{m.l * s, -m.l * c, pm * c, pm * s}});
  }
  return out;
}

struct Case {
  const char* name;
  double mass, length, gravity, theta0, omega0, t_max;
};

class ExactPendulum : public ::testing::TestWithParam<Case> {};

TEST_P(ExactPendulum, MatchesLongDoubleIntegrationOfTheStateSpaceForm) {
  const Case c = GetParam();
  const Model m{c.mass, c.length, c.gravity};
  const State z0{{m.l * std::sin(c.theta0), -m.l * std::cos(c.theta0), m.m * m.l * c.omega0 * std::cos(c.theta0),
                  m.m * m.l * c.omega0 * std::sin(c.theta0)}};
  const auto ref = PendulumExact<double>::make(m, z0);
  EXPECT_FALSE(ref.projected);
  std::vector<double> ts;
  for (double t = 0.0; t <= c.t_max; t += c.t_max / 16) ts.push_back(t);
  const auto num = integrate_state_space(m, c.theta0, c.omega0, ts, 2e-4L);
  const double scale = std::max(m.l, m.m * m.l * std::abs(c.omega0) + m.m * std::sqrt(m.g * m.l));
  for (std::size_t i = 0; i < ts.size(); ++i) {
    const State e = ref.eval(ts[i]);
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(e[k], num[i][k], 2e-12 * scale) << c.name << " t = " << ts[i] << " k = " << k;
    // On the manifold and on the energy surface at all times.
    EXPECT_NEAR(e[0] * e[0] + e[1] * e[1], m.l * m.l, 1e-14 * m.l * m.l);
    EXPECT_NEAR(e[0] * e[2] + e[1] * e[3], 0.0, 1e-14 * scale * m.l);
    EXPECT_NEAR(m.energy(e), m.energy(z0), 1e-13 * scale * scale / m.m);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Regimes, ExactPendulum,
    ::testing::Values(Case{"small_libration", 1, 1, 1, 0.01, 0.0, 20}, Case{"libration", 1, 1, 1, 2.0, 0.3, 20},
                      Case{"libration_general", 2.5, 0.7, 9.81, -1.0, 1.5, 10},
                      Case{"near_separatrix_below", 1, 1, 1, 0.0, 2.0 - 1e-7, 12}, Case{"separatrix", 1, 1, 1, 0.0, 2.0, 6},
                      Case{"near_separatrix_above", 1, 1, 1, 0.0, 2.0 + 1e-7, 12},
                      Case{"rotation_paper", 1, 1, 1, M_PI / 2, -2.0, 20},  // (1, 0, 0, -2) of 001/002
                      Case{"rotation_ccw", 0.3, 1.9, 0.45, 0.4, 3.0, 20}, Case{"no_gravity", 1, 1, 0, 0.3, 0.7, 20},
                      Case{"at_rest", 1, 1, 1, 0.0, 0.0, 5}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(ExactPendulum, PeriodOfThePapersOrbitAndSmallOscillations) {
  const Model m{1, 1, 1};
  // (1, 0, 0, -2): E = 2, k^2 = 2/3, T = 2 K(2/3) sqrt(2/3) = 4 K(2/3) / sqrt(6) ("T = 3.31", 001 §6, 002 §6).
  const auto ref = PendulumExact<double>::make(m, State{{1, 0, 0, -2}});
  EXPECT_EQ(ref.regime, PendulumExact<double>::rotation);
  const double k_agm = M_PI / (2 * static_cast<double>(agm(1.0L, std::sqrt(1.0L / 3.0L))));
  EXPECT_NEAR(ref.period(), 4 * k_agm / std::sqrt(6.0), 1e-14);
  EXPECT_NEAR(ref.period(), 3.31, 0.005);
  // The orbit closes after every period, also after many (no drift of the phase).
  for (int n : {1, 30, 309}) {
    const State a = ref.eval(0.37), b = ref.eval(0.37 + n * ref.period());
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(a[k], b[k], 1e-12 * n) << "n = " << n;
  }
  // Small oscillations: T -> 2 pi sqrt(l/g).
  const Model m2{1.0, 2.0, 9.81};
  const auto small = PendulumExact<double>::make(m2, State{{2.0 * std::sin(1e-4), -2.0 * std::cos(1e-4), 0, 0}});
  EXPECT_NEAR(small.period(), 2 * M_PI * std::sqrt(2.0 / 9.81), 1e-8);
}

TEST(ExactPendulum, InconsistentInitialDataAreProjectedAndFlagged) {
  const Model m{1, 1, 1};
  const auto ref = PendulumExact<double>::make(m, State{{1.1, 0.1, 0.1, -1.9}});  // 000 §8
  EXPECT_TRUE(ref.projected);
  const State e = ref.eval(0.0);
  EXPECT_NEAR(e[0] * e[0] + e[1] * e[1], 1.0, 1e-15);
  EXPECT_NEAR(e[0] * e[2] + e[1] * e[3], 0.0, 1e-15);
}

}  // namespace
}  // namespace chens

namespace chens {
namespace {

// The two independent evaluations of sn, cn, dn (AGM and theta functions) agree wherever
// the theta form is used, and the reference switches between them without a seam.
TEST(Elliptic, ThetaFunctionsAgreeWithTheAgm) {
  int used = 0;
  for (double m : {1e-8, 1e-5, 0.01, 0.2, 0.5, 2.0 / 3.0, 0.9, 0.98, 0.99, 0.995, 0.9999}) {
    const double kk = ellint_k(m);
    const auto th = JacobiTheta<double>::make(m, kk);
    if (!th.usable) continue;
    ++used;
    for (double u = -kk; u <= kk; u += kk / 37) {
      const auto a = jacobi(u, m, kk);
      const auto b = th.eval(u);
      EXPECT_NEAR(a.sn, b.sn, 2e-15) << "m = " << m << ", u = " << u;
      EXPECT_NEAR(a.cn, b.cn, 2e-15) << "m = " << m << ", u = " << u;
      EXPECT_NEAR(a.dn, b.dn, 2e-15) << "m = " << m << ", u = " << u;
    }
  }
  EXPECT_GE(used, 8);  // 1e-8 ... 0.99 take the theta path
  EXPECT_FALSE(JacobiTheta<double>::make(0.9999, ellint_k(0.9999)).usable);
  EXPECT_FALSE(JacobiTheta<double>::make(0.0, ellint_k(0.0)).usable);
}

}  // namespace
}  // namespace chens
