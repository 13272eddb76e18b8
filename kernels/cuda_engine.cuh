// The CUDA backend's engine for the segment driver (backends/engine.hpp, segment_driver.cpp): the same
// per-instance driver as the CPU backend (include/chens/ensemble/instance.hpp), one thread
// per instance (ensemble_kernels.cuh), with the ensemble statistics reduced on the device.
//
// A pass moves every instance part of the way into the next interval (the lean step kernel
// up to a step index, then advance_partial for what the general path and numerical
// references need) and measures nothing; the host waits for it, so that a checkpoint or an
// interrupt can follow. A rows segment is integrated on the compute stream by one of two
// paths:
//   - the lean path, for explicit Runge-Kutta methods under the common settings
//     (ensemble/lean_steps.hpp: projection policy fixed at compile time, integer finiteness
//     test, counters from the trip count): per sample row a step kernel that holds only the
//     state in registers, then a measuring kernel (stepping and measuring apart, so that the
//     measurement's registers, the reference's elliptic functions, do not limit the step
//     loop's occupancy). For the pendulum's Hamilton-Dirac equations with m = l = g = 1 the
//     step kernel uses the unit model (models/pendulum.hpp), whose states equal the general
//     model's bit for bit;
//   - the general path, every other method and setting: one kernel per segment running
//     advance_segment_soa (step and measure in one thread);
//   - the group path, for chains on thread groups (chain_group_system: every chain
//     formulation, chains whose atoms divide among two lanes or more, issue 20): two kernels
//     per row with a warp tile per instance (group_kernels.cuh, ensemble/group_segment.hpp):
//     the lean loop's step kernel where it applies, else a general step kernel running the
//     per-instance driver over the slices (every method and projection setting), then, with
//     a numerical reference, a kernel advancing it over the slices, then a measuring kernel;
//     initial data made on the host by the CPU backend's code. No one-thread stepping kernel
//     is compiled for these systems.
// Both write each row's metrics (structure of arrays) and validity into the segment's slot.
// The statistics stream then reduces the slot on the device (device_statistics.cuh: block
// accumulators in instance order, the block tree, quantile histograms) and copies the roots
// and histograms, kilobytes per sample, into page-locked memory. Two slots alternate, so
// the next segment's stepping overlaps this segment's reduction and copies (the engine is
// pipelined), and the host turns a segment's roots into statistics while the device
// integrates the next. The reduction is the CPU backend's, operation for operation
// (block_tree.hpp), with no floating-point atomics: statistics are bitwise reproducible from
// run to run, and equal to the CPU's up to the per-instance differences that fused
// multiply-adds cause. Integer counters are summed with atomics.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda_backend.hpp"
#include "backends/memory_bounds.hpp"
#include "backends/checkpoint.hpp"
#include "backends/engine_adapter.hpp"
#include "backends/instance_records.hpp"
#include "backends/segment_plan.hpp"
#include "device_buffer.cuh"
#include "device_statistics.cuh"
#include "ensemble_kernels.cuh"
#include "group_kernels.cuh"

namespace chens {
namespace cuda {

// The usable device, or std::runtime_error saying why there is none.
inline CudaDeviceInfo usable_device() {
  CudaDeviceInfo dev = cuda_device_info();
  if (!dev.available) throw std::runtime_error(dev.description);
  return dev;
}

template <class System_, class Method, class Reference_>
class CudaEngine {
 public:
  using System = System_;
  using Reference = Reference_;
  using Real = typename System::Real;
  using Inst = InstanceOf<System, Reference>;
  static constexpr const char* backend = "cuda";
  static constexpr bool pipelined = true;

  CudaEngine(const System& sys, const Method& method, const RunParams<Real>& rp, const ModelStateOf<System>& z0,
             const EnsembleSpec& spec)
      : dev_(usable_device()),
        sys_(sys),
        method_(method),
        rp_(rp),
        z0_(z0),
        spec_(spec),
        n_(spec.size),
        keep_(std::min<std::uint64_t>(spec.keep_instances, n_)),
        blocks_(static_cast<std::int64_t>((n_ + cpu_block_size - 1) / cpu_block_size)),
        grid_(static_cast<unsigned>((n_ + threads - 1) / threads)),
        host_tree_(static_cast<bool>(spec.reduce_segment)) {  // sharded runs merge leaves across ranks
    // The lean step kernel runs the unit twin when the study's parameters are all 1.
    if constexpr (!std::is_same_v<UnitSystem, System>) {
      if (sys.model.has_unit_parameters()) unit_sys_ = unit_twin<System>::of(sys);
    }
    if constexpr (on_groups) {
      using L = GroupLaunch<System>;
      if constexpr (lean_capable_v<System, Method>) {
        lean_ = spec.gpu_lean && lean_policy_for<System>(rp, policy_);
        check(L::allow_scratch(group_lean_step<LeanPolicy::none, System, Method, Inst>), "cudaFuncSetAttribute");
        if constexpr (!System::has_impetus)  // impetus states are never projected (lean_policy_for)
          check(L::allow_scratch(group_lean_step<LeanPolicy::momentum, System, Method, Inst>), "cudaFuncSetAttribute");
      }
      check(L::allow_scratch(group_advance<System, Method, Inst>), "cudaFuncSetAttribute");
      check(L::allow_scratch(group_measure_row<System, Inst>), "cudaFuncSetAttribute");
      if constexpr (Reference::advancing)
        check(L::allow_scratch(group_reference<RefSystem, Inst, Method::adaptive>), "cudaFuncSetAttribute");
    } else if constexpr (lean_capable_v<System, Method>) {
      lean_ = spec.gpu_lean && lean_policy_for<System>(rp, policy_);
    }
    use_unit_ = lean_ && unit_sys_ && spec.gpu_unit;
  }

  const System& system() const { return sys_; }
  // One system for every instance: the GPU refuses [parameters] (cuda_unsupported_reason).
  const System& system_of(std::uint64_t) const { return sys_; }
  std::uint64_t instance_bytes() const { return W * sizeof(std::uint64_t); }
  int group_of(std::uint64_t) const { return -1; }  // [parameters] group_by: refused here (cuda_unsupported_reason)

  // Rows per segment: one slot's metrics under segment_metric_bytes, the recorded instances'
  // snapshots under segment_snapshot_bytes, and within a grid's y extent.
  index_t memory_rows() const { return cuda_memory_rows(n_, snap_row()); }

  void prepare(index_t rows, EnsembleResult& res) {
    seg_ = rows;
    {  // refuse what does not fit, before anything is launched
      std::size_t free_b = 0, total_b = 0;
      check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
      const double need =
          static_cast<double>(n_) * static_cast<double>(device_bytes_per_instance<Inst>(seg_)) +
          2.0 * static_cast<double>(seg_) * static_cast<double>(hist_row * sizeof(std::uint32_t) + snap_row()) +
          static_cast<double>(keep_) * metric_count * sizeof(double);
      if (need > 0.9 * static_cast<double>(free_b)) {
        char gb[96];
        std::snprintf(gb, sizeof gb, "%.3g GB of device memory, more than 90%% of the %.3g GB free on ", need / 1e9,
                      static_cast<double>(free_b) / 1e9);
        throw DeviceMemoryError("ensemble.size = " + std::to_string(n_) + " needs about " + gb + dev_.description +
                                "; use a smaller ensemble");
      }
    }
    res.backend = backend;
    res.device = dev_.description;
    res.threads = 1;
    R_ = res.recorded.instances.size();
    d_inst_.emplace(static_cast<std::size_t>(W) * n_);
    d_record_.emplace(R_);
    d_only_.emplace(spec_.only.size());  // ensemble.only's indices
    d_kept_metrics_.emplace(keep_ * metric_count);
    if (!spec_.only.empty())
      check(cudaMemcpy(raw(*d_only_), spec_.only.data(), spec_.only.size() * sizeof(std::uint64_t), cudaMemcpyHostToDevice),
            "cudaMemcpy");
    if (R_ > 0)
      check(cudaMemcpy(raw(*d_record_), res.recorded.instances.data(), R_ * sizeof(std::uint64_t), cudaMemcpyHostToDevice),
            "cudaMemcpy");
    const std::size_t snap_doubles = static_cast<std::size_t>(seg_) * R_ * recorded_row_width(P);
    for (auto& sl : slots_) sl.emplace(static_cast<std::size_t>(seg_), n_, blocks_, snap_doubles, host_tree_);
  }

  void initialise() {
    if constexpr (on_groups) {
      initialise_on_host();
    } else {
      if (n_ > 0) {
        init_instances<System, Reference><<<grid_, threads, 0, compute_>>>(sys_, rp_, z0_,
                                                                           static_cast<Real>(spec_.perturbation), spec_.seed,
                                                                           spec_.first_instance, only(), n_, raw(*d_inst_));
        check(cudaGetLastError(), "init_instances launch");
      }
      compute_.sync("init_instances");
    }
  }

  // A checkpoint holds the structure of arrays as it is on the device.
  void restore(const CheckpointState& c) {
    check(cudaMemcpyAsync(raw(*d_inst_), c.instances.data(), inst_bytes(), cudaMemcpyHostToDevice, compute_),
          "cudaMemcpyAsync");
    compute_.sync("restoring instances");
  }
  Inst saved(const CheckpointState& c, std::uint64_t i) const {
    Inst in;
    soa_load(reinterpret_cast<const std::uint64_t*>(c.instances.data()), n_, i, in, 0, W);
    return in;
  }
  const unsigned char* instances_view() {
    saved_.resize(inst_bytes());
    check(cudaMemcpyAsync(saved_.data(), raw(*d_inst_), inst_bytes(), cudaMemcpyDeviceToHost, compute_), "cudaMemcpyAsync");
    compute_.sync("checkpoint copy");
    return saved_.data();
  }
  // The first `count` instances, out of the structure of arrays into a structure of arrays of
  // `count` instances.
  template <class F>
  void for_first(std::uint64_t count, F&& f) {
    if (count == 0) return;
    std::vector<std::uint64_t> words(static_cast<std::size_t>(W) * count);
    check(cudaMemcpy2DAsync(words.data(), count * sizeof(std::uint64_t), raw(*d_inst_), n_ * sizeof(std::uint64_t),
                            count * sizeof(std::uint64_t), W, cudaMemcpyDeviceToHost, compute_),
          "cudaMemcpy2DAsync");
    compute_.sync("fetching instances");
    for (std::uint64_t i = 0; i < count; ++i) {
      Inst in;
      soa_load(words.data(), count, i, in, 0, W);
      f(i, in);
    }
  }

  void launch(const SegmentWork& w, int s, EnsembleResult&) {
    Slot& sl = *slots_[s];
    const std::int64_t rows = w.k1 - w.k0;
    if (slot_used_[s]) sl.stats_done.wait_in(compute_);  // the slot's last rows have been reduced and copied
    slot_used_[s] = true;
    sl.begin.record(compute_);
    const RowOutputs out{raw(sl.metrics), raw(sl.valid), raw(*d_record_), R_, raw(sl.snap), keep_, raw(*d_kept_metrics_)};
    if constexpr (on_groups) {
      using L = GroupLaunch<System>;
      for (index_t k = w.k0; k < w.k1 && n_ > 0; ++k) {
        if (k > 0) group_step_to(k, StepLimit{});
        group_measure_row<System, Inst><<<L::grid(n_), group_block, L::smem_bytes, compute_>>>(
            sys_, rp_, n_, raw(*d_inst_), k, w.k0, spec_.first_instance, only(), out);
        check(cudaGetLastError(), "group_measure_row launch");
      }
    } else {
      bool launched = n_ == 0;
      if constexpr (lean_capable_v<System, Method>) {
        if (lean_ && n_ > 0) {
          launched = true;
          for (index_t k = w.k0; k < w.k1; ++k) {
            if (k > 0) lean_step_to(k, INT64_MAX);
            measure_row<System, Inst>
                <<<grid_, threads, 0, compute_>>>(sys_, rp_, n_, raw(*d_inst_), k, w.k0, spec_.first_instance, only(), out);
            check(cudaGetLastError(), "measure_row launch");
          }
        }
      }
      if (!launched) {
        advance_segment<System, Method, Inst><<<grid_, threads, 0, compute_>>>(sys_, method_, rp_, n_, raw(*d_inst_), w.k0,
                                                                               w.k1, spec_.first_instance, only(), out);
        check(cudaGetLastError(), "advance_segment launch");
      }
    }
    sl.end.record(compute_);
    sl.rows_done.record(compute_);
    sl.rows_done.wait_in(stats_);
    const std::size_t acc_count = static_cast<std::size_t>(rows * blocks_) * metric_count;
    if (n_ > 0) {
      launch_block_leaves(raw(sl.metrics), raw(sl.valid), n_, rows, blocks_, raw(sl.leaves), stats_);
      if (host_tree_) {
        check(cudaMemcpyAsync(sl.h_acc(), raw(sl.leaves), acc_count * sizeof(Accumulator), cudaMemcpyDeviceToHost, stats_),
              "cudaMemcpyAsync");
      } else {
        launch_block_tree(raw(sl.leaves), rows, blocks_, raw(sl.tree), raw(sl.roots), stats_);
        check(cudaMemcpyAsync(sl.h_acc(), raw(sl.roots), static_cast<std::size_t>(rows) * metric_count * sizeof(Accumulator),
                              cudaMemcpyDeviceToHost, stats_),
              "cudaMemcpyAsync");
      }
      launch_histograms(raw(sl.metrics), raw(sl.valid), n_, rows, raw(sl.hist), stats_);
      check(cudaMemcpyAsync(sl.h_hist(), raw(sl.hist), static_cast<std::size_t>(rows) * hist_row * sizeof(std::uint32_t),
                            cudaMemcpyDeviceToHost, stats_),
            "cudaMemcpyAsync");
    } else {
      std::fill(sl.h_acc(), sl.h_acc() + sl.acc_n, Accumulator{});
      std::fill(sl.h_hist(), sl.h_hist() + sl.hist_n, 0u);
    }
    if (R_ > 0)
      check(cudaMemcpyAsync(sl.h_snap(), raw(sl.snap),
                            static_cast<std::size_t>(rows) * R_ * recorded_row_width(P) * sizeof(double),
                            cudaMemcpyDeviceToHost, stats_),
            "cudaMemcpyAsync");
    sl.stats_done.record(stats_);
  }

  // The host's share of a rows segment, once its statistics are in page-locked memory; the
  // plan measures it by its kernels' time.
  double collect(const SegmentWork& w, int s, EnsembleResult& res) {
    Slot& sl = *slots_[s];
    sl.stats_done.sync("ensemble segment");
    const double seconds = sl.end.seconds_since(sl.begin);
    res.device_seconds += seconds;
    for (index_t k = w.k0; k < w.k1; ++k) res.series[static_cast<std::size_t>(k)].t = rp_.reference_time(k);
    if (host_tree_) {
      spec_.reduce_segment(w.k0, w.k1, sl.h_acc(), blocks_, sl.h_hist(), res.series);
    } else {
      for (index_t k = w.k0; k < w.k1; ++k) {
        SampleStats& st = res.series[static_cast<std::size_t>(k)];
        std::copy(sl.h_acc() + static_cast<std::size_t>(k - w.k0) * metric_count,
                  sl.h_acc() + static_cast<std::size_t>(k - w.k0 + 1) * metric_count, st.metric);
        set_quantiles(st, sl.h_hist() + static_cast<std::size_t>(k - w.k0) * hist_row);
      }
    }
    for (index_t k = w.k0; k < w.k1; ++k)
      for (std::uint64_t r = 0; r < R_; ++r) {
        const std::size_t at = static_cast<std::size_t>(k - w.k0) * R_ + r;
        record_row(res.recorded, static_cast<std::size_t>(r), k, rp_.reference_time(k),
                   sl.h_snap() + at * static_cast<std::size_t>(recorded_row_width(P)));
      }
    return seconds;
  }

  // A pass into sample interval w.k0; whether every instance (and reference) got there.
  bool pass(const SegmentWork& w, EnsembleResult& res) {
    if (n_ == 0) return true;
    check(cudaMemsetAsync(raw(d_short_of_), 0, sizeof(unsigned long long), compute_), "cudaMemsetAsync");
    pass_begin_.record(compute_);
    if constexpr (on_groups) {
      group_step_to(w.k0, w.limit);
      group_count_short<Method, Inst><<<grid_, threads, 0, compute_>>>(rp_, n_, raw(*d_inst_), w.k0, raw(d_short_of_));
      check(cudaGetLastError(), "group_count_short launch");
    } else {
      if constexpr (lean_capable_v<System, Method>) {
        if (lean_) lean_step_to(w.k0, w.limit.until_step);  // the general kernel then finds the integration done
      }
      advance_partial<System, Method, Inst>
          <<<grid_, threads, 0, compute_>>>(sys_, method_, rp_, n_, raw(*d_inst_), w.k0, w.limit, raw(d_short_of_));
      check(cudaGetLastError(), "advance_partial launch");
    }
    pass_end_.record(compute_);
    unsigned long long short_of = 0;
    check(cudaMemcpyAsync(&short_of, raw(d_short_of_), sizeof short_of, cudaMemcpyDeviceToHost, compute_),
          "cudaMemcpyAsync");
    compute_.sync("advance_partial");
    res.device_seconds += pass_end_.seconds_since(pass_begin_);
    return short_of == 0;
  }

  void finish(EnsembleResult& res) {
    constexpr int fields = sizeof(Counters) / sizeof(std::uint64_t);
    DeviceArray<unsigned long long> d_sum(fields + lost_reason_count + 1);
    check(cudaMemsetAsync(raw(d_sum), 0, (fields + lost_reason_count + 1) * sizeof(unsigned long long), compute_),
          "cudaMemsetAsync");
    if (n_ > 0) {
      sum_counters<Inst><<<grid_, threads, 0, compute_>>>(raw(*d_inst_), n_, raw(d_sum));
      check(cudaGetLastError(), "sum_counters launch");
    }
    std::vector<unsigned long long> sum(fields + lost_reason_count + 1);
    check(cudaMemcpyAsync(sum.data(), raw(d_sum), sum.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost, compute_),
          "cudaMemcpyAsync");
    compute_.sync("sum_counters");
    auto* totals = reinterpret_cast<std::uint64_t*>(&res.totals);
    for (int f = 0; f < fields; ++f) totals[f] = sum[static_cast<std::size_t>(f)];
    for (int r = 0; r < lost_reason_count; ++r) res.lost[r] = sum[static_cast<std::size_t>(fields + r)];
    res.reference_projected = sum[static_cast<std::size_t>(fields + lost_reason_count)];

    // The first lost instances, found on the device (only when some instance is lost).
    if (res.lost_total() > 0) {
      constexpr std::size_t at = offsetof(Inst, lost);
      const std::uint64_t* lost_words = raw(*d_inst_) + (at / sizeof(std::uint64_t)) * n_;
      for (const std::uint64_t i : first_nonzero(lost_words, n_, at % sizeof(std::uint64_t), lost_examples_max, compute_)) {
        std::uint64_t word = 0;
        check(cudaMemcpy(&word, lost_words + i, sizeof word, cudaMemcpyDeviceToHost), "cudaMemcpy");
        int lost = 0;
        std::memcpy(&lost, reinterpret_cast<const unsigned char*>(&word) + at % sizeof(std::uint64_t), sizeof lost);
        res.lost_examples.push_back(i);
        res.lost_example_reasons.push_back(lost);
      }
    }
    if (keep_ > 0)
      check(cudaMemcpy(res.kept.metrics.data(), raw(*d_kept_metrics_), keep_ * metric_count * sizeof(double),
                       cudaMemcpyDeviceToHost),
            "cudaMemcpy");
  }

  void costs(EnsembleResult&) const {}  // stepping and measuring are not timed apart on the device

 private:
  // Chains on thread groups (group_kernels.cuh): every method and setting.
  static constexpr bool on_groups = chain_group_system_v<System>;
  // Their numerical reference's system (group_reference).
  using RefSystem = HamiltonDirac<std::decay_t<decltype(System::model)>>;
  using UnitSystem = typename unit_twin<System>::type;
  static constexpr int S = System::State::size;
  static constexpr int P = physical_state_size_v<System>;  // kept and recorded states
  static constexpr int W = soa_words<Inst>;
  static constexpr unsigned threads = threads_for<S>;
  static constexpr std::size_t hist_row = static_cast<std::size_t>(metric_count) * LogBins::count;

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
    std::uint32_t* h_hist() const { return reinterpret_cast<std::uint32_t*>(pinned.data() + acc_n * sizeof(Accumulator)); }
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

  std::size_t snap_row() const { return spec_.record.size() * recorded_row_width(P) * sizeof(double); }
  std::size_t inst_bytes() const { return static_cast<std::size_t>(W) * n_ * sizeof(std::uint64_t); }
  const std::uint64_t* only() const { return spec_.only.empty() ? nullptr : raw(*d_only_); }

  // The group path's initial data: make_instance on the host, the CPU backend's code (one
  // thread per instance there too, so the device starts from the CPU's bits), on every
  // host core, in chunks of instances laid out as a structure of arrays of their own and
  // copied into the ensemble's columns (host memory: one chunk, whatever the ensemble). A
  // chain's one-thread device initialisation (the perturbation's projection onto the
  // constraint manifold) would spill kilobytes a thread from N = 16 on.
  void initialise_on_host() {
    constexpr std::uint64_t chunk = 1 << 16;
    std::vector<std::uint64_t> words(static_cast<std::size_t>(W) * std::min(chunk, n_));
    const unsigned workers = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), 64u));
    for (std::uint64_t c0 = 0; c0 < n_; c0 += chunk) {
      const std::uint64_t count = std::min(chunk, n_ - c0);
      auto part = [&](unsigned w) {
        for (std::uint64_t j = w; j < count; j += workers) {
          const std::uint64_t i = c0 + j;
          const std::uint64_t g = spec_.only.empty() ? spec_.first_instance + i : spec_.only[i];  // global index
          const Inst in =
              make_instance<System, Reference>(sys_, z0_, static_cast<Real>(spec_.perturbation), spec_.seed, g, rp_);
          soa_store(words.data(), count, j, in, 0, W);
        }
      };
      std::vector<std::thread> pool;
      for (unsigned w = 1; w < workers; ++w) pool.emplace_back(part, w);
      part(0);
      for (auto& t : pool) t.join();
      check(cudaMemcpy2DAsync(raw(*d_inst_) + c0, n_ * sizeof(std::uint64_t), words.data(), count * sizeof(std::uint64_t),
                              count * sizeof(std::uint64_t), W, cudaMemcpyHostToDevice, compute_),
            "cudaMemcpy2DAsync");
      compute_.sync("initial instances");  // before the next chunk overwrites the host words
    }
  }

  // Every instance toward sample k within `limit`, by the group path's lean step kernel where
  // the lean loop applies (fixed steps: the limit's step index), else by its general kernel;
  // then the numerical references of those at the sample, within the limit's trial steps (the
  // order of advance_toward_sample).
  void group_step_to(index_t k, const StepLimit& limit) {
    if constexpr (on_groups) {
      group_integrate_to(k, limit);
      if constexpr (Reference::advancing) {
        if (rp_.reference) {
          using L = GroupLaunch<RefSystem>;
          group_reference<RefSystem, Inst, Method::adaptive><<<L::grid(n_), group_block, L::smem_bytes, compute_>>>(
              RefSystem{sys_.model}, rp_, n_, raw(*d_inst_), k, limit.attempts);
          check(cudaGetLastError(), "group_reference launch");
        }
      }
    }
  }
  void group_integrate_to(index_t k, const StepLimit& limit) {
    if constexpr (on_groups) {
      using L = GroupLaunch<System>;
      if constexpr (lean_capable_v<System, Method>) {
        if (lean_) {
          bool projecting = false;  // impetus states are never projected (lean_policy_for)
          if constexpr (!System::has_impetus) {
            projecting = policy_ == LeanPolicy::momentum;
            if (projecting)
              group_lean_step<LeanPolicy::momentum, System, Method, Inst>
                  <<<L::grid(n_), group_block, L::smem_bytes, compute_>>>(sys_, rp_, n_, raw(*d_inst_), k, limit.until_step);
          }
          if (!projecting)
            group_lean_step<LeanPolicy::none, System, Method, Inst>
                <<<L::grid(n_), group_block, L::smem_bytes, compute_>>>(sys_, rp_, n_, raw(*d_inst_), k, limit.until_step);
          check(cudaGetLastError(), "group_lean_step launch");
          return;
        }
      }
      group_advance<System, Method, Inst>
          <<<L::grid(n_), group_block, L::smem_bytes, compute_>>>(sys_, method_, rp_, n_, raw(*d_inst_), k, limit);
      check(cudaGetLastError(), "group_advance launch");
    }
  }

  // Every instance toward sample k, stopping at step `until`, by the lean step kernel.
  void lean_step_to(index_t k, index_t until) {
    if constexpr (lean_capable_v<System, Method>) {
      auto step = [&](auto policy_c, const auto& step_sys) {
        using StepSys = std::decay_t<decltype(step_sys)>;
        constexpr LeanPolicy Pc = decltype(policy_c)::value;
        // Large states (chains) inline their right-hand side here, in double: a call would
        // pass the state through the stack at every stage.
        constexpr bool inline_rhs = S > inline_rhs_max_state && std::is_same_v<Real, double>;
        if constexpr (Pc == LeanPolicy::none || !StepSys::has_impetus) {
          lean_step<Pc, inline_rhs, StepSys, Method, Inst, threads_for<S>>
              <<<grid_, threads, 0, compute_>>>(step_sys, rp_, n_, raw(*d_inst_), k, until);
        }
      };
      auto with_system = [&](auto policy_c) {
        if constexpr (!std::is_same_v<UnitSystem, System>) {
          if (use_unit_) return step(policy_c, *unit_sys_);
        }
        step(policy_c, sys_);
      };
      if (policy_ == LeanPolicy::momentum) {
        with_system(std::integral_constant<LeanPolicy, LeanPolicy::momentum>{});
      } else {
        with_system(std::integral_constant<LeanPolicy, LeanPolicy::none>{});
      }
      check(cudaGetLastError(), "lean_step launch");
    }
  }

  CudaDeviceInfo dev_;  // first: the engine is never built without a usable device
  System sys_;
  Method method_;
  RunParams<Real> rp_;
  ModelStateOf<System> z0_;
  const EnsembleSpec& spec_;
  std::uint64_t n_, keep_;
  std::int64_t blocks_;
  unsigned grid_;
  bool host_tree_;
  std::optional<UnitSystem> unit_sys_;
  LeanPolicy policy_ = LeanPolicy::none;
  bool lean_ = false, use_unit_ = false;
  index_t seg_ = 1;
  std::uint64_t R_ = 0;  // recorded instances

  Stream compute_, stats_;
  std::optional<DeviceArray<std::uint64_t>> d_inst_, d_record_, d_only_;
  std::optional<DeviceArray<double>> d_kept_metrics_;
  std::optional<Slot> slots_[2];
  bool slot_used_[2] = {false, false};
  DeviceArray<unsigned long long> d_short_of_{1};
  Event pass_begin_{true}, pass_end_{true};
  std::vector<unsigned char> saved_;  // the instances' bytes for a checkpoint
};

}  // namespace cuda

template <>
struct EngineOf<CudaBackend> {
  template <class System, class Method, class Reference>
  using type = cuda::CudaEngine<System, Method, Reference>;
};

}  // namespace chens
