// Fixed-size vectors for per-instance state: trivially copyable aggregates that
// live in registers inside kernels. No heap, no virtuals, no exceptions.
#pragma once

#include <chens/config.hpp>

namespace chens {

template <class Real, int N>
struct Vec {
  static_assert(N > 0, "Vec needs at least one component");
  static constexpr int size = N;
  Real v[N];

  CHENS_HD CHENS_FORCEINLINE Real& operator[](int i) { return v[i]; }
  CHENS_HD CHENS_FORCEINLINE const Real& operator[](int i) const { return v[i]; }

  CHENS_HD static Vec zero() {
    Vec r;
    CHENS_UNROLL
    for (int i = 0; i < N; ++i) r.v[i] = Real(0);
    return r;
  }
};

template <class Real, int N>
CHENS_HD CHENS_FORCEINLINE Vec<Real, N> operator+(const Vec<Real, N>& a, const Vec<Real, N>& b) {
  Vec<Real, N> r;
  CHENS_UNROLL
  for (int i = 0; i < N; ++i) r[i] = a[i] + b[i];
  return r;
}

template <class Real, int N>
CHENS_HD CHENS_FORCEINLINE Vec<Real, N> operator-(const Vec<Real, N>& a, const Vec<Real, N>& b) {
  Vec<Real, N> r;
  CHENS_UNROLL
  for (int i = 0; i < N; ++i) r[i] = a[i] - b[i];
  return r;
}

template <class Real, int N>
CHENS_HD CHENS_FORCEINLINE Vec<Real, N> operator*(const Real& s, const Vec<Real, N>& a) {
  Vec<Real, N> r;
  CHENS_UNROLL
  for (int i = 0; i < N; ++i) r[i] = s * a[i];
  return r;
}

// r = a + s * b, fused on the GPU (config.hpp's fmadd): the Runge-Kutta stages round alike
// in every kernel.
template <class Real, int N>
CHENS_HD CHENS_FORCEINLINE Vec<Real, N> axpy(const Vec<Real, N>& a, const Real& s, const Vec<Real, N>& b) {
  Vec<Real, N> r;
  CHENS_UNROLL
  for (int i = 0; i < N; ++i) r[i] = fmadd(s, b[i], a[i]);
  return r;
}

template <class Real, int N>
CHENS_HD CHENS_FORCEINLINE Real dot(const Vec<Real, N>& a, const Vec<Real, N>& b) {
  Real s = a[0] * b[0];
  CHENS_UNROLL
  for (int i = 1; i < N; ++i) s = s + a[i] * b[i];
  return s;
}

template <class Real, int N>
CHENS_HD CHENS_FORCEINLINE Real max_abs(const Vec<Real, N>& a) {
  Real m = a[0] < Real(0) ? -a[0] : a[0];
  CHENS_UNROLL
  for (int i = 1; i < N; ++i) {
    const Real x = a[i] < Real(0) ? -a[i] : a[i];
    m = x > m ? x : m;
  }
  return m;
}

// True when every component is finite. Written with comparisons only so it works
// under -ffast-math-free host code, nvcc and automatic-differentiation scalars.
// Componentwise conversion (float states measured in double).
template <class To, class Real, int N>
CHENS_HD CHENS_FORCEINLINE Vec<To, N> vec_cast(const Vec<Real, N>& a) {
  Vec<To, N> r;
  for (int i = 0; i < N; ++i) r[i] = static_cast<To>(a[i]);
  return r;
}

template <class Real, int N>
CHENS_HD CHENS_FORCEINLINE bool all_finite(const Vec<Real, N>& a) {
  bool ok = true;
  CHENS_UNROLL
  for (int i = 0; i < N; ++i) {
    const Real x = a[i];
    ok = ok && (x == x) && (x - x == x - x);
  }
  return ok;
}

}  // namespace chens
