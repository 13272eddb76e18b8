// The CUDA backend's kernels (one thread per instance), launched by its engine
// (cuda_engine.cuh, which says how a run uses them): initial data, the general path's
// segment kernel, the lean path's step and measuring kernels, passes, counter sums. Between
// kernels instances live in global memory as a structure of arrays of 8-byte words (word w
// of instance i at w * n + i), so that a warp's loads and stores are coalesced, and a thread
// holds in registers only what stepping needs (ensemble/soa_segment.hpp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/accumulator.hpp>
#include <chens/ensemble/instance.hpp>
#include <chens/ensemble/lean_steps.hpp>
#include <chens/ensemble/quantiles.hpp>
#include <chens/ensemble/soa_segment.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/models/pendulum.hpp>

#include "backends/ensemble_spec.hpp"
#include "backends/instance_records.hpp"
#include "backends/memory_bounds.hpp"

namespace chens::cuda {

template <class System, class Reference>
__global__ void init_instances(System sys, RunParams<typename System::Real> rp, ModelStateOf<System> z0,
                               typename System::Real perturbation, std::uint64_t seed, std::uint64_t first,
                               const std::uint64_t* only, std::uint64_t n, std::uint64_t* inst) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const InstanceOf<System, Reference> in =
      make_instance<System, Reference>(sys, z0, perturbation, seed, only ? only[i] : first + i, rp);  // global index
  soa_store(inst, n, i, in, 0, soa_words<InstanceOf<System, Reference>>);
}

// Where one row of a segment goes: metrics[(row * metric_count + m) * n + i] (structure of
// arrays), valid[row * n + i] = measured; the recorded instances (record, ascending, R of
// them) leave their physical state, reference state and metrics in row row * R + slot of
// `snapshot` (record_row's layout, host/backends/instance_records.hpp): what the statistics
// saw, measured here, not a second evaluation on the host that would differ by FMA and libm
// rounding. The first `keep` instances leave their metrics at the last sample in kept_metrics.
struct RowOutputs {
  double* metrics;
  unsigned char* valid;
  const std::uint64_t* record;
  std::uint64_t R;
  double* snapshot;
  std::uint64_t keep;
  double* kept_metrics;
};

// Slot of global instance g among the recorded ones, or -1 (binary search).
__device__ inline std::int64_t record_slot(const std::uint64_t* record, std::uint64_t R, std::uint64_t g) {
  if (R == 0 || g < record[0] || g > record[R - 1]) return -1;
  std::uint64_t lo = 0, hi = R;
  while (lo < hi) {
    const std::uint64_t mid = (lo + hi) / 2;
    if (record[mid] < g) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return record[lo] == g ? static_cast<std::int64_t>(lo) : -1;
}

// Instance i's metrics and validity into row `row` of the slot, and at the last sample into
// the kept metrics.
__device__ __forceinline__ void emit_metrics(const RowOutputs& out, std::uint64_t n, std::uint64_t i, std::uint64_t row,
                                             bool last_sample, bool ok, const Metrics<double>& m) {
  for (int c = 0; c < metric_count; ++c) out.metrics[(row * metric_count + c) * n + i] = ok ? m.v[c] : 0.0;
  out.valid[row * n + i] = ok ? 1 : 0;
  if (last_sample && i < out.keep)
    for (int c = 0; c < metric_count; ++c) out.kept_metrics[i * metric_count + c] = ok ? m.v[c] : 0.0;
}

template <class System, class Inst>
__device__ __forceinline__ void emit_row(const System& sys, const RunParams<typename System::Real>& rp,
                                         const RowOutputs& out, std::uint64_t n, std::uint64_t i, std::int64_t slot,
                                         std::uint64_t row, index_t k, bool ok, const Metrics<double>& m, const Inst& in) {
  if (slot >= 0)
    fill_recorded_row(sys, rp, in, k, ok, m,
                      out.snapshot + (row * out.R + static_cast<std::uint64_t>(slot)) *
                                         recorded_row_width(physical_state_size_v<System>));
  emit_metrics(out, n, i, row, k == rp.samples, ok, m);
}

// The general path: samples k0 .. k1-1 of every instance (advance_segment_soa).
template <class System, class Method, class Inst>
__global__ void advance_segment(System sys, Method method, RunParams<typename System::Real> rp, std::uint64_t n,
                                std::uint64_t* inst, index_t k0, index_t k1, std::uint64_t first, const std::uint64_t* only,
                                RowOutputs out) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::int64_t slot = record_slot(out.record, out.R, only ? only[i] : first + i);  // global index
  advance_segment_soa<System, Method, Inst>(
      sys, method, rp, inst, n, i, k0, k1, [&](index_t k, bool ok, const Metrics<double>& m, const Inst& in) {
        emit_row(sys, rp, out, n, i, slot, static_cast<std::uint64_t>(k - k0), k, ok, m, in);
      });
}

// The lean path's step kernel: every instance to sample k (lean_step_soa), Threads threads
// per block. The loop's state stays in registers: a seven-atom chain's inlined right-hand
// side then still spills about half a kilobyte per thread into L1 at RK4, which costs less
// than the out-of-line call's stack traffic (docs/performance.md); keeping the state in
// shared memory instead spilled more.
// Small states are held to lean_registers_max registers per thread (5 blocks of 128
// threads per SM): a budget, not a squeeze (the pendulum's kernels need 70 to 90), which
// the pendulum's translation units enforce by making ptxas's spill warning an error
// (kernels/CMakeLists.txt), so that a change that outgrows it fails the build.
inline constexpr unsigned lean_registers_max = 96;
template <unsigned Threads>
inline constexpr unsigned lean_min_blocks = Threads == 128 ? 65536 / (lean_registers_max * 128) : 1;

template <LeanPolicy P, bool InlineRhs, class StepSystem, class Method, class Inst, unsigned Threads>
__global__ __launch_bounds__(Threads, lean_min_blocks<Threads>) void lean_step(
    StepSystem sys, RunParams<typename StepSystem::Real> rp, std::uint64_t n, std::uint64_t* inst, index_t k,
    index_t until) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  LeanStepResult<typename StepSystem::State> work;
  lean_step_soa<P, InlineRhs, StepSystem, Method, Inst>(sys, rp, inst, n, i, k, work, until);
}

// A pass into sample interval k (segment_plan.hpp): every instance within `limit` by the
// general path (after the lean step kernel, only numerical references still move here);
// counts the instances not yet at sample k.
template <class System, class Method, class Inst>
__global__ void advance_partial(System sys, Method method, RunParams<typename System::Real> rp, std::uint64_t n,
                                std::uint64_t* inst, index_t k, StepLimit limit, unsigned long long* short_of) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (!advance_partial_soa<System, Method, Inst>(sys, method, rp, inst, n, i, k, limit)) atomicAdd(short_of, 1ull);
}

// The lean path's measuring kernel: every instance at sample k, row k - k0 of the slot.
template <class System, class Inst>
__global__ void measure_row(System sys, RunParams<typename System::Real> rp, std::uint64_t n, std::uint64_t* inst, index_t k,
                            index_t k0, std::uint64_t first, const std::uint64_t* only, RowOutputs out) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::int64_t slot = record_slot(out.record, out.R, only ? only[i] : first + i);
  measure_soa<System, Inst>(sys, rp, inst, n, i, k, [&](index_t kk, bool ok, const Metrics<double>& m, const Inst& in) {
    emit_row(sys, rp, out, n, i, slot, static_cast<std::uint64_t>(kk - k0), kk, ok, m, in);
  });
}

// Work counters, lost reasons and projected references summed over instances (integers:
// atomics are exact in any order). Each block sums into shared memory first, then adds its
// non-zero sums to the global ones: every instance adding to the same few global words
// serialised about 4 n atomics at the memory system (22 ms at 10^7 instances on the H200,
// docs/performance.md).
template <class Inst>
__global__ void sum_counters(const std::uint64_t* inst, std::uint64_t n, unsigned long long* out) {
  constexpr int fields = sizeof(Counters) / sizeof(std::uint64_t);
  constexpr int sums = fields + lost_reason_count + 1;
  __shared__ unsigned long long block_sum[sums];
  for (int f = static_cast<int>(threadIdx.x); f < sums; f += static_cast<int>(blockDim.x)) block_sum[f] = 0;
  __syncthreads();
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    Inst in;
    soa_load(inst, n, i, in, InstanceWords<Inst>::stepping_end, InstanceWords<Inst>::all);  // counters, reference
    soa_load(inst, n, i, in, SplitWords<Inst>::lost.first, SplitWords<Inst>::lost.end);
    std::uint64_t c[fields];
    std::memcpy(c, &in.c, sizeof c);
    for (int f = 0; f < fields; ++f)
      if (c[f]) atomicAdd(&block_sum[f], static_cast<unsigned long long>(c[f]));
    atomicAdd(&block_sum[fields + in.lost], 1ull);
    if (in.ref.projected) atomicAdd(&block_sum[fields + lost_reason_count], 1ull);
  }
  __syncthreads();
  for (int f = static_cast<int>(threadIdx.x); f < sums; f += static_cast<int>(blockDim.x))
    if (block_sum[f]) atomicAdd(&out[f], block_sum[f]);
}

// Device memory of one segment slot (two alternate) per instance and row: metrics and
// validity, and the block accumulators.
inline constexpr std::size_t slot_bytes_per_instance_row =
    metric_count * sizeof(double) + 1 + (metric_count * sizeof(Accumulator) + cpu_block_size - 1) / cpu_block_size;
template <class Inst>
constexpr std::size_t device_bytes_per_instance(std::int64_t rows) {
  return sizeof(Inst) + 2 * static_cast<std::size_t>(rows) * slot_bytes_per_instance_row;
}

// Threads per block: 128 for small states; a chain's state and stages fill a thread's
// registers, 64.
template <int S>
inline constexpr unsigned threads_for = S <= 16 ? 128 : 64;

// segment_metric_bytes, segment_snapshot_bytes: backends/memory_bounds.hpp.

// The system with m = l = g = 1 known at compile time, where one computes the general
// system's states bit for bit (the pendulum's Hamilton-Dirac equations, hamilton_dirac.hpp),
// or the system itself.
template <class System>
struct unit_twin {
  using type = System;
};
template <class Real>
struct unit_twin<HamiltonDirac<Pendulum<Real, false>>> {
  using type = HamiltonDirac<Pendulum<Real, true>>;
  static type of(const HamiltonDirac<Pendulum<Real, false>>& sys) { return type{sys.model.as_unit()}; }
};

}  // namespace chens::cuda
