// The CPU backend's engine for the segment driver (backends/segment_driver.hpp): OpenMP over
// fixed blocks of instances, running the per-instance driver of include/chens/ensemble/
// instance.hpp. Within a segment each block integrates its instances in index order and
// accumulates their metrics into the block's own accumulators, which are then merged along
// the block tree (block_tree.hpp; in sharded runs EnsembleSpec::reduce_segment does it).
// Blocks do not depend on the thread count, so results are bitwise identical for any thread
// count. Quantiles come from per-thread histograms of integer counts (quantiles.hpp), summed.
#pragma once

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/accumulator.hpp>
#include <chens/ensemble/instance.hpp>
#include <chens/ensemble/quantiles.hpp>

#include "backends/backend.hpp"
#include "backends/segment_driver.hpp"

namespace chens {

// Instances a fixed-step explicit method advances in lockstep (ExplicitRk::step_lanes): a
// single instance's right-hand side is one chain of dependent operations, so interleaving
// independent instances fills the core's pipelines. Divides cpu_block_size.
inline constexpr int cpu_lanes = 4;
inline constexpr int cpu_lanes_max_state = 8;

template <class System_, class Method, class Reference_>
class CpuEngine {
 public:
  using System = System_;
  using Reference = Reference_;
  using Real = typename System::Real;
  using Inst = InstanceOf<System, Reference>;
  static constexpr const char* backend = "cpu";
  static constexpr bool pipelined = false;  // a segment's work is done by the time launch returns

  CpuEngine(const System& sys, const Method& method, const RunParams<Real>& rp, const ModelStateOf<System>& z0,
            const EnsembleSpec& spec)
      : sys_(sys),
        method_(method),
        rp_(rp),
        z0_(z0),
        spec_(spec),
        threads_(spec.threads > 0 ? spec.threads : omp_get_max_threads()),
        n_(spec.size),
        blocks_(static_cast<std::int64_t>((n_ + cpu_block_size - 1) / cpu_block_size)),
        inst_(n_),
        timed_(static_cast<std::size_t>(threads_) * pad, 0.0) {}

  const System& system() const { return sys_; }
  std::uint64_t instance_bytes() const { return sizeof(Inst); }

  // The block accumulators and the threads' histograms of one segment stay under ~64 MiB
  // (and min_segments, ensemble_spec.hpp).
  index_t memory_rows() const {
    const std::int64_t per_sample_bytes =
        blocks_ * static_cast<std::int64_t>(sizeof(Accumulator) * metric_count) +
        static_cast<std::int64_t>(threads_) * metric_count * bins * static_cast<std::int64_t>(sizeof(std::uint32_t));
    return (64ll << 20) / std::max<std::int64_t>(1, per_sample_bytes);
  }

  void prepare(index_t rows, EnsembleResult& res) {
    res.backend = backend;
    res.threads = threads_;
    res.device = "CPU, " + std::to_string(threads_) + " OpenMP thread" + (threads_ == 1 ? "" : "s");
    seg_ = rows;
    acc_.resize(static_cast<std::size_t>(blocks_ * seg_ * metric_count));
    // Histograms per thread, row and metric (integer counts: summed in any order, exactly),
    // with the range of bins each has touched, so that merging and clearing them costs what
    // the ensemble's spread of values costs, not the ~1000 bins.
    const std::size_t hist_rows = static_cast<std::size_t>(threads_) * static_cast<std::size_t>(seg_);
    hist_.assign(hist_rows * hist_row, 0u);
    seg_hist_.resize(static_cast<std::size_t>(seg_) * hist_row);
    touched_lo_.assign(hist_rows * metric_count, bins);
    touched_hi_.assign(hist_rows * metric_count, -1);
  }

  void initialise() {
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t b = 0; b < blocks_; ++b) {
      const std::uint64_t lo = static_cast<std::uint64_t>(b) * cpu_block_size;
      const std::uint64_t hi = std::min<std::uint64_t>(n_, lo + cpu_block_size);
      for (std::uint64_t i = lo; i < hi; ++i)
        inst_[i] = make_instance<System, Reference>(sys_, z0_, Real(spec_.perturbation), spec_.seed,
                                                    spec_.global_index(i), rp_);
    }
  }

  static_assert(std::is_trivially_copyable_v<Inst>);
  void restore(const CheckpointState& c) { std::memcpy(static_cast<void*>(inst_.data()), c.instances.data(), n_ * sizeof(Inst)); }
  Inst saved(const CheckpointState& c, std::uint64_t i) const {
    Inst in;
    std::memcpy(static_cast<void*>(&in), c.instances.data() + i * sizeof(Inst), sizeof(Inst));
    return in;
  }
  const unsigned char* instances_view() const { return reinterpret_cast<const unsigned char*>(inst_.data()); }
  template <class F>
  void for_first(std::uint64_t count, F&& f) const {
    for (std::uint64_t i = 0; i < count; ++i) f(i, inst_[i]);
  }

  void launch(const SegmentWork& w, int, EnsembleResult& res) {
    launched_at_ = Clock::now();
    std::fill(acc_.begin(), acc_.end(), Accumulator{});
    const index_t samples = rp_.samples;
    const std::uint64_t keep = std::min<std::uint64_t>(spec_.keep_instances, n_);
    const std::vector<std::uint64_t>& rec_list = res.recorded.instances;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_)
    for (std::int64_t b = 0; b < blocks_; ++b) {
      const std::uint64_t lo = static_cast<std::uint64_t>(b) * cpu_block_size;
      const std::uint64_t hi = std::min<std::uint64_t>(n_, lo + cpu_block_size);
      const std::size_t my_rows = static_cast<std::size_t>(omp_get_thread_num()) * static_cast<std::size_t>(seg_);
      const bool timing = b % timing_stride == 0;
      double* mine = &timed_[static_cast<std::size_t>(omp_get_thread_num()) * pad];
      // Whether the block holds a recorded instance (then each of its instances looks itself up).
      const bool block_records = std::lower_bound(rec_list.begin(), rec_list.end(), spec_.global_index(lo)) !=
                                 std::upper_bound(rec_list.begin(), rec_list.end(), spec_.global_index(hi - 1));
      // Instances i..i+B-1 through the segment; per sample, metrics are accumulated in
      // instance order whatever B is, so B changes no result.
      auto group = [&]<int B>(std::uint64_t i) {
        for (index_t k = w.k0; k < w.k1; ++k) {
          const auto t0 = timing ? Clock::now() : Clock::time_point{};
          if (k > 0) {
            if constexpr (B > 1) {
              advance_fixed_to_sample<B>(sys_, method_, rp_, &inst_[i], k);
            } else {
              advance_to_sample(sys_, method_, rp_, inst_[i], k);
            }
          }
          const auto t1 = timing ? Clock::now() : Clock::time_point{};
          Accumulator* a = &acc_[static_cast<std::size_t>(((k - w.k0) * blocks_ + b) * metric_count)];
          const std::size_t hr = my_rows + static_cast<std::size_t>(k - w.k0);
          std::uint32_t* h = &hist_[hr * hist_row];
          int* tlo = &touched_lo_[hr * metric_count];
          int* thi = &touched_hi_[hr * metric_count];
          for (int j = 0; j < B; ++j) {
            Metrics<double> m;
            const bool ok = measure_instance(sys_, rp_, inst_[i + j], k, m);
            if (ok) {
              for (int c = 0; c < metric_count; ++c) {
                const double v = static_cast<double>(m.v[c]);
                a[c].add(v);
                const int bin = LogBins::index(v);
                h[c * bins + bin] += 1;
                tlo[c] = std::min(tlo[c], bin);
                thi[c] = std::max(thi[c], bin);
              }
            }
            if (k == samples && i + j < keep)
              for (int c = 0; c < metric_count; ++c)
                res.kept.metrics[(i + j) * metric_count + c] = ok ? static_cast<double>(m.v[c]) : 0.0;
            if (block_records) {
              const std::int64_t slot = res.recorded.slot(spec_.global_index(i + j));
              if (slot >= 0) record_sample(res.recorded, sys_, rp_, static_cast<std::size_t>(slot), k, inst_[i + j], ok, m);
            }
          }
          if (timing) {
            mine[0] += since(t0, t1);
            mine[1] += since(t1, Clock::now());
          }
        }
      };
      std::uint64_t i = lo;
      if constexpr (lanes) {
        for (; i + cpu_lanes <= hi; i += cpu_lanes) group.template operator()<cpu_lanes>(i);
      }
      for (; i < hi; ++i) group.template operator()<1>(i);
    }
  }

  double collect(const SegmentWork& w, int, EnsembleResult& res) {
    std::fill(seg_hist_.begin(), seg_hist_.end(), 0u);
    for (index_t k = w.k0; k < w.k1; ++k) {
      res.series[static_cast<std::size_t>(k)].t = rp_.reference_time(k);
      std::uint32_t* row_hist = &seg_hist_[static_cast<std::size_t>(k - w.k0) * hist_row];
      for (int t = 0; t < threads_; ++t) {
        const std::size_t hr = static_cast<std::size_t>(t) * static_cast<std::size_t>(seg_) + static_cast<std::size_t>(k - w.k0);
        for (int c = 0; c < metric_count; ++c) {
          int& lo = touched_lo_[hr * metric_count + c];
          int& hi = touched_hi_[hr * metric_count + c];
          std::uint32_t* h = &hist_[hr * hist_row + static_cast<std::size_t>(c) * bins];
          for (int x = lo; x <= hi; ++x) {
            row_hist[static_cast<std::size_t>(c) * bins + x] += h[x];
            h[x] = 0;
          }
          lo = bins;
          hi = -1;
        }
      }
    }
    if (spec_.reduce_segment) {
      spec_.reduce_segment(w.k0, w.k1, acc_.data(), blocks_, seg_hist_.data(), res.series);
    } else {
      reduce_rows(res.series, w.k0, w.k1, acc_.data(), blocks_, seg_hist_.data());
    }
    const double seconds = since(launched_at_, Clock::now());
    segments_wall_ += seconds;
    return seconds;
  }

  // A pass into sample interval w.k0 (segment_plan.hpp), with the same lanes as a segment.
  // The instances' integration first, then (timed apart) their numerical references, each
  // only once its instance is at the sample: advance_toward_sample's order.
  bool pass(const SegmentWork& w, EnsembleResult&) {
    const auto start = Clock::now();
    bool there = true;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_) reduction(&& : there)
    for (std::int64_t b = 0; b < blocks_; ++b) {
      const std::uint64_t lo = static_cast<std::uint64_t>(b) * cpu_block_size;
      const std::uint64_t hi = std::min<std::uint64_t>(n_, lo + cpu_block_size);
      const bool timing = b % timing_stride == 0;
      const auto t0 = timing ? Clock::now() : Clock::time_point{};
      std::uint64_t i = lo;
      if constexpr (lanes) {
        for (; i + cpu_lanes <= hi; i += cpu_lanes)
          advance_fixed_to_sample<cpu_lanes>(sys_, method_, rp_, &inst_[i], w.k0, w.limit);
      }
      for (; i < hi; ++i)
        if (!integration_at_sample<Method>(rp_, inst_[i], w.k0)) advance_to_sample(sys_, method_, rp_, inst_[i], w.k0, w.limit);
      const auto t1 = timing ? Clock::now() : Clock::time_point{};
      for (i = lo; i < hi; ++i)
        there = (integration_at_sample<Method>(rp_, inst_[i], w.k0) && reference_toward_sample(sys_, rp_, inst_[i], w.k0, w.limit)) &&
                there;
      if (timing) {
        double* mine = &timed_[static_cast<std::size_t>(omp_get_thread_num()) * pad];
        mine[0] += since(t0, t1);
        mine[1] += since(t1, Clock::now());
      }
    }
    segments_wall_ += since(start, Clock::now());
    return there;
  }

  void finish(EnsembleResult& res) const {
    for (std::uint64_t i = 0; i < n_; ++i) {
      res.totals.add(inst_[i].c);
      res.lost[inst_[i].lost] += 1;
      if (inst_[i].lost != int(LostReason::none) && res.lost_examples.size() < lost_examples_max) {
        res.lost_examples.push_back(i);
        res.lost_example_reasons.push_back(inst_[i].lost);
      }
      if (inst_[i].ref.projected) res.reference_projected += 1;
    }
  }

  // EnsembleResult::integration_seconds / measurement_seconds: the segments' wall time split
  // as the timed blocks' thread time was.
  void costs(EnsembleResult& res) const {
    double integrating = 0, measuring = 0;
    for (std::size_t t = 0; t < timed_.size(); t += pad) {
      integrating += timed_[t];
      measuring += timed_[t + 1];
    }
    if (!(integrating + measuring > 0)) return;
    res.integration_seconds = segments_wall_ * integrating / (integrating + measuring);
    res.measurement_seconds = segments_wall_ - res.integration_seconds;
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double since(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }
  static constexpr int bins = LogBins::count;
  static constexpr std::size_t hist_row = static_cast<std::size_t>(metric_count) * bins;
  // Lanes pay off for small states only: four chain states would spill the registers.
  static constexpr bool lanes = !Method::adaptive && Method::has_lanes && System::State::size <= cpu_lanes_max_state;
  // Where the segments' time goes, for cost tables that compare integrators (issue 17):
  // integrating, or measuring (the reference, the diagnostics, the statistics). Timed on
  // every timing_stride-th block (a clock read per group and sample would cost more than a
  // pendulum's step), whose shares are applied to the segments' wall time.
  static constexpr std::int64_t timing_stride = 8;
  static constexpr std::size_t pad = 8;  // one cache line of doubles per thread: [0] integrating, [1] measuring

  System sys_;
  Method method_;
  RunParams<Real> rp_;
  ModelStateOf<System> z0_;
  const EnsembleSpec& spec_;
  int threads_;
  std::uint64_t n_;
  std::int64_t blocks_;
  index_t seg_ = 1;
  std::vector<Inst> inst_;
  std::vector<Accumulator> acc_;
  std::vector<std::uint32_t> hist_, seg_hist_;  // per thread and row; summed over threads
  std::vector<int> touched_lo_, touched_hi_;
  std::vector<double> timed_;
  double segments_wall_ = 0;
  Clock::time_point launched_at_{};
};

template <>
struct EngineOf<CpuBackend> {
  template <class System, class Method, class Reference>
  using type = CpuEngine<System, Method, Reference>;
};

}  // namespace chens
