// Two doubles in one SSE2 register, for the CPU lanes (ExplicitRk::step_lanes): a system
// rebound to D2 evaluates two instances' right-hand sides with packed instructions. Every
// operation is the IEEE double operation on each half (addpd, subpd, mulpd, divpd round
// exactly as the scalar addsd, ... that x86-64 code uses) and nothing is fused, so each
// lane is bit for bit what the same code computes in double. Host-only: nvcc never sees it.
#pragma once

#if !defined(__CUDACC__) && defined(__SSE2__)
#include <emmintrin.h>

#include <cmath>

#include <chens/config.hpp>

#define CHENS_HAS_D2 1

namespace chens {

struct D2 {
  __m128d v;
  D2() = default;
  CHENS_FORCEINLINE D2(double x) : v(_mm_set1_pd(x)) {}  // NOLINT: broadcast, as Real(1) needs
  CHENS_FORCEINLINE explicit D2(__m128d x) : v(x) {}
  CHENS_FORCEINLINE static D2 pack(double a, double b) { return D2(_mm_set_pd(b, a)); }
  CHENS_FORCEINLINE double lo() const { return _mm_cvtsd_f64(v); }
  CHENS_FORCEINLINE double hi() const { return _mm_cvtsd_f64(_mm_unpackhi_pd(v, v)); }
};

CHENS_FORCEINLINE D2 operator+(D2 a, D2 b) { return D2(_mm_add_pd(a.v, b.v)); }
CHENS_FORCEINLINE D2 operator-(D2 a, D2 b) { return D2(_mm_sub_pd(a.v, b.v)); }
CHENS_FORCEINLINE D2 operator*(D2 a, D2 b) { return D2(_mm_mul_pd(a.v, b.v)); }
CHENS_FORCEINLINE D2 operator/(D2 a, D2 b) { return D2(_mm_div_pd(a.v, b.v)); }
CHENS_FORCEINLINE D2 operator-(D2 a) { return D2(_mm_xor_pd(a.v, _mm_set1_pd(-0.0))); }
// Lane by lane (the penalty model's exp(x / l), models/penalty_pendulum.hpp).
CHENS_FORCEINLINE D2 exp(D2 a) { return D2::pack(std::exp(a.lo()), std::exp(a.hi())); }

}  // namespace chens
#endif
