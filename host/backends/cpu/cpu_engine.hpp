// The CPU backend's engine for the segment driver (backends/engine.hpp, segment_driver.cpp): OpenMP over
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
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/accumulator.hpp>
#include <chens/ensemble/instance.hpp>
#include <chens/ensemble/packed_steps.hpp>
#include <chens/ensemble/quantiles.hpp>
#include <chens/integrators/implicit_rk_lanes.hpp>

#include "backends/backend.hpp"
#include "backends/cpu/cpu_isa.hpp"
#include "backends/cpu/cpu_lanes.hpp"
#include "backends/memory_bounds.hpp"
#include "backends/checkpoint.hpp"
#include "backends/engine_adapter.hpp"
#include "backends/instance_records.hpp"
#include "backends/segment_plan.hpp"
#include "backends/step_cost.hpp"
#include "backends/step_grid.hpp"
#include "dispatch/model_traits.hpp"

namespace chens {

// Whether a model's traits entry can set its parameters per instance ([parameters]).
template <class Traits, class = void>
struct varies_parameters_trait : std::false_type {};
template <class Traits>
struct varies_parameters_trait<Traits, std::void_t<decltype(&Traits::set_parameter)>> : std::true_type {};

// sys with the model m, also inside a tangent system (geometry/tangent_system.hpp).
template <class System, class Model>
System with_model(System sys, const Model& m) {
  sys.model = m;
  if constexpr (has_tangents_v<System>) sys.inner.model = m;
  return sys;
}

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
        timed_(static_cast<std::size_t>(threads_) * pad, 0.0),
        step_cost_(static_cast<std::size_t>(threads_) * StepCostBins::count, 0),
        sets_(1 + static_cast<int>(spec.parameters.groups())) {
    lanes_.isa = cpu_isa_compiled_at_most(cpu_isa_in_use());
    lanes_.varied = spec.parameters.varies();
    if constexpr (std::is_same_v<Real, double>) lanes_.packed_fits = packed_fits<System, Inst>(rp_, lanes_.packed_momentum);
    // Lanes share a time grid: with [parameters], instances step in lanes (each lane its own
    // system) unless their step sizes differ.
    lanes_.with_parameters = !spec.parameters.varies(ParameterId::h);
    // [parameters] group_by: each instance's group, once (a draw per instance).
    if (sets_ > 1) {
      group_.resize(n_);
#pragma omp parallel for schedule(static) num_threads(threads_)
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(n_); ++i)
        group_[static_cast<std::size_t>(i)] =
            static_cast<std::int16_t>(spec_.parameters.group_of(spec_.global_index(static_cast<std::uint64_t>(i))));
    }
  }

  const System& system() const { return sys_; }
  // The system instance i integrates: system() unless [parameters] vary the model.
  System system_of(std::uint64_t i) const { return lanes_.varied ? setting(i).sys : sys_; }
  std::uint64_t instance_bytes() const { return sizeof(Inst); }
  int group_of(std::uint64_t i) const { return sets_ > 1 ? group_[i] : -1; }

  // The block accumulators and the threads' histograms of one segment stay under ~64 MiB
  // (and min_segments, ensemble_spec.hpp), for the ensemble and each group (memory_bounds.hpp).
  index_t memory_rows() const { return cpu_memory_rows(blocks_, threads_, sets_); }

  void prepare(index_t rows, EnsembleResult& res) {
    res.backend = backend;
    res.threads = threads_;
    res.device = "CPU, " + std::to_string(threads_) + " OpenMP thread" + (threads_ == 1 ? "" : "s") + ", " + lanes_.note();
    seg_ = rows;
    // One set of statistics for the ensemble, and one per group (set 1 + g), each laid out as
    // EnsembleSpec::reduce_segment takes it.
    const std::size_t S = static_cast<std::size_t>(sets_);
    acc_.resize(S * static_cast<std::size_t>(blocks_ * seg_ * metric_count));
    // Histograms per set, thread, row and metric (integer counts: summed in any order,
    // exactly), with the range of bins each has touched, so that merging and clearing them
    // costs what the ensemble's spread of values costs, not the ~1000 bins.
    const std::size_t hist_rows = S * static_cast<std::size_t>(threads_) * static_cast<std::size_t>(seg_);
    hist_.assign(hist_rows * hist_row, 0u);
    seg_hist_.resize(S * static_cast<std::size_t>(seg_) * hist_row);
    touched_lo_.assign(hist_rows * metric_count, bins);
    touched_hi_.assign(hist_rows * metric_count, -1);
  }

  void initialise() {
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t b = 0; b < blocks_; ++b) {
      const std::uint64_t lo = static_cast<std::uint64_t>(b) * cpu_block_size;
      const std::uint64_t hi = std::min<std::uint64_t>(n_, lo + cpu_block_size);
      for (std::uint64_t i = lo; i < hi; ++i)
        with_setting(i, [&](const System& sys, const RunParams<Real>& rp, const ModelStateOf<System>& z0) {
          inst_[i] =
              make_instance<System, Reference>(sys, z0, Real(spec_.perturbation), spec_.seed, spec_.global_index(i), rp);
        });
    }
  }

  static_assert(std::is_trivially_copyable_v<Inst>);
  void restore(const CheckpointState& c) {
    std::memcpy(static_cast<void*>(inst_.data()), c.instances.data(), n_ * sizeof(Inst));
  }
  Inst saved(const CheckpointState& c, std::uint64_t i) const {
    Inst in;
    std::memcpy(static_cast<void*>(&in), c.instances.data() + i * sizeof(Inst), sizeof(Inst));
    // The segment plan reads the steps taken on the study's grid; an instance of a step-size
    // ensemble (parameters.h) counts its own.
    if (lanes_.varied && rp_.fixed_step) {
      const Setting at = setting(i);
      if (at.rp.h != rp_.h) in.step = on_grid(at.rp, rp_, in.step);
    }
    return in;
  }
  const unsigned char* instances_view() const { return reinterpret_cast<const unsigned char*>(inst_.data()); }
  template <class F>
  void for_first(std::uint64_t count, F&& f) const {
    const bool own_grids = lanes_.varied && rp_.fixed_step && spec_.parameters.varies(ParameterId::h);
    for (std::uint64_t i = 0; i < count; ++i) {
      if (!own_grids) {
        f(i, inst_[i]);
        continue;
      }
      Inst in = inst_[i];
      on_study_samples(setting(i).rp, in.passage);
      f(i, in);
    }
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
      const int thread = omp_get_thread_num();
      const bool timing = b % timing_stride == 0;
      double* mine = &timed_[static_cast<std::size_t>(thread) * pad];
      // Whether the block holds a recorded instance (then each of its instances looks itself up).
      const bool block_records = std::lower_bound(rec_list.begin(), rec_list.end(), spec_.global_index(lo)) !=
                                 std::upper_bound(rec_list.begin(), rec_list.end(), spec_.global_index(hi - 1));
      // Instances i..i+B-1 through the segment on system sys and grid rp (B > 1: a lane
      // group of instruction set I; with [parameters] each lane's own setting); per sample,
      // metrics are accumulated in instance order whatever B is, so B changes no result.
      auto group = [&]<int B, CpuIsa I>(std::uint64_t i, const System& sys, const RunParams<Real>& rp) {
        Settings<B> at(*this, i);
        for (index_t k = w.k0; k < w.k1; ++k) {
          const std::uint64_t steps0 = timing ? steps_of<B>(i) : 0;
          const auto t0 = timing ? Clock::now() : Clock::time_point{};
          if (k > 0) {
            if constexpr (B > 1) {
              lanes_.template advance<I, B>(sys_, method_, rp_, &inst_[i], k, StepLimit{}, at);
            } else {
              advance_to_sample(sys, method_, rp, inst_[i], k);
            }
          }
          const auto t1 = timing ? Clock::now() : Clock::time_point{};
          if (timing) sample_step_cost(thread, since(t0, t1), steps_of<B>(i) - steps0);
          // The metrics of one instance (and their histogram bins) into a set's block
          // accumulators and the thread's histograms.
          auto tally = [&](int set, const Metrics<double>& m, const int* bin) {
            Accumulator* a = &acc_[acc_at(set, k - w.k0, b)];
            const std::size_t hr = hist_at(set, thread, k - w.k0);
            std::uint32_t* h = &hist_[hr * hist_row];
            int* tlo = &touched_lo_[hr * metric_count];
            int* thi = &touched_hi_[hr * metric_count];
            for (int c = 0; c < metric_count; ++c) {
              a[c].add(static_cast<double>(m.v[c]));
              h[c * bins + bin[c]] += 1;
              tlo[c] = std::min(tlo[c], bin[c]);
              thi[c] = std::max(thi[c], bin[c]);
            }
          };
          for (int j = 0; j < B; ++j)
            at.visit(j, sys, rp, [&](const System& sys_j, const RunParams<Real>& rp_j) {
              Metrics<double> m;
              const bool ok = measure_instance(sys_j, rp_j, inst_[i + j], k, m);
              if (ok) {
                int bin[metric_count];
                for (int c = 0; c < metric_count; ++c) bin[c] = histogram_bin(metric_signed(c), static_cast<double>(m.v[c]));
                tally(0, m, bin);
                if (sets_ > 1 && group_[i + j] >= 0) tally(1 + group_[i + j], m, bin);
              }
              if (k == samples && i + j < keep)
                for (int c = 0; c < metric_count; ++c)
                  res.kept.metrics[(i + j) * metric_count + c] = ok ? static_cast<double>(m.v[c]) : 0.0;
              if (block_records) {
                const std::int64_t slot = res.recorded.slot(spec_.global_index(i + j));
                if (slot >= 0)
                  record_sample(res.recorded, sys_j, rp_j, static_cast<std::size_t>(slot), k, inst_[i + j], ok, m);
              }
            });
          if (timing) {
            mine[0] += since(t0, t1);
            mine[1] += since(t1, Clock::now());
          }
        }
      };
      std::uint64_t i = lo;
      lanes_.on_isa([&]<CpuIsa I>() {
        constexpr int L = Lanes::template lanes_of<I>;
        if constexpr (L > 1)
          if (lanes_.template apply<I>())
            for (; i + L <= hi; i += L) group.template operator()<L, I>(i, sys_, rp_);
      });
      for (; i < hi; ++i)
        with_setting(i, [&](const System& sys, const RunParams<Real>& rp, const ModelStateOf<System>&) {
          group.template operator()<1, CpuIsa::scalar>(i, sys, rp);
        });
    }
  }

  double collect(const SegmentWork& w, int, EnsembleResult& res) {
    std::fill(seg_hist_.begin(), seg_hist_.end(), 0u);
    for (int set = 0; set < sets_; ++set) {
      std::vector<SampleStats>& series = set == 0 ? res.series : res.groups[static_cast<std::size_t>(set - 1)].series;
      for (index_t k = w.k0; k < w.k1; ++k) {
        series[static_cast<std::size_t>(k)].t = rp_.reference_time(k);
        std::uint32_t* row_hist = &seg_hist_[(static_cast<std::size_t>(set) * static_cast<std::size_t>(seg_) +
                                              static_cast<std::size_t>(k - w.k0)) *
                                             hist_row];
        for (int t = 0; t < threads_; ++t) {
          const std::size_t hr = hist_at(set, t, k - w.k0);
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
      // Every rank of a sharded run reduces the same sets in the same order (collectives).
      const Accumulator* acc = &acc_[acc_at(set, 0, 0)];
      const std::uint32_t* hist = &seg_hist_[static_cast<std::size_t>(set) * static_cast<std::size_t>(seg_) * hist_row];
      if (spec_.reduce_segment) {
        spec_.reduce_segment(w.k0, w.k1, acc, blocks_, hist, series);
      } else {
        reduce_rows(series, w.k0, w.k1, acc, blocks_, hist);
      }
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
      std::uint64_t steps0 = 0;
      if (timing)
        for (std::uint64_t j = lo; j < hi; ++j) steps0 += inst_[j].c.steps;
      const auto t0 = timing ? Clock::now() : Clock::time_point{};
      std::uint64_t i = lo;
      lanes_.on_isa([&]<CpuIsa I>() {
        constexpr int L = Lanes::template lanes_of<I>;
        if constexpr (L > 1)
          if (lanes_.template apply<I>())
            for (; i + L <= hi; i += L)
              lanes_.template advance<I, L>(sys_, method_, rp_, &inst_[i], w.k0, w.limit, Settings<L>(*this, i));
      });
      for (; i < hi; ++i)
        with_setting(i, [&](const System& sys, const RunParams<Real>& rp, const ModelStateOf<System>&) {
          if (!integration_at_sample<Method>(rp, inst_[i], w.k0))
            advance_to_sample(sys, method_, rp, inst_[i], w.k0, step_limit(w, rp));
        });
      const auto t1 = timing ? Clock::now() : Clock::time_point{};
      for (i = lo; i < hi; ++i)
        with_setting(i, [&](const System& sys, const RunParams<Real>& rp, const ModelStateOf<System>&) {
          there = (integration_at_sample<Method>(rp, inst_[i], w.k0) &&
                   reference_toward_sample(sys, rp, inst_[i], w.k0, step_limit(w, rp))) &&
                  there;
        });
      if (timing) {
        double* mine = &timed_[static_cast<std::size_t>(omp_get_thread_num()) * pad];
        mine[0] += since(t0, t1);
        mine[1] += since(t1, Clock::now());
        std::uint64_t steps1 = 0;
        for (std::uint64_t j = lo; j < hi; ++j) steps1 += inst_[j].c.steps;
        sample_step_cost(omp_get_thread_num(), since(t0, t1), steps1 - steps0);
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
    res.step_cost.assign(StepCostBins::count, 0);
    for (std::size_t t = 0; t < static_cast<std::size_t>(threads_); ++t)
      for (int b = 0; b < StepCostBins::count; ++b)
        res.step_cost[static_cast<std::size_t>(b)] += step_cost_[t * StepCostBins::count + b];
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double since(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }
  // The accepted steps instances i .. i + B - 1 have taken (a timed sample's work).
  template <int B>
  std::uint64_t steps_of(std::uint64_t i) const {
    std::uint64_t s = 0;
    for (int j = 0; j < B; ++j) s += inst_[i + static_cast<std::uint64_t>(j)].c.steps;
    return s;
  }
  // A timed sample of the cost per instance-step (step_cost.hpp) into the thread's histogram.
  void sample_step_cost(int thread, double seconds, std::uint64_t steps) {
    if (steps == 0) return;  // lost instances, or a row already reached
    step_cost_[static_cast<std::size_t>(thread) * StepCostBins::count +
               static_cast<std::size_t>(StepCostBins::index(seconds / static_cast<double>(steps)))] += 1;
  }
  static constexpr int bins = LogBins::count;
  static constexpr std::size_t hist_row = static_cast<std::size_t>(metric_count) * bins;
  // Where set `set`'s (0: the ensemble, 1 + g: group g) block accumulators of row `row` and
  // block b start in acc_, and its histogram row (thread, row) in hist_ (in hist_row units).
  std::size_t acc_at(int set, index_t row, std::int64_t b) const {
    return static_cast<std::size_t>(((static_cast<std::int64_t>(set) * seg_ + row) * blocks_ + b) * metric_count);
  }
  std::size_t hist_at(int set, int thread, index_t row) const {
    return (static_cast<std::size_t>(set) * static_cast<std::size_t>(threads_) + static_cast<std::size_t>(thread)) *
               static_cast<std::size_t>(seg_) +
           static_cast<std::size_t>(row);
  }
  // Where the segments' time goes, for cost tables that compare integrators (issue 17):
  // integrating, or measuring (the reference, the diagnostics, the statistics). Timed on
  // every timing_stride-th block (a clock read per group and sample would cost more than a
  // pendulum's step), whose shares are applied to the segments' wall time.
  static constexpr std::int64_t timing_stride = 8;
  static constexpr std::size_t pad = 8;  // one cache line of doubles per thread: [0] integrating, [1] measuring

  // [parameters] (EnsembleSpec::parameters): instance i's system, time grid and nominal
  // state, from its values alone, recomputed wherever the instance is visited (a few draws
  // against a sample interval's steps), so that nothing of them needs storing or checkpointing.
  using Model = std::decay_t<decltype(std::declval<System>().model)>;
  using Traits = ModelTraits<Model>;
  struct Setting {
    System sys;
    RunParams<Real> rp;
    ModelStateOf<System> z0;
  };
  Setting setting(std::uint64_t i) const {
    Setting at{sys_, rp_, z0_};
    const InstanceParameters v = spec_.parameters.at(spec_.global_index(i));
    (void)v;  // models without set_parameter, in float: nothing varies here
    if constexpr (varies_parameters_trait<Traits>::value) {
      Model m = sys_.model;
      for (int p = 0; p < parameter_count; ++p)
        if (ParameterId(p) != ParameterId::h && v.has(ParameterId(p))) Traits::set_parameter(m, ParameterId(p), v.value[p]);
      at.sys = with_model(sys_, m);
      // The same configuration on the instance's own scale (the same angles); its momenta as
      // given. make_instance then puts it on the instance's level set as every instance's.
      if (v.has(Traits::length_parameter)) {
        const double ratio = v[Traits::length_parameter] / Traits::length_of(sys_.model);
        auto q = Model::q_of(z0_);
        for (int c = 0; c < decltype(q)::size; ++c) q[c] = static_cast<Real>(static_cast<double>(q[c]) * ratio);
        at.z0 = Model::join(q, Model::p_of(z0_));
      }
    }
    // Float runs cannot vary h (study_parameters.cpp): their grid is the study's.
    if constexpr (std::is_same_v<Real, double>) {
      if (v.has(ParameterId::h)) at.rp = with_step_size(rp_, v[ParameterId::h], spec_.parameters.h_grid);
    }
    return at;
  }
  // f(system, time grid, nominal state) of instance i: the study's, or with [parameters] the
  // instance's own (setting): the one place the two kinds of instance part.
  template <class F>
  void with_setting(std::uint64_t i, F&& f) const {
    if (!lanes_.varied) {
      f(sys_, rp_, z0_);
      return;
    }
    const Setting at = setting(i);
    f(at.sys, at.rp, at.z0);
  }
  // The settings of a lane group's B instances from i on, drawn once per segment: with
  // [parameters] each instance's own, else none (the study's system and grid serve all).
  template <int B>
  struct Settings {
    bool own = false;
    Setting lane[B > 1 ? B : 1];
    Settings(const CpuEngine& e, std::uint64_t i) : own(B > 1 && e.lanes_.varied) {
      if (own)
        for (int j = 0; j < B; ++j) lane[j] = e.setting(i + static_cast<std::uint64_t>(j));
    }
    // f(system, grid) of lane j: its own, or the study's (sys, rp).
    template <class F>
    void visit(int j, const System& sys, const RunParams<Real>& rp, F&& f) const {
      if (own) {
        f(lane[j].sys, lane[j].rp);
      } else {
        f(sys, rp);
      }
    }
  };
  // Step index n of grid `from` as a step index of grid `to` (fixed-step methods, both with
  // the same sample times): the same fraction of the same sample interval, in integers, so
  // that a sample's step is the other grid's sample step exactly (a step-size ensemble's
  // times n h differ from the study's by rounding, and 0.3 / 0.1 < 3).
  static index_t on_grid(const RunParams<Real>& from, const RunParams<Real>& to, index_t n) {
    if (n <= 0) return 0;
    const index_t k = std::min<index_t>(from.samples, (n + from.steps_per_sample - 1) / from.steps_per_sample);
    const index_t f0 = from.sample_step(k - 1), f1 = from.sample_step(k), t0 = to.sample_step(k - 1), t1 = to.sample_step(k);
    if (f1 <= f0) return t1;
    const index_t o = std::min(n, f1) - f0;
    if (o == f1 - f0) return t1;
    return t0 + static_cast<index_t>(std::floor(static_cast<long double>(o) * static_cast<long double>(t1 - t0) /
                                                static_cast<long double>(f1 - f0)));
  }
  // A passage at one of an instance's own sample times (parameters.h: k n_i h_i) is reported
  // at the study's sample time k (k n h), which can differ from it by a rounding: the tally
  // then finds it in its sample interval, and states.h5 holds series.csv's times.
  void on_study_samples(const RunParams<Real>& rp, Passage& p) const {
    auto snap = [&](double& t) {
      if (!(t < INFINITY)) return;
      const index_t k = static_cast<index_t>(std::llround(t / static_cast<double>(rp.sample_dt)));
      if (k >= 0 && k <= rp.samples && rp.reference_time(k) == t) t = rp_.reference_time(k);
    };
    for (double& t : p.first) snap(t);
    snap(p.lost_at);
  }
  // A pass's stop point on an instance's own step grid (parameters.h): where it stops inside
  // the interval changes no result, only where the pass waits; a stop at the sample is the
  // instance's sample, so that the pass reaches it. The study's grid keeps w.limit.
  StepLimit step_limit(const SegmentWork& w, const RunParams<Real>& rp) const {
    StepLimit l = w.limit;
    if (!rp_.fixed_step || l.until_step == INT64_MAX || rp.h == rp_.h) return l;
    l.until_step = on_grid(rp_, rp, l.until_step);
    return l;
  }

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
  std::vector<std::uint64_t> step_cost_;  // per thread: StepCostBins::count counts
  double segments_wall_ = 0;
  Clock::time_point launched_at_{};
  int sets_ = 1;                     // statistics sets: the ensemble's, and one per group
  std::vector<std::int16_t> group_;  // group_by: each instance's group (-1: none)
  // The lane groups the instances step in, and the run's settings that decide them (cpu_lanes.hpp).
  using Lanes = CpuLaneChoice<System, Method>;
  Lanes lanes_;
};

template <>
struct EngineOf<CpuBackend> {
  template <class System, class Method, class Reference>
  using type = CpuEngine<System, Method, Reference>;
};

}  // namespace chens
