// The jets of linalg/jet.hpp (forward-mode AD for the user models of models/auto_model.hpp,
// issue 19) against analytic derivatives, and their structural zeros (the masks that let the
// compiler drop products with the seeds' zero tangents) against dense seeding:
//   1. gradient and Hessian-vector product of a function using every operation and every
//      elementary function, from Jet<double, 3> and Jet<Jet<double, 1>, 3>, against the
//      closed-form derivatives at random points (relative 1e-14);
//   2. the same with every tangent seeded explicitly (no structural zero: each jet's mask
//      full) gives the same numbers: skipping a product with an exact zero changes no finite
//      result;
//   3. the masks themselves (jets of 2 to 4 directions): a value that does not depend on q_k
//      has bit k clear and d[k] == 0, and one that does has it set.
// Random points from a fixed seed, printed when a check fails.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <chens/linalg/jet.hpp>
#include <chens/linalg/vec.hpp>

namespace {

using chens::Jet;

constexpr unsigned kSeed = 20261127u;

// f(x, y, z) = x y / z + sqrt(x) exp(y) - sin(z) cos(x) + log(y) - (2 - x) / (1 + y z) + 3
template <class T>
T f(const T& x, const T& y, const T& z) {
  return x * y / z + sqrt(x) * exp(y) - sin(z) * cos(x) + log(y) - (2 - x) / (1 + y * z) + 3;
}

struct Derivatives {
  double g[3];
  double h[3][3];
};

// The closed form of f's gradient and Hessian.
Derivatives analytic(double x, double y, double z) {
  Derivatives d{};
  const double sx = std::sqrt(x), ey = std::exp(y), w = 1 + y * z;
  d.g[0] = y / z + ey / (2 * sx) + std::sin(z) * std::sin(x) + 1 / w;
  d.g[1] = x / z + sx * ey + 1 / y + (2 - x) * z / (w * w);
  d.g[2] = -x * y / (z * z) - std::cos(z) * std::cos(x) + (2 - x) * y / (w * w);
  d.h[0][0] = -ey / (4 * x * sx) + std::sin(z) * std::cos(x);
  d.h[0][1] = 1 / z + ey / (2 * sx) - z / (w * w);
  d.h[0][2] = -y / (z * z) + std::cos(z) * std::sin(x) - y / (w * w);
  d.h[1][1] = sx * ey - 1 / (y * y) - 2 * (2 - x) * z * z / (w * w * w);
  d.h[1][2] = -x / (z * z) + (2 - x) / (w * w) - 2 * (2 - x) * y * z / (w * w * w);
  d.h[2][2] = 2 * x * y / (z * z * z) + std::sin(z) * std::cos(x) - 2 * (2 - x) * y * y / (w * w * w);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < i; ++j) d.h[i][j] = d.h[j][i];
  return d;
}

double rel(double a, double b) { return std::fabs(a - b) / std::max(1.0, std::fabs(b)); }

using I = Jet<double, 1>;
using N = Jet<I, 3>;

// Constants are jets with no direction at compile time too (sparse and dense).
static_assert(Jet<double, 3>(2.0).mask() == 0u && Jet<double, 3>(2.0).d[1] == 0.0);
static_assert(Jet<double, 7>(2.0).mask() == Jet<double, 7>::all && !Jet<double, 7>::sparse);

// Gradient and Hess(f) v from one pass over Jet<Jet<double, 1>, 3>, q_i along e_i (sparse:
// the masks know the other directions are zero) or every tangent written (dense).
void nested_pass(const double q[3], const double v[3], bool sparse, double grad[3], double hv[3], N& out) {
  N x[3];
  for (int i = 0; i < 3; ++i) {
    I qi;
    qi.v = q[i];
    qi.d[0] = v[i];
    if (sparse) {
      x[i] = N(qi);
      x[i].set_tangent(i, I(1.0));
    } else {
      x[i].v = qi;
      for (int k = 0; k < 3; ++k) {
        x[i].d[k].v = k == i ? 1.0 : 0.0;
        x[i].d[k].d[0] = 0.0;
      }
    }
  }
  out = f(x[0], x[1], x[2]);
  for (int k = 0; k < 3; ++k) {
    grad[k] = out.d[k].v;
    hv[k] = out.d[k].d[0];
  }
}

TEST(Jet, GradientAndHessianVectorProductAgainstClosedForm) {
  std::mt19937_64 rng(kSeed);
  std::uniform_real_distribution<double> pos(0.3, 2.0), dir(-1.0, 1.0);
  double worst = 0.0;
  for (int trial = 0; trial < 200; ++trial) {
    const double q[3] = {pos(rng), pos(rng), pos(rng)};
    const double v[3] = {dir(rng), dir(rng), dir(rng)};
    SCOPED_TRACE(testing::Message() << "seed " << kSeed << ", trial " << trial);
    const Derivatives d = analytic(q[0], q[1], q[2]);
    // first derivatives alone: Jet<double, 3>
    Jet<double, 3> x[3];
    for (int i = 0; i < 3; ++i) {
      x[i] = Jet<double, 3>(q[i]);
      x[i].set_tangent(i, 1.0);
    }
    const Jet<double, 3> g = f(x[0], x[1], x[2]);
    EXPECT_NEAR(g.v, f(q[0], q[1], q[2]), 1e-15 * std::fabs(g.v));
    double grad[3], hv[3];
    N out;
    nested_pass(q, v, true, grad, hv, out);
    for (int k = 0; k < 3; ++k) {
      double h = 0.0;
      for (int j = 0; j < 3; ++j) h += d.h[k][j] * v[j];
      worst = std::max({worst, rel(g.d[k], d.g[k]), rel(grad[k], d.g[k]), rel(hv[k], h)});
      EXPECT_LT(rel(g.d[k], d.g[k]), 1e-14) << "df/dq" << k;
      EXPECT_LT(rel(grad[k], d.g[k]), 1e-14) << "df/dq" << k << " (nested)";
      EXPECT_LT(rel(hv[k], h), 1e-13) << "(Hess f v)_" << k;
    }
    // the value's inner tangent is the directional derivative grad f . v
    double gv = 0.0;
    for (int k = 0; k < 3; ++k) gv += d.g[k] * v[k];
    EXPECT_LT(rel(out.v.d[0], gv), 1e-14);
  }
  std::printf("[ measured ] jet derivatives vs closed form: worst relative %.2e\n", worst);
}

TEST(Jet, StructuralZerosChangeNoFiniteResult) {
  std::mt19937_64 rng(kSeed + 1);
  std::uniform_real_distribution<double> pos(0.3, 2.0), dir(-1.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    const double q[3] = {pos(rng), pos(rng), pos(rng)};
    const double v[3] = {dir(rng), dir(rng), dir(rng)};
    SCOPED_TRACE(testing::Message() << "seed " << kSeed + 1 << ", trial " << trial);
    double gs[3], hs[3], gd[3], hd[3];
    N s, d;
    nested_pass(q, v, true, gs, hs, s);
    nested_pass(q, v, false, gd, hd, d);
    EXPECT_EQ(s.v.v, d.v.v);
    EXPECT_EQ(s.v.d[0], d.v.d[0]);
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(gs[k], gd[k]) << k;
      EXPECT_EQ(hs[k], hd[k]) << k;
    }
  }
}

TEST(Jet, MasksMarkExactlyTheDirectionsAValueDependsOn) {
  using J = Jet<double, 4>;
  J x[4];
  for (int i = 0; i < 4; ++i) {
    x[i] = J(0.5 + i);
    x[i].set_tangent(i, 1.0);
  }
  const J c = J(2.0);  // a constant
  EXPECT_EQ(c.mask(), 0u);
  const J a = x[0] * x[0] - 3.0 * x[2] + c;  // depends on q0 and q2
  EXPECT_EQ(a.mask(), 0b0101u);
  EXPECT_EQ(a.d[1], 0.0);
  EXPECT_EQ(a.d[3], 0.0);
  EXPECT_EQ(a.d[0], 2 * 0.5);
  EXPECT_EQ(a.d[2], -3.0);
  const J b = sqrt(x[3]) / a;  // q0, q2, q3
  EXPECT_EQ(b.mask(), 0b1101u);
  EXPECT_EQ(b.d[1], 0.0);
  // a jet whose tangents were written directly keeps every direction
  J w;
  w.v = 1.0;
  for (int k = 0; k < 4; ++k) w.d[k] = 0.0;
  EXPECT_EQ(w.mask(), J::all);
  EXPECT_EQ((w * c).mask(), J::all);
  // nested: the outer directions have masks; jets of one direction (the inner ones here) and
  // of more than four are dense, every direction kept
  N y = N(I(1.5));
  y.set_tangent(1, I(1.0));
  EXPECT_EQ(y.mask(), 0b010u);
  EXPECT_FALSE(I::sparse);
  EXPECT_EQ(y.d[1].mask(), I::all);
  EXPECT_FALSE((Jet<double, 5>::sparse));
  const N yy = y * y;
  EXPECT_EQ(yy.mask(), 0b010u);
  EXPECT_EQ(yy.d[1].v, 3.0);
  EXPECT_EQ(yy.d[1].d[0], 0.0);
}

}  // namespace
