// Forward-mode dual numbers, nestable (Dual<Dual<double, 4>, 4> gives second
// derivatives). Test-only: the dense oracle differentiates H and phi with them, and
// chens' own per-instance code is instantiated with them to get exact directional
// derivatives.
#pragma once

#include <array>
#include <cmath>

namespace chens::test {

template <class T, int N>
struct Dual {
  T v{};
  std::array<T, N> d{};

  Dual() = default;
  Dual(double c) : v(c) {  // NOLINT: constants convert implicitly
    d.fill(T(0.0));
  }
  template <class U = T, class = std::enable_if_t<!std::is_same_v<U, double>>>
  Dual(const T& c) : v(c) {  // NOLINT
    d.fill(T(0.0));
  }
  static Dual variable(const T& value, int i) {
    Dual r(value);
    r.d[i] = T(1.0);
    return r;
  }
};

template <class T, int N>
Dual<T, N> operator+(const Dual<T, N>& a, const Dual<T, N>& b) {
  Dual<T, N> r;
  r.v = a.v + b.v;
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] + b.d[i];
  return r;
}
template <class T, int N>
Dual<T, N> operator-(const Dual<T, N>& a, const Dual<T, N>& b) {
  Dual<T, N> r;
  r.v = a.v - b.v;
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] - b.d[i];
  return r;
}
template <class T, int N>
Dual<T, N> operator-(const Dual<T, N>& a) {
  Dual<T, N> r;
  r.v = -a.v;
  for (int i = 0; i < N; ++i) r.d[i] = -a.d[i];
  return r;
}
template <class T, int N>
Dual<T, N> operator*(const Dual<T, N>& a, const Dual<T, N>& b) {
  Dual<T, N> r;
  r.v = a.v * b.v;
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] * b.v + a.v * b.d[i];
  return r;
}
template <class T, int N>
Dual<T, N> operator/(const Dual<T, N>& a, const Dual<T, N>& b) {
  Dual<T, N> r;
  r.v = a.v / b.v;
  for (int i = 0; i < N; ++i) r.d[i] = (a.d[i] - r.v * b.d[i]) / b.v;
  return r;
}
#define CHENS_DUAL_MIXED(op)                              \
  template <class T, int N>                               \
  Dual<T, N> operator op(const Dual<T, N>& a, double b) { \
    return a op Dual<T, N>(b);                            \
  }                                                       \
  template <class T, int N>                               \
  Dual<T, N> operator op(double a, const Dual<T, N>& b) { \
    return Dual<T, N>(a) op b;                            \
  }
CHENS_DUAL_MIXED(+)
CHENS_DUAL_MIXED(-)
CHENS_DUAL_MIXED(*)
CHENS_DUAL_MIXED(/)
#undef CHENS_DUAL_MIXED

template <class T, int N>
bool operator<(const Dual<T, N>& a, const Dual<T, N>& b) {
  return a.v < b.v;
}
template <class T, int N>
bool operator>(const Dual<T, N>& a, const Dual<T, N>& b) {
  return a.v > b.v;
}
template <class T, int N>
bool operator<=(const Dual<T, N>& a, const Dual<T, N>& b) {
  return a.v <= b.v;
}
template <class T, int N>
bool operator==(const Dual<T, N>& a, const Dual<T, N>& b) {
  return a.v == b.v;
}
template <class T, int N>
bool operator!=(const Dual<T, N>& a, const Dual<T, N>& b) {
  return a.v != b.v;
}

template <class T, int N>
Dual<T, N> sqrt(const Dual<T, N>& a) {
  using std::sqrt;
  Dual<T, N> r;
  r.v = sqrt(a.v);
  for (int i = 0; i < N; ++i) r.d[i] = a.d[i] / (2.0 * r.v);
  return r;
}

inline double value_of(double x) { return x; }
template <class T, int N>
double value_of(const Dual<T, N>& x) {
  return value_of(x.v);
}

}  // namespace chens::test
