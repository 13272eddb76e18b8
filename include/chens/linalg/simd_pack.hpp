// W doubles in one vector register (W = 2: SSE2, 4: AVX2, 8: AVX-512), for the CPU lanes: a
// system rebound to Pack<W> evaluates W instances' right-hand sides with packed
// instructions (ensemble/packed_steps.hpp; the general lane path, integrators/explicit_rk.hpp,
// through simd2.hpp's D2 = Pack<2>).
//
// Every operation is the IEEE double operation on each lane: + - * / round each lane
// exactly as the scalar addsd, subsd, mulsd, divsd that x86-64 code uses, and nothing is
// fused, since every C++ unit is compiled with -ffp-contract=off (CMakeLists.txt: without it
// g++ contracts a * b + c into an FMA wherever an AVX-512 or FMA target allows). So each lane
// is bit for bit what the same code computes in double, whatever W, and an ensemble's
// statistics do not depend on the instruction set (tests/test_cpu_isa.cpp).
//
// The type is GCC's generic vector (vector_size): the same source compiles to SSE2, AVX2 or
// AVX-512 instructions depending on the target of the function it is inlined into (the CPU
// engine's dispatch, backends/cpu/cpu_isa.hpp), so one binary carries every width and
// chooses at run time. Host-only: nvcc never sees it.
#pragma once

#if !defined(__CUDACC__) && defined(__GNUC__) && defined(__x86_64__)

#include <cmath>
#include <cstdint>

#include <chens/config.hpp>

#define CHENS_HAS_PACKS 1

namespace chens {

template <int W>
struct PackVector;
template <>
struct PackVector<2> {
  typedef double type __attribute__((vector_size(16)));
  typedef std::int64_t mask __attribute__((vector_size(16)));
};
template <>
struct PackVector<4> {
  typedef double type __attribute__((vector_size(32)));
  typedef std::int64_t mask __attribute__((vector_size(32)));
};
template <>
struct PackVector<8> {
  typedef double type __attribute__((vector_size(64)));
  typedef std::int64_t mask __attribute__((vector_size(64)));
};

template <int W>
struct Pack {
  using V = typename PackVector<W>::type;
  // Per lane all ones (true) or zero (false): what a comparison of two V gives.
  using Mask = typename PackVector<W>::mask;
  static constexpr int width = W;
  V v;
  Pack() = default;
  // Broadcast, as Real(1) needs. x - 0 is x for every x, -0.0 included (0 + -0.0 is +0.0,
  // which made a lane's -0.0 differ from the scalar path's).
  CHENS_FORCEINLINE Pack(double x) : v(x - V{}) {}  // NOLINT
  CHENS_FORCEINLINE explicit Pack(V x) : v(x) {}
  // The general lane path's two-lane interface (explicit_rk.hpp).
  CHENS_FORCEINLINE static Pack pack(double a, double b) requires(W == 2) { return Pack(V{a, b}); }
  CHENS_FORCEINLINE double lo() const requires(W == 2) { return v[0]; }
  CHENS_FORCEINLINE double hi() const requires(W == 2) { return v[1]; }
  // Hidden friends rather than templates, so that a double or an int converts to a Pack
  // (Real(2) * x written as 2 * x, dual numbers' integer constants: linalg/jet.hpp).
  friend CHENS_FORCEINLINE Pack operator+(Pack a, Pack b) { return Pack(a.v + b.v); }
  friend CHENS_FORCEINLINE Pack operator-(Pack a, Pack b) { return Pack(a.v - b.v); }
  friend CHENS_FORCEINLINE Pack operator*(Pack a, Pack b) { return Pack(a.v * b.v); }
  friend CHENS_FORCEINLINE Pack operator/(Pack a, Pack b) { return Pack(a.v / b.v); }
  friend CHENS_FORCEINLINE Pack operator-(Pack a) { return Pack(-a.v); }
};

// Lane by lane through the scalar function (the penalty model's exp(x / l),
// models/penalty_pendulum.hpp), so each lane is the scalar result.
template <int W>
CHENS_FORCEINLINE Pack<W> exp(Pack<W> a) {
  Pack<W> r;
  for (int l = 0; l < W; ++l) r.v[l] = std::exp(a.v[l]);
  return r;
}

// Likewise (dense_solve.hpp's Cholesky factor, which user models with several constraints use):
// a square root is correctly rounded, so each lane is std::sqrt's.
template <int W>
CHENS_FORCEINLINE Pack<W> sqrt(Pack<W> a) {
  Pack<W> r;
  for (int l = 0; l < W; ++l) r.v[l] = std::sqrt(a.v[l]);
  return r;
}

// Lane masks for the packed loop's decisions (ensemble/packed_steps.hpp).
template <int W>
using MaskOf = typename Pack<W>::Mask;
// Lanes where x is finite: x - x is 0 there and NaN for an infinity or a NaN (the test of
// all_finite, vec.hpp).
template <int W>
CHENS_FORCEINLINE MaskOf<W> finite_lanes(Pack<W> x) {
  const auto d = x.v - x.v;
  return d == d;
}
// Lanes where |x| > tol (false for NaN, as the scalar comparison).
template <int W>
CHENS_FORCEINLINE MaskOf<W> exceeds_lanes(Pack<W> x, double tol) {
  const typename Pack<W>::V a = x.v < 0 ? -x.v : x.v;
  return a > tol;
}
// m ? a : b, lane by lane.
template <int W>
CHENS_FORCEINLINE Pack<W> select(MaskOf<W> m, Pack<W> a, Pack<W> b) {
  return Pack<W>(m ? a.v : b.v);
}
template <int W>
CHENS_FORCEINLINE bool any_lane(MaskOf<W> m) {
  std::int64_t r = 0;
  for (int l = 0; l < W; ++l) r |= m[l];
  return r != 0;
}

}  // namespace chens
#endif
