// Forward-mode dual numbers carrying two directional derivatives: x = v + d0 e0 + d1 e1
// with e_i e_j = 0. Evaluating a step map over Dual2 gives the map's value and its
// derivative applied to two tangent vectors at once: that is exactly the discrete
// variational equation of 004 §3.2 (the derivative of the step, stages included), for
// any integrator and projection written over a generic Real.
//
// Values are computed with the same operations, in the same order, as over Real itself,
// so a run over Dual2 has bitwise the value trajectory of the run over Real. Comparisons
// look at values only: iteration stopping rules (fixed point, Newton) are those of the
// plain run, and the derivative parts follow the iterates the plain run takes.
#pragma once

#include <cmath>

#include <chens/config.hpp>

namespace chens {

template <class Real>
struct Dual2 {
  Real v;
  Real d0;
  Real d1;

  Dual2() = default;
  // Implicit from a constant: literals and parameters (h, tolerances) carry no tangent, and
  // the generic step code writes Real(2) * x or compares with plain tolerances.
  // cppcheck-suppress noExplicitConstructor ; implicit on purpose, as above
  CHENS_HD constexpr Dual2(Real x) : v(x), d0(Real(0)), d1(Real(0)) {}  // NOLINT(google-explicit-constructor)
  CHENS_HD constexpr Dual2(Real x, Real a, Real b) : v(x), d0(a), d1(b) {}

  CHENS_HD friend Dual2 operator+(const Dual2& a, const Dual2& b) { return {a.v + b.v, a.d0 + b.d0, a.d1 + b.d1}; }
  CHENS_HD friend Dual2 operator-(const Dual2& a, const Dual2& b) { return {a.v - b.v, a.d0 - b.d0, a.d1 - b.d1}; }
  CHENS_HD friend Dual2 operator-(const Dual2& a) { return {-a.v, -a.d0, -a.d1}; }
  CHENS_HD friend Dual2 operator*(const Dual2& a, const Dual2& b) {
    return {a.v * b.v, a.d0 * b.v + a.v * b.d0, a.d1 * b.v + a.v * b.d1};
  }
  CHENS_HD friend Dual2 operator/(const Dual2& a, const Dual2& b) {
    const Real q = a.v / b.v;
    return {q, (a.d0 - q * b.d0) / b.v, (a.d1 - q * b.d1) / b.v};
  }
  CHENS_HD Dual2& operator+=(const Dual2& b) { return *this = *this + b; }
  CHENS_HD Dual2& operator-=(const Dual2& b) { return *this = *this - b; }
  CHENS_HD Dual2& operator*=(const Dual2& b) { return *this = *this * b; }

  CHENS_HD friend bool operator<(const Dual2& a, const Dual2& b) { return a.v < b.v; }
  CHENS_HD friend bool operator>(const Dual2& a, const Dual2& b) { return a.v > b.v; }
  CHENS_HD friend bool operator<=(const Dual2& a, const Dual2& b) { return a.v <= b.v; }
  CHENS_HD friend bool operator>=(const Dual2& a, const Dual2& b) { return a.v >= b.v; }
  CHENS_HD friend bool operator==(const Dual2& a, const Dual2& b) { return a.v == b.v; }
  CHENS_HD friend bool operator!=(const Dual2& a, const Dual2& b) { return a.v != b.v; }

  CHENS_HD friend Dual2 sqrt(const Dual2& a) {
    using std::sqrt;
    const Real s = sqrt(a.v);
    const Real g = Real(0.5) / s;
    return {s, g * a.d0, g * a.d1};
  }
  CHENS_HD friend Dual2 exp(const Dual2& a) {
    using std::exp;
    const Real e = exp(a.v);
    return {e, e * a.d0, e * a.d1};
  }
  CHENS_HD friend Dual2 fabs(const Dual2& a) { return a.v < Real(0) ? -a : a; }
};

// The value part; plain numbers are their own value.
template <class Real>
CHENS_HD CHENS_FORCEINLINE Real value_of(const Dual2<Real>& x) {
  return x.v;
}

}  // namespace chens
