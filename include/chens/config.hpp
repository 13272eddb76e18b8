// The one place that knows whether a translation unit is compiled by nvcc.
// Per-instance numerics are written once, marked CHENS_HD, and run unchanged on
// the CPU backend (g++) and inside CUDA kernels (nvcc).
#pragma once

#if defined(__CUDACC__)
#define CHENS_HD __host__ __device__
#define CHENS_FORCEINLINE __forceinline__
#define CHENS_NOINLINE __noinline__
#else
#define CHENS_HD
#define CHENS_FORCEINLINE inline __attribute__((always_inline))
#define CHENS_NOINLINE __attribute__((noinline))
#endif

#if defined(__CUDACC__) || defined(__clang__)
#define CHENS_UNROLL _Pragma("unroll")
#else
#define CHENS_UNROLL _Pragma("GCC unroll 16")
#endif

#include <cstdint>

namespace chens {
using index_t = std::int64_t;
}

namespace chens {

// A product that is never contracted into a fused multiply-add, so that values which
// must agree bit for bit across backends (initial data) do so on the GPU as well.
CHENS_HD CHENS_FORCEINLINE double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
CHENS_HD CHENS_FORCEINLINE float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

template <class Real>
CHENS_HD constexpr Real machine_epsilon() {
  return sizeof(Real) >= 8 ? Real(2.220446049250313080847e-16) : Real(1.1920928955078125e-7);
}

}  // namespace chens
