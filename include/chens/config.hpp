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
// must agree bit for bit across backends (initial data, statistics) do so on the GPU as well.
template <class T>
CHENS_HD CHENS_FORCEINLINE T mul_rn(const T& a, const T& b) {
  return a * b;  // other scalar types (dual numbers, counters) have no fused operations
}
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

// a * b + c with the rounding decided here rather than by the compiler: one rounding on the
// GPU (an explicit fused multiply-add), two on the host (x86-64 without -march has no FMA,
// and ISO C++ mode does not contract). nvcc otherwise fuses a product into an addition where
// ptxas chooses to, and the choice can differ between two kernels running the same formula
// (a constant folded away, different register pressure): formulas whose GPU results must
// not depend on the kernel (HamiltonDirac<Pendulum>, axpy, the accumulators) say where
// they fuse. A CUDA unit compiled with CHENS_UNFUSED defined (and -fmad=false) rounds
// twice as the host does, so that its kernels give the CPU's bits (kernels/chain_group_exact.cu).
#if defined(__CUDA_ARCH__) && !defined(CHENS_UNFUSED)
#define CHENS_DEVICE_FMA 1
#endif
template <class T>
CHENS_HD CHENS_FORCEINLINE T fmadd(const T& a, const T& b, const T& c) {
  return a * b + c;
}
CHENS_HD CHENS_FORCEINLINE double fmadd(double a, double b, double c) {
#if defined(CHENS_DEVICE_FMA)
  return __fma_rn(a, b, c);
#else
  return a * b + c;
#endif
}
CHENS_HD CHENS_FORCEINLINE float fmadd(float a, float b, float c) {
#if defined(CHENS_DEVICE_FMA)
  return __fmaf_rn(a, b, c);
#else
  return a * b + c;
#endif
}

// a * b - c and c - a * b, likewise (the sign flips are free operand modifiers of the FMA).
template <class T>
CHENS_HD CHENS_FORCEINLINE T fmsub(const T& a, const T& b, const T& c) {
  return a * b - c;
}
template <class T>
CHENS_HD CHENS_FORCEINLINE T fnmadd(const T& a, const T& b, const T& c) {
  return c - a * b;
}
#if defined(CHENS_DEVICE_FMA)
__device__ CHENS_FORCEINLINE double fmsub(double a, double b, double c) { return __fma_rn(a, b, -c); }
__device__ CHENS_FORCEINLINE float fmsub(float a, float b, float c) { return __fmaf_rn(a, b, -c); }
__device__ CHENS_FORCEINLINE double fnmadd(double a, double b, double c) { return __fma_rn(-a, b, c); }
__device__ CHENS_FORCEINLINE float fnmadd(float a, float b, float c) { return __fmaf_rn(-a, b, c); }
#endif

template <class Real>
CHENS_HD constexpr Real machine_epsilon() {
  return sizeof(Real) >= 8 ? Real(2.220446049250313080847e-16) : Real(1.1920928955078125e-7);
}

}  // namespace chens
