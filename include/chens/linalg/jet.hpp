// Forward-mode automatic differentiation for the user models of models/auto_model.hpp
// (issue 19): a Jet<T, K> is a value with K directional derivatives, x = v + sum_k d_k e_k,
// e_i e_j = 0. Nesting gives second derivatives: over Jet<Jet<Real, 1>, K> the inner tangent
// carries a direction u and the outer ones directions w_k, and the outer tangents' inner
// tangents are the second derivatives D^2 f [w_k, u]. Everything chens needs of a model
// beyond V and phi (grad V, the Jacobian J, Hess(phi_a) v, the brackets {psi, H} and S of
// 002 eqs. 43-45) is one pass of V or phi over such a type (auto_model.hpp).
//
// Host/device (CHENS_HD), fixed sizes, trivially copyable, no heap: jets live in registers
// on the GPU. T is any arithmetic type with +, -, *, / (double, float, the CPU lanes' D2, or
// a Jet). Operations with a plain number (a parameter, a literal) touch only the parts they
// must: c * x scales the value and the tangents, c + x changes the value alone.
#pragma once

#include <cmath>
#include <type_traits>

#include <chens/config.hpp>

namespace chens {

template <class T, int K>
struct Jet;

// The innermost arithmetic type of a (possibly nested) jet.
template <class T>
struct jet_base {
  using type = T;
};
template <class T, int K>
struct jet_base<Jet<T, K>> {
  using type = typename jet_base<T>::type;
};
template <class T>
using jet_base_t = typename jet_base<T>::type;

template <class T, int K>
struct Jet {
  static_assert(K >= 1, "a jet carries at least one direction");
  T v;
  T d[K];

  Jet() = default;
  // Constants (parameters, literals): no tangent. Implicit so that user code over a generic
  // scalar type can write 2 * x or x - l * l whatever the type.
  // cppcheck-suppress noExplicitConstructor ; implicit on purpose, as above
  CHENS_HD constexpr Jet(const T& x) : v(x), d{} {  // NOLINT(google-explicit-constructor)
    for (int k = 0; k < K; ++k) d[k] = T(0);
  }
  // From plain numbers (int, double) when T is itself a jet: one conversion, not two.
  template <class S, class = std::enable_if_t<std::is_arithmetic_v<S> && !std::is_same_v<S, T>>>
  CHENS_HD constexpr Jet(S x) : Jet(T(x)) {}  // NOLINT(google-explicit-constructor)

  // x seeded with the tangents dx (a variable of the differentiation).
  CHENS_HD static Jet seed(const T& x, const T (&dx)[K]) {
    Jet r;
    r.v = x;
    for (int k = 0; k < K; ++k) r.d[k] = dx[k];
    return r;
  }

  CHENS_HD friend Jet operator+(const Jet& a, const Jet& b) {
    Jet r;
    r.v = a.v + b.v;
    for (int k = 0; k < K; ++k) r.d[k] = a.d[k] + b.d[k];
    return r;
  }
  CHENS_HD friend Jet operator-(const Jet& a, const Jet& b) {
    Jet r;
    r.v = a.v - b.v;
    for (int k = 0; k < K; ++k) r.d[k] = a.d[k] - b.d[k];
    return r;
  }
  CHENS_HD friend Jet operator-(const Jet& a) {
    Jet r;
    r.v = -a.v;
    for (int k = 0; k < K; ++k) r.d[k] = -a.d[k];
    return r;
  }
  CHENS_HD friend Jet operator*(const Jet& a, const Jet& b) {
    Jet r;
    r.v = a.v * b.v;
    for (int k = 0; k < K; ++k) r.d[k] = a.d[k] * b.v + a.v * b.d[k];
    return r;
  }
  CHENS_HD friend Jet operator/(const Jet& a, const Jet& b) {
    Jet r;
    r.v = a.v / b.v;
    for (int k = 0; k < K; ++k) r.d[k] = (a.d[k] - r.v * b.d[k]) / b.v;
    return r;
  }
  // With a constant (a parameter, a literal) of the tangents' type T or, for nested jets, of
  // the innermost type or any plain number: no products with zero tangents. The template
  // takes the constants other than T (exact matches: no ambiguity between converting the
  // constant to T or to Jet).
  template <class S>
  static constexpr bool other_constant = (std::is_arithmetic_v<S> || std::is_same_v<S, jet_base_t<T>>)&&!std::is_same_v<S, T>;
  CHENS_HD friend Jet operator+(const Jet& a, const T& c) {
    Jet r = a;
    r.v = a.v + c;
    return r;
  }
  CHENS_HD friend Jet operator+(const T& c, const Jet& a) {
    Jet r = a;
    r.v = c + a.v;
    return r;
  }
  template <class S, std::enable_if_t<other_constant<S>, int> = 0>
  CHENS_HD friend Jet operator+(const Jet& a, const S& c) {
    Jet r = a;
    r.v = a.v + c;
    return r;
  }
  template <class S, std::enable_if_t<other_constant<S>, int> = 0>
  CHENS_HD friend Jet operator+(const S& c, const Jet& a) {
    Jet r = a;
    r.v = c + a.v;
    return r;
  }
  CHENS_HD friend Jet operator-(const Jet& a, const T& c) {
    Jet r = a;
    r.v = a.v - c;
    return r;
  }
  CHENS_HD friend Jet operator-(const T& c, const Jet& a) {
    Jet r;
    r.v = c - a.v;
    for (int k = 0; k < K; ++k) r.d[k] = -a.d[k];
    return r;
  }
  template <class S, std::enable_if_t<other_constant<S>, int> = 0>
  CHENS_HD friend Jet operator-(const Jet& a, const S& c) {
    Jet r = a;
    r.v = a.v - c;
    return r;
  }
  template <class S, std::enable_if_t<other_constant<S>, int> = 0>
  CHENS_HD friend Jet operator-(const S& c, const Jet& a) {
    Jet r;
    r.v = c - a.v;
    for (int k = 0; k < K; ++k) r.d[k] = -a.d[k];
    return r;
  }
  CHENS_HD friend Jet operator*(const Jet& a, const T& c) {
    Jet r;
    r.v = a.v * c;
    for (int k = 0; k < K; ++k) r.d[k] = a.d[k] * c;
    return r;
  }
  CHENS_HD friend Jet operator*(const T& c, const Jet& a) {
    Jet r;
    r.v = c * a.v;
    for (int k = 0; k < K; ++k) r.d[k] = c * a.d[k];
    return r;
  }
  template <class S, std::enable_if_t<other_constant<S>, int> = 0>
  CHENS_HD friend Jet operator*(const Jet& a, const S& c) {
    Jet r;
    r.v = a.v * c;
    for (int k = 0; k < K; ++k) r.d[k] = a.d[k] * c;
    return r;
  }
  template <class S, std::enable_if_t<other_constant<S>, int> = 0>
  CHENS_HD friend Jet operator*(const S& c, const Jet& a) {
    Jet r;
    r.v = c * a.v;
    for (int k = 0; k < K; ++k) r.d[k] = c * a.d[k];
    return r;
  }
  CHENS_HD friend Jet operator/(const Jet& a, const T& c) {
    Jet r;
    r.v = a.v / c;
    for (int k = 0; k < K; ++k) r.d[k] = a.d[k] / c;
    return r;
  }
  CHENS_HD friend Jet operator/(const T& c, const Jet& a) {
    return Jet(T(c)) / a;
  }
  template <class S, std::enable_if_t<other_constant<S>, int> = 0>
  CHENS_HD friend Jet operator/(const Jet& a, const S& c) {
    Jet r;
    r.v = a.v / c;
    for (int k = 0; k < K; ++k) r.d[k] = a.d[k] / c;
    return r;
  }
  template <class S, std::enable_if_t<other_constant<S>, int> = 0>
  CHENS_HD friend Jet operator/(const S& c, const Jet& a) {
    return Jet(T(c)) / a;
  }
  CHENS_HD Jet& operator+=(const Jet& b) { return *this = *this + b; }
  CHENS_HD Jet& operator-=(const Jet& b) { return *this = *this - b; }
  CHENS_HD Jet& operator*=(const Jet& b) { return *this = *this * b; }
  CHENS_HD Jet& operator/=(const Jet& b) { return *this = *this / b; }

  // Comparisons look at values only (branches in V or phi follow the value).
  CHENS_HD friend bool operator<(const Jet& a, const Jet& b) { return a.v < b.v; }
  CHENS_HD friend bool operator>(const Jet& a, const Jet& b) { return a.v > b.v; }
  CHENS_HD friend bool operator<=(const Jet& a, const Jet& b) { return a.v <= b.v; }
  CHENS_HD friend bool operator>=(const Jet& a, const Jet& b) { return a.v >= b.v; }

  // Elementary functions: f(v) and f'(v) times the tangents.
  CHENS_HD friend Jet sqrt(const Jet& a) {
    using std::sqrt;
    Jet r;
    r.v = sqrt(a.v);
    const T g = T(0.5) / r.v;
    for (int k = 0; k < K; ++k) r.d[k] = g * a.d[k];
    return r;
  }
  CHENS_HD friend Jet exp(const Jet& a) {
    using std::exp;
    Jet r;
    r.v = exp(a.v);
    for (int k = 0; k < K; ++k) r.d[k] = r.v * a.d[k];
    return r;
  }
  CHENS_HD friend Jet log(const Jet& a) {
    using std::log;
    Jet r;
    r.v = log(a.v);
    for (int k = 0; k < K; ++k) r.d[k] = a.d[k] / a.v;
    return r;
  }
  CHENS_HD friend Jet sin(const Jet& a) {
    using std::cos;
    using std::sin;
    Jet r;
    r.v = sin(a.v);
    const T c = cos(a.v);
    for (int k = 0; k < K; ++k) r.d[k] = c * a.d[k];
    return r;
  }
  CHENS_HD friend Jet cos(const Jet& a) {
    using std::cos;
    using std::sin;
    Jet r;
    r.v = cos(a.v);
    const T s = -sin(a.v);
    for (int k = 0; k < K; ++k) r.d[k] = s * a.d[k];
    return r;
  }
};

// The value of a (possibly nested) jet; plain numbers are their own value.
template <class T>
CHENS_HD CHENS_FORCEINLINE const T& jet_value(const T& x) {
  return x;
}
template <class T, int K>
CHENS_HD CHENS_FORCEINLINE auto jet_value(const Jet<T, K>& x) {
  return jet_value(x.v);
}

}  // namespace chens
