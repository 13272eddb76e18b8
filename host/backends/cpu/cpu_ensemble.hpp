// CPU backend: OpenMP over fixed blocks of instances, running the per-instance driver
// of include/chens/ensemble/instance.hpp. The run is cut into segments of sample
// intervals, and long intervals into passes, as segment_plan.hpp says (the GPU's kernels
// are launched by the same plan); within a segment each
// block integrates its instances in index order and accumulates their metrics into
// the block's own accumulators, which are then merged along the block tree
// (block_tree.hpp; in sharded runs EnsembleSpec::reduce_segment does it). Blocks do not
// depend on the thread count, so results are bitwise identical for any thread count.
// Quantiles come from per-thread histograms of integer counts (quantiles.hpp), summed.
#pragma once

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/accumulator.hpp>
#include <chens/ensemble/instance.hpp>
#include <chens/ensemble/quantiles.hpp>

#include "backends/checkpoint.hpp"
#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"
#include "backends/instance_records.hpp"
#include "backends/segment_plan.hpp"

namespace chens {

// Instances a fixed-step explicit method advances in lockstep (ExplicitRk::step_lanes): a
// single instance's right-hand side is one chain of dependent operations, so interleaving
// independent instances fills the core's pipelines. Divides cpu_block_size.
inline constexpr int cpu_lanes = 4;
inline constexpr int cpu_lanes_max_state = 8;

// EnsembleResult::integration_seconds / measurement_seconds: the segments' wall time split
// as the timed blocks' thread time was (timed[t * pad]: integrating, [t * pad + 1]: measuring).
inline void set_cost_split(EnsembleResult& res, const std::vector<double>& timed, std::size_t pad, double segments_wall) {
  double integrating = 0, measuring = 0;
  for (std::size_t t = 0; t < timed.size(); t += pad) {
    integrating += timed[t];
    measuring += timed[t + 1];
  }
  if (!(integrating + measuring > 0)) return;
  res.integration_seconds = segments_wall * integrating / (integrating + measuring);
  res.measurement_seconds = segments_wall - res.integration_seconds;
}

template <class System, class Method, class Reference>
EnsembleResult run_cpu_ensemble(const System& sys, const Method& method, const RunParams<typename System::Real>& rp,
                                const ModelStateOf<System>& z0, const EnsembleSpec& spec) {
  using Real = typename System::Real;
  using Inst = InstanceOf<System, Reference>;
  constexpr int S = System::State::size;
  constexpr int P = physical_state_size_v<System>;  // kept and recorded states
  // Lanes pay off for small states only: four chain states would spill the registers.
  constexpr bool lanes = !Method::adaptive && Method::has_lanes && S <= cpu_lanes_max_state;
  const auto t_start = std::chrono::steady_clock::now();
  const int threads = spec.threads > 0 ? spec.threads : omp_get_max_threads();
  const std::uint64_t n = spec.size;
  const std::int64_t blocks = static_cast<std::int64_t>((n + cpu_block_size - 1) / cpu_block_size);
  const index_t samples = rp.samples;

  EnsembleResult res;
  res.backend = "cpu";
  res.threads = threads;
  res.device = "CPU, " + std::to_string(threads) + " OpenMP thread" + (threads == 1 ? "" : "s");
  res.instances = n;
  res.reference_available = Reference::available && rp.reference;
  res.momentum_metrics = decltype(sys.model)::has_momentum_integrals;
  res.wedge_metric = has_tangents_v<System>;
  res.series.resize(static_cast<std::size_t>(samples + 1));

  std::vector<Inst> inst(n);
  const std::uint64_t keep = std::min<std::uint64_t>(spec.keep_instances, n);
  res.kept = PerInstanceResult::sized(keep, P);
  // Segment length: the block accumulators and the threads' histograms of one segment
  // stay under ~64 MiB (and min_segments, ensemble_spec.hpp).
  constexpr int bins = LogBins::count;
  const std::int64_t per_sample_bytes =
      blocks * static_cast<std::int64_t>(sizeof(Accumulator) * metric_count) +
      static_cast<std::int64_t>(threads) * metric_count * bins * static_cast<std::int64_t>(sizeof(std::uint32_t));
  const index_t seg = spec.segment_rows > 0
                          ? spec.segment_rows
                          : segment_rows(samples, (64ll << 20) / std::max<std::int64_t>(1, per_sample_bytes));
  std::vector<Accumulator> acc(static_cast<std::size_t>(blocks * seg * metric_count));
  // Histograms per thread, row and metric (integer counts: summed in any order, exactly),
  // with the range of bins each has touched, so that merging and clearing them costs what
  // the ensemble's spread of values costs, not the ~1000 bins.
  const std::size_t hist_row = static_cast<std::size_t>(metric_count) * bins;
  const std::size_t hist_rows = static_cast<std::size_t>(threads) * static_cast<std::size_t>(seg);
  std::vector<std::uint32_t> hist(hist_rows * hist_row, 0u);
  std::vector<std::uint32_t> seg_hist(static_cast<std::size_t>(seg) * hist_row);  // summed over threads
  std::vector<int> touched_lo(hist_rows * metric_count, bins), touched_hi(hist_rows * metric_count, -1);
  res.recorded = recorded_sized(spec.record, spec.first_instance, n, spec.only, P, res.reference_available, samples);
  const std::vector<std::uint64_t>& rec_list = res.recorded.instances;
  // A resumed run: the instances' bytes, the statistics and records of the samples done.
  static_assert(std::is_trivially_copyable_v<Inst>);
  index_t start = 0;
  double earlier_wall = 0.0;
  if (const CheckpointState* from = spec.resume_from) {
    check_resumable(*from, "cpu", sizeof(Inst), n, samples);
    std::memcpy(static_cast<void*>(inst.data()), from->instances.data(), n * sizeof(Inst));
    restore_common(res, *from);
    start = from->done;
    earlier_wall = from->wall_seconds;
  }
  auto wall = [&] {
    return earlier_wall + std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  };
  SegmentPlan plan(samples, seg, rp.fixed_step, rp.steps_per_sample, rp.total_steps, spec.segment_rows,
                   static_cast<bool>(spec.reduce_segment), spec.pass_steps, spec.stop_seconds);
  if (start > 0) plan.resume_at(start, n, [&](std::uint64_t i) -> const Inst& { return inst[i]; });
  // Where the segments' time goes, for cost tables that compare integrators (issue 17):
  // integrating, or measuring (the reference, the diagnostics, the statistics). Timed on
  // every timing_stride-th block (a clock read per group and sample would cost more than a
  // pendulum's step), whose shares are applied to the segments' wall time.
  constexpr std::int64_t timing_stride = 8;
  constexpr std::size_t pad = 8;  // one cache line of doubles per thread
  std::vector<double> timed(static_cast<std::size_t>(threads) * pad, 0.0);  // [t * pad]: integrating, [+1]: measuring
  double segments_wall = 0;
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };

  // After a segment or a pass: save and stop as the run asks; true when the run stops.
  auto stop_point = [&](index_t done, bool inside) {
    if (!spec.checkpoint) return false;
    const CheckpointRequest q = spec.checkpoint(done, samples + 1);
    if (q.save && spec.save_checkpoint) {
      CheckpointState c = checkpoint_of(res, "cpu", sizeof(Inst), n, samples, done, wall());
      c.instances_view = reinterpret_cast<const unsigned char*>(inst.data());
      spec.save_checkpoint(c);
    }
    if (!q.stop) return false;
    set_cost_split(res, timed, pad, segments_wall);
    res.stopped_at = done;
    res.stopped_inside_interval = inside;
    res.wall_seconds = wall();
    return true;
  };

  while (!plan.finished()) {
    const SegmentWork w = plan.next();
    plan.take(w);
    const auto w_start = std::chrono::steady_clock::now();
    if (w.partial) {
      // A pass into sample interval w.k0 (segment_plan.hpp), with the same lanes as a segment.
      // The instances' integration first, then (timed apart) their numerical references,
      // each only once its instance is at the sample: advance_toward_sample's order.
      bool there = true;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) reduction(&& : there)
      for (std::int64_t b = 0; b < blocks; ++b) {
        const std::uint64_t lo = static_cast<std::uint64_t>(b) * cpu_block_size;
        const std::uint64_t hi = std::min<std::uint64_t>(n, lo + cpu_block_size);
        const bool timing = b % timing_stride == 0;
        const auto t0 = timing ? Clock::now() : Clock::time_point{};
        std::uint64_t i = lo;
        if constexpr (lanes) {
          for (; i + cpu_lanes <= hi; i += cpu_lanes) advance_fixed_to_sample<cpu_lanes>(sys, method, rp, &inst[i], w.k0, w.limit);
        }
        for (; i < hi; ++i)
          if (!integration_at_sample<Method>(rp, inst[i], w.k0)) advance_to_sample(sys, method, rp, inst[i], w.k0, w.limit);
        const auto t1 = timing ? Clock::now() : Clock::time_point{};
        for (i = lo; i < hi; ++i)
          there = (integration_at_sample<Method>(rp, inst[i], w.k0) && reference_toward_sample(sys, rp, inst[i], w.k0, w.limit)) &&
                  there;
        if (timing) {
          double* mine = &timed[static_cast<std::size_t>(omp_get_thread_num()) * pad];
          mine[0] += since(t0, t1);
          mine[1] += since(t1, Clock::now());
        }
      }
      const double seconds = since(w_start, Clock::now());
      segments_wall += seconds;
      plan.measured(w, seconds, there);
      if (stop_point(w.k0, true)) return res;
      continue;
    }
    const index_t k0 = w.k0, k1 = w.k1;
    std::fill(acc.begin(), acc.end(), Accumulator{});
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::uint64_t lo = static_cast<std::uint64_t>(b) * cpu_block_size;
      const std::uint64_t hi = std::min<std::uint64_t>(n, lo + cpu_block_size);
      const std::size_t my_rows = static_cast<std::size_t>(omp_get_thread_num()) * static_cast<std::size_t>(seg);
      const bool timing = b % timing_stride == 0;
      double* mine = &timed[static_cast<std::size_t>(omp_get_thread_num()) * pad];
      // Whether the block holds a recorded instance (then each of its instances looks itself up).
      const bool block_records = std::lower_bound(rec_list.begin(), rec_list.end(), spec.global_index(lo)) !=
                                 std::upper_bound(rec_list.begin(), rec_list.end(), spec.global_index(hi - 1));
      // Instances i..i+B-1 through the segment; per sample, metrics are accumulated in
      // instance order whatever B is, so B changes no result.
      auto group = [&]<int B>(std::uint64_t i) {
        for (index_t k = k0; k < k1; ++k) {
          for (int j = 0; j < B; ++j) {
            if (k == 0) {
              inst[i + j] = make_instance<System, Reference>(sys, z0, Real(spec.perturbation), spec.seed,
                                                             spec.global_index(i + j), rp);
              if (i + j < keep) keep_initial(res.kept, sys, i + j, inst[i + j]);
            }
          }
          const auto t0 = timing ? Clock::now() : Clock::time_point{};
          if (k > 0) {
            if constexpr (B > 1) {
              advance_fixed_to_sample<B>(sys, method, rp, &inst[i], k);
            } else {
              advance_to_sample(sys, method, rp, inst[i], k);
            }
          }
          const auto t1 = timing ? Clock::now() : Clock::time_point{};
          Accumulator* a = &acc[static_cast<std::size_t>(((k - k0) * blocks + b) * metric_count)];
          const std::size_t hr = my_rows + static_cast<std::size_t>(k - k0);
          std::uint32_t* h = &hist[hr * hist_row];
          int* tlo = &touched_lo[hr * metric_count];
          int* thi = &touched_hi[hr * metric_count];
          for (int j = 0; j < B; ++j) {
            Metrics<double> m;
            const bool ok = measure_instance(sys, rp, inst[i + j], k, m);
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
              const std::int64_t slot = res.recorded.slot(spec.global_index(i + j));
              if (slot >= 0) record_sample(res.recorded, sys, rp, static_cast<std::size_t>(slot), k, inst[i + j], ok, m);
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
    std::fill(seg_hist.begin(), seg_hist.end(), 0u);
    for (index_t k = k0; k < k1; ++k) {
      res.series[static_cast<std::size_t>(k)].t = rp.reference_time(k);
      std::uint32_t* row_hist = &seg_hist[static_cast<std::size_t>(k - k0) * hist_row];
      for (int t = 0; t < threads; ++t) {
        const std::size_t hr = static_cast<std::size_t>(t) * static_cast<std::size_t>(seg) + static_cast<std::size_t>(k - k0);
        for (int c = 0; c < metric_count; ++c) {
          int& lo = touched_lo[hr * metric_count + c];
          int& hi = touched_hi[hr * metric_count + c];
          std::uint32_t* h = &hist[hr * hist_row + static_cast<std::size_t>(c) * bins];
          for (int x = lo; x <= hi; ++x) {
            row_hist[static_cast<std::size_t>(c) * bins + x] += h[x];
            h[x] = 0;
          }
          lo = bins;
          hi = -1;
        }
      }
    }
    if (spec.reduce_segment) {
      spec.reduce_segment(k0, k1, acc.data(), blocks, seg_hist.data(), res.series);
    } else {
      reduce_rows(res.series, k0, k1, acc.data(), blocks, seg_hist.data());
    }
    const double seconds = since(w_start, Clock::now());
    segments_wall += seconds;
    plan.measured(w, seconds, true);
    if (spec.progress) spec.progress(k1, samples + 1);
    if (k1 <= samples && stop_point(k1, false)) return res;
  }

  set_cost_split(res, timed, pad, segments_wall);
  for (std::uint64_t i = 0; i < n; ++i) {
    res.totals.add(inst[i].c);
    res.lost[inst[i].lost] += 1;
    if (inst[i].lost != int(LostReason::none) && res.lost_examples.size() < lost_examples_max) {
      res.lost_examples.push_back(spec.global_index(i));
      res.lost_example_reasons.push_back(inst[i].lost);
    }
    if (inst[i].ref.projected) res.reference_projected += 1;
  }
  for (std::uint64_t i = 0; i < keep; ++i) keep_final(res.kept, sys, i, inst[i]);
  const Inst& i0 = inst[0];
  record_instance0_final(res, sys, i0);
  res.wall_seconds = wall();
  return res;
}

}  // namespace chens
