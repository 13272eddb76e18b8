// Forward-mode dual numbers carrying K directional derivatives: x = v + sum_k d_k e_k with
// e_i e_j = 0. Evaluating a step map over DualN gives the map's value and its derivative
// applied to K tangent vectors at once: that is exactly the discrete variational equation of
// 004 §3.2 (the derivative of the step, stages included), for any integrator and projection
// written over a generic Real. Two parts (Dual2) carry the wedge product's pair and the
// largest Lyapunov exponent's tangent; 2(n - m) parts the Lyapunov spectrum's
// (geometry/tangent_system.hpp).
//
// Values are computed with the same operations, in the same order, as over Real itself,
// so a run over DualN has bitwise the value trajectory of the run over Real; each derivative
// part is computed by the same expression whatever K, so part k does not depend on how many
// others are carried. Comparisons look at values only: iteration stopping rules (fixed point,
// Newton) are those of the plain run, and the derivative parts follow the iterates the plain
// run takes.
#pragma once

#include <cmath>
#include <type_traits>

#include <chens/config.hpp>

namespace chens {

template <class Real, int K>
struct DualN {
  static_assert(K >= 1, "a dual number carries at least one derivative part");
  static constexpr int parts = K;
  Real v;
  Real d[K];

  DualN() = default;
  // Implicit from a constant: literals and parameters (h, tolerances) carry no tangent, and
  // the generic step code writes Real(2) * x or compares with plain tolerances.
  // cppcheck-suppress noExplicitConstructor ; implicit on purpose, as above
  CHENS_HD constexpr DualN(Real x) : v(x), d{} {  // NOLINT(google-explicit-constructor)
    for (int k = 0; k < K; ++k) d[k] = Real(0);
  }
  // The value and two derivative parts (Dual2).
  template <int J = K, typename = typename std::enable_if<J == 2>::type>
  CHENS_HD constexpr DualN(Real x, Real a, Real b) : v(x), d{a, b} {}

  CHENS_HD friend DualN operator+(const DualN& a, const DualN& b) {
    DualN r;
    r.v = a.v + b.v;
    CHENS_UNROLL
    for (int k = 0; k < K; ++k) r.d[k] = a.d[k] + b.d[k];
    return r;
  }
  CHENS_HD friend DualN operator-(const DualN& a, const DualN& b) {
    DualN r;
    r.v = a.v - b.v;
    CHENS_UNROLL
    for (int k = 0; k < K; ++k) r.d[k] = a.d[k] - b.d[k];
    return r;
  }
  CHENS_HD friend DualN operator-(const DualN& a) {
    DualN r;
    r.v = -a.v;
    CHENS_UNROLL
    for (int k = 0; k < K; ++k) r.d[k] = -a.d[k];
    return r;
  }
  CHENS_HD friend DualN operator*(const DualN& a, const DualN& b) {
    DualN r;
    r.v = a.v * b.v;
    CHENS_UNROLL
    for (int k = 0; k < K; ++k) r.d[k] = a.d[k] * b.v + a.v * b.d[k];
    return r;
  }
  CHENS_HD friend DualN operator/(const DualN& a, const DualN& b) {
    const Real q = a.v / b.v;
    DualN r;
    r.v = q;
    CHENS_UNROLL
    for (int k = 0; k < K; ++k) r.d[k] = (a.d[k] - q * b.d[k]) / b.v;
    return r;
  }
  CHENS_HD DualN& operator+=(const DualN& b) { return *this = *this + b; }
  CHENS_HD DualN& operator-=(const DualN& b) { return *this = *this - b; }
  CHENS_HD DualN& operator*=(const DualN& b) { return *this = *this * b; }

  CHENS_HD friend bool operator<(const DualN& a, const DualN& b) { return a.v < b.v; }
  CHENS_HD friend bool operator>(const DualN& a, const DualN& b) { return a.v > b.v; }
  CHENS_HD friend bool operator<=(const DualN& a, const DualN& b) { return a.v <= b.v; }
  CHENS_HD friend bool operator>=(const DualN& a, const DualN& b) { return a.v >= b.v; }
  CHENS_HD friend bool operator==(const DualN& a, const DualN& b) { return a.v == b.v; }
  CHENS_HD friend bool operator!=(const DualN& a, const DualN& b) { return a.v != b.v; }

  // f(a) with f(a.v) = fv and f'(a.v) = g: every part scaled by g.
  CHENS_HD static DualN chain(Real fv, Real g, const DualN& a) {
    DualN r;
    r.v = fv;
    CHENS_UNROLL
    for (int k = 0; k < K; ++k) r.d[k] = g * a.d[k];
    return r;
  }
  CHENS_HD friend DualN sqrt(const DualN& a) {
    using std::sqrt;
    const Real s = sqrt(a.v);
    return chain(s, Real(0.5) / s, a);
  }
  CHENS_HD friend DualN exp(const DualN& a) {
    using std::exp;
    const Real e = exp(a.v);
    return chain(e, e, a);
  }
  CHENS_HD friend DualN fabs(const DualN& a) { return a.v < Real(0) ? -a : a; }
};

template <class Real>
using Dual2 = DualN<Real, 2>;

// The value part; plain numbers are their own value.
template <class Real, int K>
CHENS_HD CHENS_FORCEINLINE Real value_of(const DualN<Real, K>& x) {
  return x.v;
}

}  // namespace chens
