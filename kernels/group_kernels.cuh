// The CUDA engine's kernels for systems on thread groups (issue 20; ensemble/
// group_segment.hpp): a warp tile of chain_group_system<System>::lanes lanes per instance,
// over the engine's structure of arrays, launched by cuda_engine.cuh in place of the
// one-thread step and measuring kernels: group_lean_step (the lean loop), group_advance (the
// per-instance driver, every other method and setting), group_reference (the numerical
// reference), group_measure_row. Blocks of
// group_block threads; a tile past the ensemble's end leaves at once (its lanes' collectives
// are under the tile's own mask, ensemble/thread_group.hpp, so the other tiles of its warp
// are not affected). Each tile has the model's shared scratch (the chain's tridiagonal
// eliminations).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include <chens/ensemble/group_segment.hpp>
#include <chens/ensemble/thread_group.hpp>

#include "ensemble_kernels.cuh"

namespace chens::cuda {

inline constexpr unsigned group_block = 128;
// At least 3 blocks per SM (at most 168 registers a thread), the bound under which the
// chain's group kernels do not spill (docs/performance.md, "Chains on thread groups").
inline constexpr int group_min_blocks = 3;
// The general step kernel (group_advance) holds a method's whole stage storage per lane
// (DOPRI5: seven stage slices, 252 registers for N = 16): 2 blocks per SM, i.e. up to 255
// registers a thread; with 3 (168) DOPRI5 and Gauss2 spilled 400 and 300 bytes.
inline constexpr int group_advance_min_blocks = 2;

template <class System>
struct GroupLaunch {
  static constexpr int lanes = chain_group_system<System>::lanes;
  using Group = WarpTile<lanes>;
  using Slice = typename chain_group_system<System>::template slice<Group>;
  // Dynamic shared memory of a block: each tile's scratch.
  static constexpr std::size_t smem_bytes =
      (group_block / lanes) * sizeof(double) * decltype(Slice::model)::Gram::scratch_count;
  static unsigned grid(std::uint64_t n) { return static_cast<unsigned>((n * lanes + group_block - 1) / group_block); }
  // f(slice, i) on this thread: its lane's slice of the system, its tile's instance i; a tile
  // past the ensemble's end (i >= n) leaves at once. Every group kernel's body.
  template <class F>
  static __device__ CHENS_FORCEINLINE void on_tile(const System& sys, std::uint64_t n, F&& f) {
    const std::uint64_t i = (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / lanes;
    if (i < n) f(chain_group_system<System>::template slice_of<Group>(sys), i);
  }
  // Lets a kernel have smem_bytes of dynamic shared memory (beyond 48 KB from N = 256 on).
  template <class Kernel>
  static cudaError_t allow_scratch(Kernel* kernel) {
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_bytes));
  }
};

// The lean step kernel's bound: group_min_blocks while a lane holds two atoms (N <= 64);
// from four atoms a lane (N = 128) RK4's four stage slices need more registers (612 bytes
// spilled under 168, none under 255 at N = 128; docs/performance.md).
template <class System>
inline constexpr int group_lean_min_blocks =
    decltype(GroupLaunch<System>::Slice::model)::lane_atoms >= 4 ? group_advance_min_blocks : group_min_blocks;

// Every instance toward sample k, stopping at step `until` (group_lean_step_soa).
template <LeanPolicy P, class System, class Method, class Inst>
__global__ __launch_bounds__(group_block, group_lean_min_blocks<System>) void group_lean_step(
    System sys, RunParams<double> rp, std::uint64_t n, std::uint64_t* inst, index_t k, index_t until) {
  using L = GroupLaunch<System>;
  L::on_tile(sys, n, [&](const typename L::Slice& slice, std::uint64_t i) {
    LeanStepResult<typename L::Slice::State> work;
    group_lean_step_soa<P, true, Method, Inst>(slice, rp, inst, n, i, k, work, until);
  });
}

// Every instance toward sample k within `limit` by the per-instance driver (group_advance_soa):
// the methods and projection settings the lean loop does not take.
template <class System, class Method, class Inst>
__global__ __launch_bounds__(group_block, group_advance_min_blocks) void group_advance(
    System sys, Method method, RunParams<double> rp, std::uint64_t n, std::uint64_t* inst, index_t k, StepLimit limit) {
  GroupLaunch<System>::on_tile(sys, n, [&](const auto& slice, std::uint64_t i) {
    group_advance_soa<Method, Inst>(slice, method, rp, inst, n, i, k, limit);
  });
}

// Every instance's numerical reference toward sample k within `attempts` trial steps, once
// the instance is there (group_reference_soa). Templated on the reference's own system
// (HamiltonDirac of the chain) and on whether the method is adaptive, not on the formulation
// or the method, so that a unit compiles it once or twice. DOPRI5's stages: as group_advance.
template <class RefSystem, class Inst, bool Adaptive>
__global__ __launch_bounds__(group_block, group_advance_min_blocks) void group_reference(
    RefSystem sys, RunParams<double> rp, std::uint64_t n, std::uint64_t* inst, index_t k, index_t attempts) {
  GroupLaunch<RefSystem>::on_tile(sys, n, [&](const auto& slice, std::uint64_t i) {
    group_reference_soa<Adaptive, Inst>(slice, rp, inst, n, i, k, attempts);
  });
}

// Every instance at sample k measured into row k - k0 of the slot (group_measure_soa).
template <class System, class Inst>
__global__ __launch_bounds__(group_block, group_min_blocks) void group_measure_row(
    System sys, RunParams<double> rp, std::uint64_t n, std::uint64_t* inst, index_t k, index_t k0, std::uint64_t first,
    const std::uint64_t* only, RowOutputs out) {
  using L = GroupLaunch<System>;
  L::on_tile(sys, n, [&](const typename L::Slice& slice, std::uint64_t i) {
    const std::int64_t slot = record_slot(out.record, out.R, only ? only[i] : first + i);  // global index
    group_measure_soa<Inst>(slice, rp, inst, n, i, k,
                            [&](index_t kk, bool ok, const Metrics<double>& m, const typename L::Slice::State& z,
                                const GroupReferenceSlice<Inst, typename L::Slice>& ref) {
                              const std::uint64_t row = static_cast<std::uint64_t>(kk - k0);
                              if (slot >= 0)
                                group_fill_recorded_row(slice, z, ref, ok, m,
                                                        out.snapshot +
                                                            (row * out.R + static_cast<std::uint64_t>(slot)) *
                                                                recorded_row_width(physical_state_size_v<System>));
                              if (L::Group::rank() == 0) emit_metrics(out, n, i, row, kk == rp.samples, ok, m);
                            });
  });
}

// A pass's count of the instances not yet at sample k (one thread per instance).
template <class Method, class Inst>
__global__ void group_count_short(RunParams<double> rp, std::uint64_t n, const std::uint64_t* inst, index_t k,
                                  unsigned long long* short_of) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (!group_at_sample_soa<Method, Inst>(rp, inst, n, i, k)) atomicAdd(short_of, 1ull);
}

}  // namespace chens::cuda
