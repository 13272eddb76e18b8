// The CUDA ensemble backend: the same per-instance driver as the CPU backend
// (include/chens/ensemble/instance.hpp), one thread per instance, with the ensemble
// statistics reduced on the device. Between kernels instances live in global memory as a
// structure of arrays of 8-byte words (word w of instance i at w * n + i), so that a warp's
// loads and stores are coalesced, and a thread holds in registers only what stepping needs
// (ensemble/soa_segment.hpp).
//
// The run is cut into segments of sample times, and long sample intervals into passes, as
// backends/segment_plan.hpp says (the CPU backend follows the same plan). A pass moves
// every instance part of the way into the next interval (the lean step kernel up to a step
// index, then advance_partial for what the general path and numerical references need)
// and measures nothing; the host waits for it, so that a checkpoint or an interrupt can
// follow. A segment's rows are integrated on the compute stream by one of two paths:
//   - the lean path, for explicit Runge-Kutta methods under the common settings
//     (ensemble/lean_steps.hpp: projection policy fixed at compile time, integer finiteness
//     test, counters from the trip count): per sample row a step kernel that holds only the
//     state in registers, then a measuring kernel (stepping and measuring apart, so that the
//     measurement's registers, the reference's elliptic functions, do not limit the step
//     loop's occupancy). For the pendulum's Hamilton-Dirac equations with m = l = g = 1 the
//     step kernel uses the unit model (models/pendulum.hpp), whose states equal the general
//     model's bit for bit;
//   - the general path, every other method and setting: one kernel per segment running
//     advance_segment_soa (step and measure in one thread).
// Both write each row's metrics (structure of arrays) and validity into the segment's slot.
// The statistics stream then reduces the slot on the device (device_statistics.cuh: block
// accumulators in instance order, the block tree, quantile histograms) and copies the roots
// and histograms, kilobytes per sample, into page-locked memory. Two slots alternate, so
// the next segment's stepping overlaps this segment's reduction and copies, and the host
// turns a segment's roots into statistics while the device integrates the next. The
// reduction is the CPU backend's, operation for operation (block_tree.hpp), with no
// floating-point atomics: statistics are bitwise reproducible from run to run, and equal to
// the CPU's up to the per-instance differences that fused multiply-adds cause. Integer
// counters are summed with atomics.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/accumulator.hpp>
#include <chens/ensemble/instance.hpp>
#include <chens/ensemble/lean_steps.hpp>
#include <chens/ensemble/quantiles.hpp>
#include <chens/ensemble/soa_segment.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/models/pendulum.hpp>

#include "backends/checkpoint.hpp"
#include "backends/cuda_backend.hpp"
#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"
#include "backends/instance_records.hpp"
#include "backends/segment_plan.hpp"
#include "device_buffer.cuh"
#include "device_statistics.cuh"

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

template <class System, class Inst>
__device__ __forceinline__ void emit_row(const System& sys, const RunParams<typename System::Real>& rp,
                                         const RowOutputs& out, std::uint64_t n, std::uint64_t i, std::int64_t slot,
                                         std::uint64_t row, index_t k, bool ok, const Metrics<double>& m,
                                         const Inst& in) {
  for (int c = 0; c < metric_count; ++c) out.metrics[(row * metric_count + c) * n + i] = ok ? m.v[c] : 0.0;
  out.valid[row * n + i] = ok ? 1 : 0;
  if (slot >= 0)
    fill_recorded_row(sys, rp, in, k, ok, m,
                      out.snapshot + (row * out.R + static_cast<std::uint64_t>(slot)) *
                                         recorded_row_width(physical_state_size_v<System>));
  if (k == rp.samples && i < out.keep)
    for (int c = 0; c < metric_count; ++c) out.kept_metrics[i * metric_count + c] = ok ? m.v[c] : 0.0;
}

// The general path: samples k0 .. k1-1 of every instance (advance_segment_soa).
template <class System, class Method, class Inst>
__global__ void advance_segment(System sys, Method method, RunParams<typename System::Real> rp, std::uint64_t n,
                                std::uint64_t* inst, index_t k0, index_t k1, std::uint64_t first,
                                const std::uint64_t* only, RowOutputs out) {
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
__global__ __launch_bounds__(Threads, lean_min_blocks<Threads>) void lean_step(StepSystem sys,
                                                                                RunParams<typename StepSystem::Real> rp,
                                                                                std::uint64_t n, std::uint64_t* inst,
                                                                                index_t k, index_t until) {
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
__global__ void measure_row(System sys, RunParams<typename System::Real> rp, std::uint64_t n, std::uint64_t* inst,
                            index_t k, index_t k0, std::uint64_t first, const std::uint64_t* only, RowOutputs out) {
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

inline constexpr std::size_t segment_metric_bytes = std::size_t(512) << 20;    // one slot's metrics
inline constexpr std::size_t segment_snapshot_bytes = std::size_t(256) << 20;  // recorded instances' copies

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

template <class System, class Method, class Reference>
EnsembleResult run_cuda_ensemble(const System& sys, const Method& method, const RunParams<typename System::Real>& rp,
                                 const ModelStateOf<System>& z0, const EnsembleSpec& spec) {
  // The lean step kernel runs the unit twin when the study's parameters are all 1.
  using UnitSystem = typename unit_twin<System>::type;
  std::optional<UnitSystem> unit_sys;
  if constexpr (!std::is_same_v<UnitSystem, System>) {
    if (sys.model.has_unit_parameters()) unit_sys = unit_twin<System>::of(sys);
  }
  const UnitSystem* unit = unit_sys ? &*unit_sys : nullptr;
  using Inst = InstanceOf<System, Reference>;
  constexpr int S = System::State::size;
  constexpr int P = physical_state_size_v<System>;  // kept and recorded states
  constexpr int W = soa_words<Inst>;
  const auto t_start = std::chrono::steady_clock::now();
  const CudaDeviceInfo dev = cuda_device_info();
  if (!dev.available) throw std::runtime_error(dev.description);
  const std::uint64_t n = spec.size;
  const std::uint64_t keep = std::min<std::uint64_t>(spec.keep_instances, n);
  const index_t samples = rp.samples;
  const std::int64_t blocks = static_cast<std::int64_t>((n + cpu_block_size - 1) / cpu_block_size);
  const std::size_t per_row = n * (metric_count * sizeof(double) + 1);
  // Rows per segment: one slot's metrics under segment_metric_bytes, the recorded instances'
  // snapshots under segment_snapshot_bytes, and within a grid's y extent.
  const std::size_t snap_row = spec.record.size() * recorded_row_width(P) * sizeof(double);
  const index_t seg =
      spec.segment_rows > 0
          ? spec.segment_rows
          : segment_rows(samples,
                         std::min<index_t>({65535, static_cast<index_t>(segment_metric_bytes / std::max<std::size_t>(1, per_row)),
                                            static_cast<index_t>(segment_snapshot_bytes / std::max<std::size_t>(1, snap_row))}));
  constexpr std::size_t hist_row = static_cast<std::size_t>(metric_count) * LogBins::count;
  const bool host_tree = static_cast<bool>(spec.reduce_segment);  // sharded runs merge leaves across ranks
  {  // refuse what does not fit, before anything is launched
    std::size_t free_b = 0, total_b = 0;
    check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    const double need = static_cast<double>(n) * static_cast<double>(device_bytes_per_instance<Inst>(seg)) +
                        2.0 * static_cast<double>(seg) * static_cast<double>(hist_row * sizeof(std::uint32_t) + snap_row) +
                        static_cast<double>(keep) * metric_count * sizeof(double);
    if (need > 0.9 * static_cast<double>(free_b)) {
      char gb[96];
      std::snprintf(gb, sizeof gb, "%.3g GB of device memory, more than 90%% of the %.3g GB free on ", need / 1e9,
                    static_cast<double>(free_b) / 1e9);
      throw DeviceMemoryError("ensemble.size = " + std::to_string(n) + " needs about " + gb + dev.description +
                              "; use a smaller ensemble");
    }
  }

  // The path (see the top of this file).
  LeanPolicy policy = LeanPolicy::none;
  bool lean = false;
  if constexpr (lean_capable_v<System, Method>) lean = spec.gpu_lean && lean_policy_for<System>(rp, policy);
  const bool use_unit = lean && unit != nullptr && spec.gpu_unit;

  EnsembleResult res;
  res.backend = "cuda";
  res.device = dev.description;
  res.threads = 1;
  res.instances = n;
  res.reference_available = Reference::available && rp.reference;
  res.momentum_metrics = decltype(sys.model)::has_momentum_integrals;
  res.wedge_metric = has_tangents_v<System>;
  res.series.resize(static_cast<std::size_t>(samples + 1));
  res.kept = PerInstanceResult::sized(keep, P);
  res.recorded = recorded_sized(spec.record, spec.first_instance, n, spec.only, P, res.reference_available, samples);
  const std::uint64_t R = res.recorded.instances.size();

  Stream compute, stats;
  DeviceArray<std::uint64_t> d_inst(static_cast<std::size_t>(W) * n);
  DeviceArray<std::uint64_t> d_record(R);
  DeviceArray<std::uint64_t> d_only(spec.only.size());  // ensemble.only's indices
  DeviceArray<double> d_kept_metrics(keep * metric_count);
  if (!spec.only.empty())
    check(cudaMemcpy(raw(d_only), spec.only.data(), spec.only.size() * sizeof(std::uint64_t), cudaMemcpyHostToDevice),
          "cudaMemcpy");
  const std::uint64_t* only = spec.only.empty() ? nullptr : raw(d_only);
  if (R > 0)
    check(cudaMemcpy(raw(d_record), res.recorded.instances.data(), R * sizeof(std::uint64_t), cudaMemcpyHostToDevice),
          "cudaMemcpy");
  // One slot of a segment: the device's rows, their statistics, and the page-locked copies.
  struct Slot {
    DeviceArray<double> metrics;
    DeviceArray<unsigned char> valid;
    DeviceArray<double> snap;
    DeviceArray<Accumulator> leaves, tree, roots;
    DeviceArray<std::uint32_t> hist;
    // Page-locked copies, one allocation: roots (or, in sharded runs, the leaves), histograms,
    // recorded rows.
    std::size_t acc_n, hist_n, snap_n;
    PinnedBuffer<unsigned char> pinned;
    Accumulator* h_acc() const { return reinterpret_cast<Accumulator*>(pinned.data()); }
    std::uint32_t* h_hist() const {
      return reinterpret_cast<std::uint32_t*>(pinned.data() + acc_n * sizeof(Accumulator));
    }
    double* h_snap() const {
      return reinterpret_cast<double*>(pinned.data() + acc_n * sizeof(Accumulator) +
                                       (hist_n * sizeof(std::uint32_t) + 7) / 8 * 8);
    }
    Event rows_done, stats_done;
    Event begin{true}, end{true};  // the segment's integration kernels (EnsembleResult::device_seconds)
    Slot(std::size_t rows, std::uint64_t n_, std::int64_t blocks_, std::size_t snap_doubles, bool leaves_to_host)
        : metrics(rows * n_ * metric_count),
          valid(rows * n_),
          snap(snap_doubles),
          leaves(rows * static_cast<std::size_t>(blocks_) * metric_count),
          tree(tree_scratch_count(static_cast<std::int64_t>(rows), blocks_)),
          roots(rows * metric_count),
          hist(rows * metric_count * LogBins::count),
          acc_n(leaves_to_host ? rows * static_cast<std::size_t>(blocks_) * metric_count : rows * metric_count),
          hist_n(rows * metric_count * LogBins::count),
          snap_n(snap_doubles),
          pinned(acc_n * sizeof(Accumulator) + (hist_n * sizeof(std::uint32_t) + 7) / 8 * 8 + snap_n * sizeof(double)) {}
  };
  const std::size_t snap_doubles = static_cast<std::size_t>(seg) * R * recorded_row_width(P);
  Slot slot_a(static_cast<std::size_t>(seg), n, blocks, snap_doubles, host_tree);
  Slot slot_b(static_cast<std::size_t>(seg), n, blocks, snap_doubles, host_tree);
  Slot* slots[2] = {&slot_a, &slot_b};
  constexpr unsigned threads = threads_for<S>;
  const unsigned grid = static_cast<unsigned>((n + threads - 1) / threads);

  // A resumed run (checkpoint.hpp) starts from the saved structure of arrays instead.
  const std::size_t inst_bytes = static_cast<std::size_t>(W) * n * sizeof(std::uint64_t);
  const CheckpointState* from = spec.resume_from;
  if (from) {
    check_resumable(*from, "cuda", W * sizeof(std::uint64_t), n, samples);
    check(cudaMemcpyAsync(raw(d_inst), from->instances.data(), inst_bytes, cudaMemcpyHostToDevice, compute),
          "cudaMemcpyAsync");
  } else if (n > 0) {
    init_instances<System, Reference><<<grid, threads, 0, compute>>>(
        sys, rp, z0, static_cast<typename System::Real>(spec.perturbation), spec.seed, spec.first_instance, only, n,
        raw(d_inst));
    check(cudaGetLastError(), "init_instances launch");
  }
  const index_t start = from ? from->done : 0;
  const double earlier_wall = from ? from->wall_seconds : 0.0;
  auto wall = [&] {
    return earlier_wall + std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  };
  // The first `count` instances, out of the structure of arrays into a structure of arrays
  // of `count` instances (their initial states now, their final states at the end).
  auto fetch_first = [&](std::uint64_t count) {
    std::vector<std::uint64_t> words(static_cast<std::size_t>(W) * count);
    check(cudaMemcpy2DAsync(words.data(), count * sizeof(std::uint64_t), raw(d_inst), n * sizeof(std::uint64_t),
                            count * sizeof(std::uint64_t), W, cudaMemcpyDeviceToHost, compute),
          "cudaMemcpy2DAsync");
    compute.sync("fetching instances");
    return words;
  };
  auto instance = [](const std::vector<std::uint64_t>& words, std::uint64_t count, std::uint64_t i) {
    Inst in;
    soa_load(words.data(), count, i, in, 0, W);
    return in;
  };
  if (from) {
    restore_common(res, *from);
  } else if (keep > 0) {
    const std::vector<std::uint64_t> words = fetch_first(keep);
    for (std::uint64_t i = 0; i < keep; ++i) keep_initial(res.kept, sys, i, instance(words, keep, i));
  }

  // Every instance toward sample k, stopping at step `until`, by the lean step kernel.
  auto lean_step_to = [&](index_t k, index_t until) {
    if constexpr (lean_capable_v<System, Method>) {
      auto step = [&](auto policy_c, const auto& step_sys) {
        using StepSys = std::decay_t<decltype(step_sys)>;
        constexpr LeanPolicy Pc = decltype(policy_c)::value;
        // Large states (chains) inline their right-hand side here, in double: a call would
        // pass the state through the stack at every stage.
        constexpr bool inline_rhs = S > inline_rhs_max_state && std::is_same_v<typename System::Real, double>;
        if constexpr (Pc == LeanPolicy::none || !StepSys::has_impetus) {
          lean_step<Pc, inline_rhs, StepSys, Method, Inst, threads_for<S>>
              <<<grid, threads, 0, compute>>>(step_sys, rp, n, raw(d_inst), k, until);
        }
      };
      auto with_system = [&](auto policy_c) {
        if constexpr (!std::is_same_v<UnitSystem, System>) {
          if (use_unit) return step(policy_c, *unit);
        }
        step(policy_c, sys);
      };
      if (policy == LeanPolicy::momentum) {
        with_system(std::integral_constant<LeanPolicy, LeanPolicy::momentum>{});
      } else {
        with_system(std::integral_constant<LeanPolicy, LeanPolicy::none>{});
      }
      check(cudaGetLastError(), "lean_step launch");
    }
  };

  // Rows segment s (planned by `plan`) uses slot s % 2 and covers rows [works[s % 2].k0, .k1).
  SegmentPlan plan(samples, seg, rp.fixed_step, rp.steps_per_sample, rp.total_steps, spec.segment_rows, host_tree,
                   spec.pass_steps, spec.stop_seconds);
  SegmentWork works[2];
  if (from) {
    const auto* words = reinterpret_cast<const std::uint64_t*>(from->instances.data());
    plan.resume_at(start, n, [&](std::uint64_t i) {
      Inst in;
      soa_load(words, n, i, in, 0, W);
      return in;
    });
  }

  auto launch = [&](std::int64_t s) {
    Slot& sl = *slots[s % 2];
    const index_t k0 = works[s % 2].k0, k1 = works[s % 2].k1;
    const std::int64_t rows = k1 - k0;
    if (s >= 2) sl.stats_done.wait_in(compute);  // the slot's rows have been reduced and copied
    sl.begin.record(compute);
    const RowOutputs out{raw(sl.metrics), raw(sl.valid), raw(d_record), R, raw(sl.snap), keep, raw(d_kept_metrics)};
    bool launched = n == 0;
    if constexpr (lean_capable_v<System, Method>) {
      if (lean && n > 0) {
        launched = true;
        for (index_t k = k0; k < k1; ++k) {
          if (k > 0) lean_step_to(k, INT64_MAX);
          measure_row<System, Inst><<<grid, threads, 0, compute>>>(sys, rp, n, raw(d_inst), k, k0,
                                                                   spec.first_instance, only, out);
          check(cudaGetLastError(), "measure_row launch");
        }
      }
    }
    if (!launched) {
      advance_segment<System, Method, Inst><<<grid, threads, 0, compute>>>(sys, method, rp, n, raw(d_inst), k0, k1,
                                                                           spec.first_instance, only, out);
      check(cudaGetLastError(), "advance_segment launch");
    }
    sl.end.record(compute);
    sl.rows_done.record(compute);
    sl.rows_done.wait_in(stats);
    const std::size_t acc_count = static_cast<std::size_t>(rows * blocks) * metric_count;
    if (n > 0) {
      launch_block_leaves(raw(sl.metrics), raw(sl.valid), n, rows, blocks, raw(sl.leaves), stats);
      if (host_tree) {
        check(cudaMemcpyAsync(sl.h_acc(), raw(sl.leaves), acc_count * sizeof(Accumulator), cudaMemcpyDeviceToHost,
                              stats),
              "cudaMemcpyAsync");
      } else {
        launch_block_tree(raw(sl.leaves), rows, blocks, raw(sl.tree), raw(sl.roots), stats);
        check(cudaMemcpyAsync(sl.h_acc(), raw(sl.roots), static_cast<std::size_t>(rows) * metric_count * sizeof(Accumulator),
                              cudaMemcpyDeviceToHost, stats),
              "cudaMemcpyAsync");
      }
      launch_histograms(raw(sl.metrics), raw(sl.valid), n, rows, raw(sl.hist), stats);
      check(cudaMemcpyAsync(sl.h_hist(), raw(sl.hist), static_cast<std::size_t>(rows) * hist_row * sizeof(std::uint32_t),
                            cudaMemcpyDeviceToHost, stats),
            "cudaMemcpyAsync");
    } else {
      std::fill(sl.h_acc(), sl.h_acc() + sl.acc_n, Accumulator{});
      std::fill(sl.h_hist(), sl.h_hist() + sl.hist_n, 0u);
    }
    if (R > 0)
      check(cudaMemcpyAsync(sl.h_snap(), raw(sl.snap),
                            static_cast<std::size_t>(rows) * R * recorded_row_width(P) * sizeof(double),
                            cudaMemcpyDeviceToHost, stats),
            "cudaMemcpyAsync");
    sl.stats_done.record(stats);
  };
  // The host's share of segment s, once its statistics are in page-locked memory.
  auto collect = [&](std::int64_t s) {
    Slot& sl = *slots[s % 2];
    sl.stats_done.sync("ensemble segment");
    res.device_seconds += sl.end.seconds_since(sl.begin);
    const index_t k0 = works[s % 2].k0, k1 = works[s % 2].k1;
    for (index_t k = k0; k < k1; ++k) res.series[static_cast<std::size_t>(k)].t = rp.reference_time(k);
    if (host_tree) {
      spec.reduce_segment(k0, k1, sl.h_acc(), blocks, sl.h_hist(), res.series);
    } else {
      for (index_t k = k0; k < k1; ++k) {
        SampleStats& st = res.series[static_cast<std::size_t>(k)];
        std::copy(sl.h_acc() + static_cast<std::size_t>(k - k0) * metric_count,
                  sl.h_acc() + static_cast<std::size_t>(k - k0 + 1) * metric_count, st.metric);
        set_quantiles(st, sl.h_hist() + static_cast<std::size_t>(k - k0) * hist_row);
      }
    }
    for (index_t k = k0; k < k1; ++k)
      for (std::uint64_t r = 0; r < R; ++r) {
        const std::size_t at = static_cast<std::size_t>(k - k0) * R + r;
        record_row(res.recorded, static_cast<std::size_t>(r), k, rp.reference_time(k),
                   sl.h_snap() + at * static_cast<std::size_t>(recorded_row_width(P)));
      }
    if (spec.progress) spec.progress(k1, samples + 1);
  };

  compute.sync("init_instances");  // set-up done: allocation and initial data (EnsembleResult::setup_seconds)
  res.setup_seconds = wall() - earlier_wall;

  // A pass into sample interval w.k0; whether every instance (and reference) got there.
  DeviceArray<unsigned long long> d_short_of(1);
  Event pass_begin{true}, pass_end{true};
  auto run_pass = [&](const SegmentWork& w) {
    if (n == 0) return true;
    check(cudaMemsetAsync(raw(d_short_of), 0, sizeof(unsigned long long), compute), "cudaMemsetAsync");
    pass_begin.record(compute);
    if constexpr (lean_capable_v<System, Method>) {
      if (lean) lean_step_to(w.k0, w.limit.until_step);  // the general kernel then finds the integration done
    }
    advance_partial<System, Method, Inst>
        <<<grid, threads, 0, compute>>>(sys, method, rp, n, raw(d_inst), w.k0, w.limit, raw(d_short_of));
    check(cudaGetLastError(), "advance_partial launch");
    pass_end.record(compute);
    unsigned long long short_of = 0;
    check(cudaMemcpyAsync(&short_of, raw(d_short_of), sizeof short_of, cudaMemcpyDeviceToHost, compute),
          "cudaMemcpyAsync");
    compute.sync("advance_partial");
    res.device_seconds += pass_end.seconds_since(pass_begin);
    return short_of == 0;
  };
  // The instances' state after `done` sample times to save_checkpoint (nothing in flight).
  auto save_state = [&](index_t done) {
    std::vector<unsigned char> bytes(inst_bytes);
    check(cudaMemcpyAsync(bytes.data(), raw(d_inst), inst_bytes, cudaMemcpyDeviceToHost, compute), "cudaMemcpyAsync");
    compute.sync("checkpoint copy");
    CheckpointState c = checkpoint_of(res, "cuda", W * sizeof(std::uint64_t), n, samples, done, wall());
    c.instances_view = bytes.data();
    spec.save_checkpoint(c);
  };

  // Rows segments are pipelined: the next is launched before the last is collected, unless
  // the last one's end must be saved or stopped at first, or the next is a pass.
  std::int64_t segments_launched = 0;
  std::optional<std::int64_t> inflight;
  for (;;) {
    if (!inflight) {
      if (plan.finished()) break;
      const SegmentWork w = plan.next();
      plan.take(w);
      if (!w.partial) {
        works[segments_launched % 2] = w;
        launch(segments_launched);
        inflight = segments_launched++;
        continue;
      }
      const auto t0 = std::chrono::steady_clock::now();
      const bool there = run_pass(w);
      plan.measured(w, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), there);
      const CheckpointRequest q = spec.checkpoint ? spec.checkpoint(w.k0, samples + 1) : CheckpointRequest{};
      if (q.save && spec.save_checkpoint) save_state(w.k0);
      if (q.stop) {
        res.stopped_at = w.k0;
        res.stopped_inside_interval = true;
        res.wall_seconds = wall();
        return res;
      }
      continue;
    }
    const std::int64_t s = *inflight;
    const SegmentWork w = works[s % 2];
    const bool more = w.k1 <= samples;
    // Whether to save or stop after this segment is decided before the next is launched, so
    // that a saved state is this segment's end.
    CheckpointRequest q;
    if (more && spec.checkpoint) q = spec.checkpoint(w.k1, samples + 1);
    inflight.reset();
    if (more && !q.save && !q.stop) {
      const SegmentWork nw = plan.next();
      if (!nw.partial) {
        plan.take(nw);
        works[segments_launched % 2] = nw;
        launch(segments_launched);
        inflight = segments_launched++;
      }
    }
    collect(s);
    plan.measured(w, slots[s % 2]->end.seconds_since(slots[s % 2]->begin), true);
    if (q.save && spec.save_checkpoint) save_state(w.k1);
    if (q.stop) {
      res.stopped_at = w.k1;
      res.wall_seconds = wall();
      return res;
    }
  }

  const double integrated = wall();
  constexpr int fields = sizeof(Counters) / sizeof(std::uint64_t);
  DeviceArray<unsigned long long> d_sum(fields + lost_reason_count + 1);
  check(cudaMemsetAsync(raw(d_sum), 0, (fields + lost_reason_count + 1) * sizeof(unsigned long long), compute),
        "cudaMemsetAsync");
  if (n > 0) {
    sum_counters<Inst><<<grid, threads, 0, compute>>>(raw(d_inst), n, raw(d_sum));
    check(cudaGetLastError(), "sum_counters launch");
  }
  std::vector<unsigned long long> sum(fields + lost_reason_count + 1);
  check(cudaMemcpyAsync(sum.data(), raw(d_sum), sum.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost, compute),
        "cudaMemcpyAsync");
  compute.sync("sum_counters");
  auto* totals = reinterpret_cast<std::uint64_t*>(&res.totals);
  for (int f = 0; f < fields; ++f) totals[f] = sum[static_cast<std::size_t>(f)];
  for (int r = 0; r < lost_reason_count; ++r) res.lost[r] = sum[static_cast<std::size_t>(fields + r)];
  res.reference_projected = sum[static_cast<std::size_t>(fields + lost_reason_count)];

  // The first lost instances, found on the device (only when some instance is lost).
  if (res.lost_total() > 0) {
    constexpr std::size_t at = offsetof(Inst, lost);
    const std::uint64_t* lost_words = raw(d_inst) + (at / sizeof(std::uint64_t)) * n;
    const std::vector<std::uint64_t> first_lost =
        first_nonzero(lost_words, n, at % sizeof(std::uint64_t), lost_examples_max, compute);
    for (const std::uint64_t i : first_lost) {
      std::uint64_t word = 0;
      check(cudaMemcpy(&word, lost_words + i, sizeof word, cudaMemcpyDeviceToHost), "cudaMemcpy");
      int lost = 0;
      std::memcpy(&lost, reinterpret_cast<const unsigned char*>(&word) + at % sizeof(std::uint64_t), sizeof lost);
      res.lost_examples.push_back(spec.global_index(i));
      res.lost_example_reasons.push_back(lost);
    }
  }
  // Instance 0 and the kept instances, final.
  const std::uint64_t fetch = std::min<std::uint64_t>(std::max<std::uint64_t>(keep, 1), n);
  const std::vector<std::uint64_t> words = fetch_first(fetch);
  for (std::uint64_t i = 0; i < keep; ++i) keep_final(res.kept, sys, i, instance(words, fetch, i));
  if (keep > 0)
    check(cudaMemcpy(res.kept.metrics.data(), raw(d_kept_metrics), keep * metric_count * sizeof(double),
                     cudaMemcpyDeviceToHost),
          "cudaMemcpy");
  if (fetch > 0) record_instance0_final(res, sys, instance(words, fetch, 0));
  res.wall_seconds = wall();
  res.finish_seconds = res.wall_seconds - integrated;
  return res;
}

}  // namespace chens::cuda
