// What an ensemble run hands back to the host, whatever backend ran it.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/accumulator.hpp>
#include <chens/ensemble/counters.hpp>
#include <chens/ensemble/passage.hpp>
#include <chens/ensemble/quantiles.hpp>

#include "backends/block_tree.hpp"
#include "backends/per_instance.hpp"

namespace chens {

struct SampleStats {
  double t = 0.0;
  Accumulator metric[metric_count];  // count = live instances measured at t
  // p10, p50, p90, p99 of each metric over the live instances (quantiles.hpp: each in the
  // bin of the exact value).
  double quantile[metric_count][quantile_count] = {};
};

// One Lyapunov exponent's statistics over the live instances at the last sample time
// (output.lyapunov_spectrum; spectrum_tally.hpp): mean, rms, min, max, count, and its p10, p50,
// p90, p99 (quantiles.hpp).
struct ExponentStats {
  Accumulator value;
  double quantile[quantile_count] = {};
};

// The instances EnsembleSpec::record names, at every sample time (trajectory.csv and
// states.h5's /trajectories). Arrays are sample-major: [k][r][c].
struct RecordedTrajectories {
  std::vector<std::uint64_t> instances;  // R instance indices, ascending
  int state_size = 0;
  bool has_reference = false;
  std::vector<double> t;                // the K = samples + 1 sample times
  std::vector<double> state;            // K * R * state_size, physical (q, p)
  std::vector<double> reference;        // K * R * state_size (has_reference)
  std::vector<double> metrics;          // K * R * metric_count, 0 where not measured
  std::vector<unsigned char> measured;  // K * R: 0 once the instance is lost

  // Slot of instance i, or -1 (binary search: instances are ascending).
  std::int64_t slot(std::uint64_t i) const {
    const auto it = std::lower_bound(instances.begin(), instances.end(), i);
    return it != instances.end() && *it == i ? static_cast<std::int64_t>(it - instances.begin()) : -1;
  }
  std::size_t samples() const { return t.size(); }
  // t, the physical state and (has_reference) the reference state of slot r at sample k.
  std::vector<double> row(std::size_t k, std::size_t r) const {
    const std::size_t S = static_cast<std::size_t>(state_size), at = (k * instances.size() + r) * S;
    std::vector<double> out{t[k]};
    out.insert(out.end(), state.begin() + static_cast<std::ptrdiff_t>(at),
               state.begin() + static_cast<std::ptrdiff_t>(at + S));
    if (has_reference)
      out.insert(out.end(), reference.begin() + static_cast<std::ptrdiff_t>(at),
                 reference.begin() + static_cast<std::ptrdiff_t>(at + S));
    return out;
  }
};

// First-passage statistics of one slot (output's [first_passage], ensemble/passage.hpp):
// a metric's level, or the loss.
struct PassageStats {
  double level = 0.0;                    // the metric's level (the loss: 0)
  std::uint64_t crossed = 0;             // instances whose metric crossed it (the loss: instances lost)
  std::uint64_t lost_first = 0;          // instances lost before their metric crossed it (the loss: 0)
  std::uint64_t never = 0;               // neither, to the end of the run
  Accumulator time;                      // the crossing times of the `crossed` instances
  double quantile[quantile_count] = {};  // and their quantiles (quantiles.hpp's histograms)
  // ended[k]: instances whose passage (a crossing, or the loss) is in (t_{k-1}, t_k], the
  // sample interval ending at sample k (k = 0: at t = 0); the surviving fraction at t_k is
  // 1 - (ended[0] + ... + ended[k]) / instances.
  std::vector<std::uint64_t> ended;
};

struct PassageResult {
  unsigned mask = 0;  // PassageLevels::mask: the slots checked
  PassageStats slot[passage_slots];

  bool on(int s) const { return ((mask >> s) & 1u) != 0u; }
  bool any() const { return mask != 0u; }
  // The integer counts of every slot in one array (summed over MPI ranks), and back.
  std::vector<std::uint64_t> counts() const {
    std::vector<std::uint64_t> out;
    for (const PassageStats& p : slot) {
      out.insert(out.end(), {p.crossed, p.lost_first, p.never});
      out.insert(out.end(), p.ended.begin(), p.ended.end());
    }
    return out;
  }
  void set_counts(const std::vector<std::uint64_t>& c) {
    std::size_t at = 0;
    for (PassageStats& p : slot) {
      p.crossed = c[at++];
      p.lost_first = c[at++];
      p.never = c[at++];
      for (std::uint64_t& e : p.ended) e = c[at++];
    }
  }
  // Slot s's surviving fraction at sample k of `instances`.
  double surviving(int s, std::size_t k, std::uint64_t instances) const {
    std::uint64_t ended = 0;
    for (std::size_t j = 0; j <= k && j < slot[s].ended.size(); ++j) ended += slot[s].ended[j];
    return surviving_fraction(instances, ended);
  }
  // The fraction of `instances` whose passage has not happened, `ended` of them having passed
  // (series.csv sums `ended` as k goes).
  static double surviving_fraction(std::uint64_t instances, std::uint64_t ended) {
    return instances == 0 ? 0.0 : static_cast<double>(instances - ended) / static_cast<double>(instances);
  }
};

inline constexpr std::size_t lost_examples_max = 16;

// The statistics of one group of a grouped parameter ensemble ([parameters] group_by,
// docs/parameter_ensembles.md): the ensemble's own, over the group's instances alone, reduced
// the same way (per block in instance order, blocks merged along the block tree, histograms
// summed), so that they do not depend on threads or ranks either. What the group holds
// (its value or bin) is EnsembleSpec::parameters' group g.
struct GroupResult {
  std::uint64_t instances = 0;      // the group's instances
  std::uint64_t lost = 0;           // of them, lost by the end
  std::vector<SampleStats> series;  // as EnsembleResult::series
  PassageResult passage;            // as EnsembleResult::passage
  // output.lyapunov_spectrum: as EnsembleResult::lyapunov_spectrum, over the group's live
  // instances (empty without the spectrum).
  std::vector<ExponentStats> lyapunov_spectrum;

  // The integer counts (summed over MPI ranks), and back.
  std::vector<std::uint64_t> counts() const {
    std::vector<std::uint64_t> out{instances, lost};
    const std::vector<std::uint64_t> p = passage.counts();
    out.insert(out.end(), p.begin(), p.end());
    return out;
  }
  void set_counts(const std::vector<std::uint64_t>& c) {
    instances = c[0];
    lost = c[1];
    passage.set_counts(std::vector<std::uint64_t>(c.begin() + 2, c.end()));
  }
};

struct EnsembleResult {
  std::string backend;  // "cpu" or "cuda"
  std::string device;   // e.g. "CPU, 2 OpenMP threads"
  int threads = 1;
  std::vector<SampleStats> series;  // one entry per sample time, t = 0 first
  Counters totals;
  std::uint64_t instances = 0;
  std::uint64_t lost[lost_reason_count] = {};  // by LostReason
  // The first (lowest-index) lost instances, at most lost_examples_max, with their reasons.
  std::vector<std::uint64_t> lost_examples;
  std::vector<int> lost_example_reasons;
  bool reference_available = false;        // integration_error is reported
  std::string reference_kind = "none";     // what the reference is (summary.json)
  bool momentum_metrics = false;           // the angular momentum error is reported (a first integral)
  bool linear_momentum_metric = false;     // and the linear momentum error (chains)
  bool wedge_metric = false;               // the wedge product's change is reported (output.wedge)
  bool lyapunov_metric = false;            // the finite-time Lyapunov exponent is reported (output.lyapunov)
  std::vector<std::string> state_names;    // names of the physical state's components
  std::uint64_t reference_projected = 0;   // instances whose reference started from projected data
  std::vector<double> instance0_state;     // final state in the formulation's variables
  std::vector<double> instance0_physical;  // final physical (q, p)
  bool instance0_lost = false;
  PassageResult passage;  // output's [first_passage]
  // output.lyapunov_spectrum: exponent k's statistics, k = 0 .. 2(n - m) - 1 in the
  // Gram-Schmidt order (the largest first); empty without it.
  std::vector<ExponentStats> lyapunov_spectrum;
  std::vector<GroupResult> groups;  // [parameters] group_by: group g's statistics (none without)
  RecordedTrajectories recorded;    // the instances EnsembleSpec::record names
  PerInstanceResult kept;           // the first EnsembleSpec::keep_instances instances

  double wall_seconds = 0.0;  // of the whole run, resumed parts included
  // GPU: the time the integration kernels ran (stepping and measuring, between CUDA events on
  // the compute stream; this process's part of a resumed run): the kernel-only time, which
  // the device's statistics and the host's share overlap. 0 on the CPU.
  double device_seconds = 0.0;
  // GPU: of wall_seconds, the set-up (device allocation, initial data) and the finish (counter
  // sums, lost instances, kept instances) around the segments (bench_gpu_instances).
  double setup_seconds = 0.0, finish_seconds = 0.0;
  // Of the segments' wall time, integrating and measuring (the reference, the diagnostics,
  // the statistics), for cost tables that compare integrators (issue 17); -1: not measured
  // (the GPU steps and measures in the same kernels or stream without timing them apart).
  double integration_seconds = -1.0, measurement_seconds = -1.0;
  // The sampled cost per instance-step (step_cost.hpp: StepCostBins::count counts; empty
  // where not measured), whose median a study's cost comparison uses.
  std::vector<std::uint64_t> step_cost;
  // > 0: the run stopped after this many sample times (EnsembleSpec::checkpoint asked it
  // to, after its state was saved); the result is incomplete and is not written.
  std::int64_t stopped_at = 0;
  // With stopped_at: the instances had gone part of the way into the next sample interval
  // (a stop point between sample times, segment_plan.hpp).
  bool stopped_inside_interval = false;

  bool metric_reported(int m) const {
    if (m == int(MetricId::integration_error)) return reference_available;
    if (m == int(MetricId::linear_momentum_error)) return linear_momentum_metric;
    if (m == int(MetricId::angular_momentum_error)) return momentum_metrics;
    if (m == int(MetricId::wedge_error)) return wedge_metric;
    if (m == int(MetricId::lyapunov)) return lyapunov_metric;
    return true;
  }

  std::uint64_t lost_total() const {
    std::uint64_t t = 0;
    for (int r = 1; r < lost_reason_count; ++r) t += lost[r];
    return t;
  }
};

// The statistics of sample k from its block accumulators (layout ((k - k0) * blocks + b) *
// metric_count + metric, as both backends fill them), merged along the block tree
// (block_tree.hpp): the one reduction order of every backend and split.
inline void merge_sample(SampleStats& st, const Accumulator* acc, std::int64_t row, std::int64_t blocks) {
  tree_merge(acc + static_cast<std::size_t>(row * blocks) * metric_count, static_cast<std::uint64_t>(blocks), st.metric);
}

// Sets the quantiles of one sample time from its histograms, hist[m * LogBins::count + b]
// for metric m (the minimum and maximum of st.metric[m] clamp the estimates).
template <class Count>
void set_quantiles(SampleStats& st, const Count* hist) {
  for (int m = 0; m < metric_count; ++m)
    for (int q = 0; q < quantile_count; ++q)
      st.quantile[m][q] = st.metric[m].count == 0 ? 0.0
                                                  : histogram_quantile(hist + m * LogBins::count, quantile_level[q],
                                                                       st.metric[m].min, st.metric[m].max, metric_signed(m));
}

// A segment's statistics from one backend's own blocks and histograms (what EnsembleSpec::
// reduce_segment replaces in sharded runs): series[k0 .. k1), whose t is set.
inline void reduce_rows(std::vector<SampleStats>& series, std::int64_t k0, std::int64_t k1, const Accumulator* acc,
                        std::int64_t blocks, const std::uint32_t* hist) {
  constexpr std::size_t hist_row = static_cast<std::size_t>(metric_count) * LogBins::count;
  for (std::int64_t k = k0; k < k1; ++k) {
    SampleStats& st = series[static_cast<std::size_t>(k)];
    merge_sample(st, acc, k - k0, blocks);
    set_quantiles(st, hist + static_cast<std::size_t>(k - k0) * hist_row);
  }
}

}  // namespace chens
