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

// Which jets keep masks of structural zeros (below): those of 2 to 4 directions, the
// seeds of small models (the planar and spherical pendulums' passes). Wider jets and those of
// one direction are dense, the tangents computed as they are: masks there made the device
// compiler (cicc) take two to three times longer on the triatomic molecule's nested jets
// (docs/performance.md, "User models"), for little (a wide jet's intermediates do not fit a
// thread's registers anyway; the inner one-direction jets of the nested passes would save the
// planar pendulum 4 of its 52 operations).
template <int K>
inline constexpr bool jet_is_sparse = K >= 2 && K <= 4;

// The mask, where there is one.
template <class Mask, Mask All, bool Sparse>
struct JetMask {
  // Bit k clear: d[k] is exactly zero. Default: every direction possibly nonzero, so code
  // that writes d[] itself needs no mask.
  Mask nz = All;
  CHENS_HD constexpr bool has(int k) const { return (nz >> k) & Mask(1); }
  CHENS_HD constexpr void set_mask(Mask m) { nz = m; }
  CHENS_HD constexpr Mask mask() const { return nz; }
};
template <class Mask, Mask All>
struct JetMask<Mask, All, false> {
  CHENS_HD static constexpr bool has(int) { return true; }
  CHENS_HD constexpr void set_mask(Mask) {}
  CHENS_HD static constexpr Mask mask() { return All; }
};

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

template <int K>
using jet_mask_t = std::conditional_t<(K <= 32), unsigned, unsigned long long>;
template <int K>
inline constexpr jet_mask_t<K> jet_all_directions = K == 8 * int(sizeof(jet_mask_t<K>)) ? ~jet_mask_t<K>(0)
                                                                                        : ((jet_mask_t<K>(1) << K) - 1);

// Structural zeros: a sparse jet's mask has bit k clear when d[k] is exactly zero because no
// seeded variable reaches it (a constant, or a coordinate seeded along other directions), and
// its operations skip those components instead of multiplying and adding zeros, which IEEE
// arithmetic forbids the compiler to drop (0 x is not 0 for infinite x, x + 0 is not x for
// x = -0). The passes of auto_model.hpp seed q_i along e_i alone, so after inlining (of the
// user's V and phi too: chens_add_model raises GCC's inlining budget for that) every mask
// is a compile-time constant and the skipped terms vanish from the code: the planar
// pendulum's one-pass Dirac right-hand side takes 52 SSE2 operations instead of 68
// (docs/performance.md, "User models"). The values are the dense jet's: a skipped term is a
// product with an exact zero, which adds nothing to a finite sum (up to the sign of a zero
// sum; tests/test_jet.cpp).
template <class T, int K>
struct Jet : JetMask<jet_mask_t<K>, jet_all_directions<K>, jet_is_sparse<K>> {
  static_assert(K >= 1 && K <= 64, "a jet carries 1 to 64 directions");
  using Mask = jet_mask_t<K>;
  static constexpr Mask all = jet_all_directions<K>;
  static constexpr bool sparse = jet_is_sparse<K>;
  using JetMask<Mask, all, sparse>::has;
  using JetMask<Mask, all, sparse>::set_mask;
  using JetMask<Mask, all, sparse>::mask;

  T v;
  T d[K];

  Jet() = default;
  // Constants (parameters, literals): no tangent. Implicit so that user code over a generic
  // scalar type can write 2 * x or x - l * l whatever the type.
  // cppcheck-suppress noExplicitConstructor ; implicit on purpose, as above
  CHENS_HD constexpr Jet(const T& x) : v(x), d{} {  // NOLINT(google-explicit-constructor)
    for (int k = 0; k < K; ++k) d[k] = T(0);
    set_mask(Mask(0));
  }
  // From plain numbers (int, double) when T is itself a jet: one conversion, not two.
  template <class S, class = std::enable_if_t<std::is_arithmetic_v<S> && !std::is_same_v<S, T>>>
  CHENS_HD constexpr Jet(S x) : Jet(T(x)) {}  // NOLINT(google-explicit-constructor)

  // d[k] = x, now possibly nonzero.
  CHENS_HD constexpr void set_tangent(int k, const T& x) {
    d[k] = x;
    set_mask(mask() | (Mask(1) << k));
  }

  // x seeded with the tangents dx (a variable of the differentiation).
  CHENS_HD static Jet seed(const T& x, const T (&dx)[K]) {
    Jet r;
    r.v = x;
    for (int k = 0; k < K; ++k) r.d[k] = dx[k];
    r.set_mask(all);
    return r;
  }

  // Sparse jets: r.d[k] = f(a.d[k]) where a has direction k, zero where it has not.
  template <class F>
  CHENS_HD CHENS_FORCEINLINE static void map(Jet& r, const Jet& a, F f) {
    r.set_mask(a.mask());
    CHENS_UNROLL
    for (int k = 0; k < K; ++k) {
      if (a.has(k)) {
        r.d[k] = f(a.d[k]);
      } else {
        r.d[k] = T(0);
      }
    }
  }
  // Sparse jets: r.d[k] = f(a.d[k], b.d[k]), fa(a.d[k]) or fb(b.d[k]) as both, a or b have
  // direction k (with constant masks the branches fold).
  template <class F, class FA, class FB>
  CHENS_HD CHENS_FORCEINLINE static void zip(Jet& r, const Jet& a, const Jet& b, F f, FA fa, FB fb) {
    r.set_mask(a.mask() | b.mask());
    CHENS_UNROLL
    for (int k = 0; k < K; ++k) {
      if (a.has(k) && b.has(k)) {
        r.d[k] = f(a.d[k], b.d[k]);
      } else if (a.has(k)) {
        r.d[k] = fa(a.d[k]);
      } else if (b.has(k)) {
        r.d[k] = fb(b.d[k]);
      } else {
        r.d[k] = T(0);
      }
    }
  }

  CHENS_HD friend Jet operator+(const Jet& a, const Jet& b) {
    Jet r;
    r.v = a.v + b.v;
    if constexpr (sparse) {
      zip(
          r, a, b, [](const T& x, const T& y) { return x + y; }, [](const T& x) { return x; }, [](const T& y) { return y; });
    } else {
      for (int k = 0; k < K; ++k) r.d[k] = a.d[k] + b.d[k];
    }
    return r;
  }
  CHENS_HD friend Jet operator-(const Jet& a, const Jet& b) {
    Jet r;
    r.v = a.v - b.v;
    if constexpr (sparse) {
      zip(
          r, a, b, [](const T& x, const T& y) { return x - y; }, [](const T& x) { return x; },
          [](const T& y) { return -y; });
    } else {
      for (int k = 0; k < K; ++k) r.d[k] = a.d[k] - b.d[k];
    }
    return r;
  }
  CHENS_HD friend Jet operator-(const Jet& a) {
    Jet r;
    r.v = -a.v;
    negate_tangents(r, a);
    return r;
  }
  CHENS_HD friend Jet operator*(const Jet& a, const Jet& b) {
    Jet r;
    r.v = a.v * b.v;
    if constexpr (sparse) {
      zip(
          r, a, b, [&](const T& x, const T& y) { return x * b.v + a.v * y; }, [&](const T& x) { return x * b.v; },
          [&](const T& y) { return a.v * y; });
    } else {
      for (int k = 0; k < K; ++k) r.d[k] = a.d[k] * b.v + a.v * b.d[k];
    }
    return r;
  }
  CHENS_HD friend Jet operator/(const Jet& a, const Jet& b) {
    Jet r;
    r.v = a.v / b.v;
    if constexpr (sparse) {
      const T rv = r.v;
      zip(
          r, a, b, [&](const T& x, const T& y) { return (x - rv * y) / b.v; }, [&](const T& x) { return x / b.v; },
          [&](const T& y) { return -(rv * y) / b.v; });
    } else {
      for (int k = 0; k < K; ++k) r.d[k] = (a.d[k] - r.v * b.d[k]) / b.v;
    }
    return r;
  }
  // r's tangents: s * a's (or a's * s: the order of the product as written), or a's / s.
  template <class S>
  CHENS_HD CHENS_FORCEINLINE static void scale_tangents(Jet& r, const S& c, const Jet& a) {
    if constexpr (sparse) {
      map(r, a, [&](const T& x) { return c * x; });
    } else {
      for (int k = 0; k < K; ++k) r.d[k] = c * a.d[k];
    }
  }
  template <class S>
  CHENS_HD CHENS_FORCEINLINE static void tangents_scaled(Jet& r, const Jet& a, const S& c) {
    if constexpr (sparse) {
      map(r, a, [&](const T& x) { return x * c; });
    } else {
      for (int k = 0; k < K; ++k) r.d[k] = a.d[k] * c;
    }
  }
  template <class S>
  CHENS_HD CHENS_FORCEINLINE static void tangents_divided(Jet& r, const Jet& a, const S& c) {
    if constexpr (sparse) {
      map(r, a, [&](const T& x) { return x / c; });
    } else {
      for (int k = 0; k < K; ++k) r.d[k] = a.d[k] / c;
    }
  }
  CHENS_HD CHENS_FORCEINLINE static void negate_tangents(Jet& r, const Jet& a) {
    if constexpr (sparse) {
      map(r, a, [](const T& x) { return -x; });
    } else {
      for (int k = 0; k < K; ++k) r.d[k] = -a.d[k];
    }
  }
  // With a constant (a parameter, a literal) of the tangents' type T or, for nested jets, of
  // the innermost type or any plain number: no products with zero tangents. The template
  // takes the constants other than T (exact matches: no ambiguity between converting the
  // constant to T or to Jet).
  template <class S>
  static constexpr bool other_constant = (std::is_arithmetic_v<S> ||
                                          std::is_same_v<S, jet_base_t<T>>)&&!std::is_same_v<S, T>;
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
    negate_tangents(r, a);
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
    negate_tangents(r, a);
    return r;
  }
  CHENS_HD friend Jet operator*(const Jet& a, const T& c) {
    Jet r;
    r.v = a.v * c;
    tangents_scaled(r, a, c);
    return r;
  }
  CHENS_HD friend Jet operator*(const T& c, const Jet& a) {
    Jet r;
    r.v = c * a.v;
    scale_tangents(r, c, a);
    return r;
  }
  template <class S, std::enable_if_t<other_constant<S>, int> = 0>
  CHENS_HD friend Jet operator*(const Jet& a, const S& c) {
    Jet r;
    r.v = a.v * c;
    tangents_scaled(r, a, c);
    return r;
  }
  template <class S, std::enable_if_t<other_constant<S>, int> = 0>
  CHENS_HD friend Jet operator*(const S& c, const Jet& a) {
    Jet r;
    r.v = c * a.v;
    scale_tangents(r, c, a);
    return r;
  }
  CHENS_HD friend Jet operator/(const Jet& a, const T& c) {
    Jet r;
    r.v = a.v / c;
    tangents_divided(r, a, c);
    return r;
  }
  CHENS_HD friend Jet operator/(const T& c, const Jet& a) { return Jet(T(c)) / a; }
  template <class S, std::enable_if_t<other_constant<S>, int> = 0>
  CHENS_HD friend Jet operator/(const Jet& a, const S& c) {
    Jet r;
    r.v = a.v / c;
    tangents_divided(r, a, c);
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
    scale_tangents(r, g, a);
    return r;
  }
  CHENS_HD friend Jet exp(const Jet& a) {
    using std::exp;
    Jet r;
    r.v = exp(a.v);
    const T e = r.v;
    scale_tangents(r, e, a);
    return r;
  }
  CHENS_HD friend Jet log(const Jet& a) {
    using std::log;
    Jet r;
    r.v = log(a.v);
    tangents_divided(r, a, a.v);
    return r;
  }
  CHENS_HD friend Jet sin(const Jet& a) {
    using std::cos;
    using std::sin;
    Jet r;
    r.v = sin(a.v);
    const T c = cos(a.v);
    scale_tangents(r, c, a);
    return r;
  }
  CHENS_HD friend Jet cos(const Jet& a) {
    using std::cos;
    using std::sin;
    Jet r;
    r.v = cos(a.v);
    const T s = -sin(a.v);
    scale_tangents(r, s, a);
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
