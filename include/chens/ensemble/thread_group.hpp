// Thread groups that integrate one instance together (issue 20): G threads ("lanes") each
// hold a slice of the instance's state, and the per-instance code exchanges values through
// the group's collectives instead of indexing one thread's arrays. Written once, the code
// runs with
//   SerialGroup   G = 1: one thread holds everything (the CPU backend, the one-thread GPU
//                 kernels); every collective is the identity and compiles away;
//   WarpTile<G>   G = 2..32 consecutive lanes of a CUDA warp: shuffles, and shared memory for
//                 what one lane computes for the group (the chain's tridiagonal solves);
// and, in the tests, a group of G host threads with barriers (tests/support/
// emulated_group.hpp), which runs the GPU's decomposition on the CPU.
//
// A group type has only static members, and every lane of a group must call each
// collective (in the same order: the collectives are the group's synchronisation points):
//   size                  G
//   rank()                this lane, 0..G-1
//   from_next(x)          x of lane rank + 1 (the last lane gets its own x)
//   from_prev(x)          x of lane rank - 1 (lane 0 gets its own x)
//   broadcast(x, src)     x of lane src
//   max(x)                the largest x over the lanes, on every lane (exact: order-free)
//   all(b)                b on every lane
//   ordered_fold(acc, f)  f applied on lane 0, then lane 1, ..., each to the previous
//                         lane's result, which every lane receives: a sum over the lanes'
//                         values in lane order, the order one thread forms it in, so that a
//                         reduction gives the same bits for every G
//   sync()                barrier among the lanes, after which writes to scratch are visible
//   scratch<T>(count)     count values of T shared by the lanes of this group
//
// SliceVec<Real, n, Group> is one lane's slice of a distributed vector: elementwise
// operations act on the slice, and the reductions (max_abs, all_finite) are collectives, so
// the generic integrators and projections (explicit_rk.hpp, policy.hpp, momentum.hpp,
// position.hpp) run unchanged on sliced states and take their decisions uniformly across
// the group. For G = 1 the slice is the whole Vec, and sliced code uses Vec itself.
#pragma once

#include <type_traits>

#include <chens/config.hpp>
#include <chens/ensemble/slice_vec_fwd.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

struct SerialGroup {
  static constexpr int size = 1;
  CHENS_HD CHENS_FORCEINLINE static int rank() { return 0; }
  template <class T>
  CHENS_HD CHENS_FORCEINLINE static T from_next(const T& x) {
    return x;
  }
  template <class T>
  CHENS_HD CHENS_FORCEINLINE static T from_prev(const T& x) {
    return x;
  }
  template <class T>
  CHENS_HD CHENS_FORCEINLINE static T broadcast(const T& x, int) {
    return x;
  }
  template <class T>
  CHENS_HD CHENS_FORCEINLINE static T max(const T& x) {
    return x;
  }
  CHENS_HD CHENS_FORCEINLINE static bool all(bool b) { return b; }
  template <class T, class F>
  CHENS_HD CHENS_FORCEINLINE static T ordered_fold(T acc, const F& f) {
    return f(acc);
  }
  CHENS_HD CHENS_FORCEINLINE static void sync() {}
};

#if defined(__CUDACC__)
// G consecutive lanes of a warp (G a power of two, 2..32), lanes rank = threadIdx.x % G:
// the kernel's block size is a multiple of 32 and every lane of a tile runs the same
// collectives (tiles of one warp may diverge: each tile shuffles under its own mask).
// scratch() is the tile's part of the block's dynamic shared memory, `count` values per
// tile, tiles in order of threadIdx.x / G: the launch gives (blockDim.x / G) * count * sizeof(T)
// bytes of it.
template <int G>
struct WarpTile {
  static_assert(G >= 2 && G <= 32 && (G & (G - 1)) == 0, "a warp tile has 2, 4, 8, 16 or 32 lanes");
  static constexpr int size = G;
  __device__ CHENS_FORCEINLINE static int rank() { return static_cast<int>(threadIdx.x) & (G - 1); }
  __device__ CHENS_FORCEINLINE static unsigned mask() {
    if constexpr (G == 32) {
      return 0xffffffffu;
    } else {
      return ((1u << G) - 1u) << (static_cast<unsigned>(threadIdx.x) & 31u & ~static_cast<unsigned>(G - 1));
    }
  }
  // Scalars and fixed-size vectors of them (Vec<Real, n>: one shuffle per component).
  template <class T>
  __device__ CHENS_FORCEINLINE static T from_next(const T& x) {
    return shuffle(x, [](auto v) { return __shfl_down_sync(mask(), v, 1, G); });
  }
  template <class T>
  __device__ CHENS_FORCEINLINE static T from_prev(const T& x) {
    return shuffle(x, [](auto v) { return __shfl_up_sync(mask(), v, 1, G); });
  }
  template <class T>
  __device__ CHENS_FORCEINLINE static T broadcast(const T& x, int src) {
    return shuffle(x, [src](auto v) { return __shfl_sync(mask(), v, src, G); });
  }
  template <class T>
  __device__ CHENS_FORCEINLINE static T max(T x) {
    CHENS_UNROLL
    for (int off = 1; off < G; off *= 2) {
      const T y = __shfl_xor_sync(mask(), x, off, G);
      x = y > x ? y : x;
    }
    return x;
  }
  __device__ CHENS_FORCEINLINE static bool all(bool b) {
    int v = b ? 1 : 0;
    CHENS_UNROLL
    for (int off = 1; off < G; off *= 2) v &= __shfl_xor_sync(mask(), v, off, G);
    return v != 0;
  }
  template <class T, class F>
  __device__ CHENS_FORCEINLINE static T ordered_fold(T acc, const F& f) {
    for (int r = 0; r < G; ++r) {
      if (rank() == r) acc = f(acc);
      acc = broadcast(acc, r);
    }
    return acc;
  }
  __device__ CHENS_FORCEINLINE static void sync() { __syncwarp(mask()); }
  template <class T>
  __device__ CHENS_FORCEINLINE static T* scratch(int count) {
    extern __shared__ double chens_tile_scratch[];
    return reinterpret_cast<T*>(chens_tile_scratch) + (static_cast<int>(threadIdx.x) / G) * count;
  }

 private:
  template <class T, class Shfl>
  __device__ CHENS_FORCEINLINE static T shuffle(const T& x, const Shfl& shfl) {
    if constexpr (std::is_arithmetic_v<T>) {
      return shfl(x);
    } else {
      T r;
      CHENS_UNROLL
      for (int i = 0; i < T::size; ++i) r[i] = shfl(x[i]);
      return r;
    }
  }
};
#endif

// One lane's slice of a vector distributed over Group (G >= 2; see sliced_vec_t).
template <class Real, int N, class Group>
struct SliceVec {
  static constexpr int size = N;
  Vec<Real, N> local;

  CHENS_HD CHENS_FORCEINLINE Real& operator[](int i) { return local[i]; }
  CHENS_HD CHENS_FORCEINLINE const Real& operator[](int i) const { return local[i]; }
  CHENS_HD static SliceVec zero() { return SliceVec{Vec<Real, N>::zero()}; }
};

template <class Real, int N, class Group>
CHENS_HD CHENS_FORCEINLINE SliceVec<Real, N, Group> operator+(const SliceVec<Real, N, Group>& a,
                                                              const SliceVec<Real, N, Group>& b) {
  return {a.local + b.local};
}
template <class Real, int N, class Group>
CHENS_HD CHENS_FORCEINLINE SliceVec<Real, N, Group> operator-(const SliceVec<Real, N, Group>& a,
                                                              const SliceVec<Real, N, Group>& b) {
  return {a.local - b.local};
}
template <class Real, int N, class Group>
CHENS_HD CHENS_FORCEINLINE SliceVec<Real, N, Group> operator*(const Real& s, const SliceVec<Real, N, Group>& a) {
  return {s * a.local};
}
template <class Real, int N, class Group>
CHENS_HD CHENS_FORCEINLINE SliceVec<Real, N, Group> axpy(const SliceVec<Real, N, Group>& a, const Real& s,
                                                         const SliceVec<Real, N, Group>& b) {
  return {axpy(a.local, s, b.local)};
}
// The largest |component| over the whole vector: the lanes' maxima, maximised (exact).
template <class Real, int N, class Group>
CHENS_HD CHENS_FORCEINLINE Real max_abs(const SliceVec<Real, N, Group>& a) {
  return Group::max(max_abs(a.local));
}
template <class Real, int N, class Group>
CHENS_HD CHENS_FORCEINLINE bool all_finite(const SliceVec<Real, N, Group>& a) {
  return Group::all(all_finite(a.local));
}
// Componentwise conversion of the slice (metrics.hpp measures in double).
template <class To, class Real, int N, class Group>
CHENS_HD CHENS_FORCEINLINE SliceVec<To, N, Group> vec_cast(const SliceVec<Real, N, Group>& a) {
  return {vec_cast<To>(a.local)};
}
// No dot(): a sum over a sliced vector has an order, which the model that lays the vector
// out states (ChainSlice::kinetic, momentum_integrals); generic code that needs one does not
// compile on slices rather than summing one lane's part.

// The type of a lane's n components: Vec itself for one lane, a SliceVec otherwise.
template <class Real, int N, class Group>
using sliced_vec_t = std::conditional_t<Group::size == 1, Vec<Real, N>, SliceVec<Real, N, Group>>;

}  // namespace chens
