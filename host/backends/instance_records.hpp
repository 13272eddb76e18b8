// What the backends record of single instances (host code shared by the CPU and CUDA
// backends): the recorded instances' states at every sample (EnsembleSpec::record; the
// rows of trajectory.csv and of states.h5's /trajectories), instance 0's final state in
// summary.json, and the first instances' initial and final states one by one
// (EnsembleSpec::keep_instances; states.h5's /instances).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/counters.hpp>
#include <chens/ensemble/run_params.hpp>

#include "backends/ensemble_result.hpp"

namespace chens {

// Storage for the recorded instances among the run's instances (global indices: those of
// `only`, or [first, first + n)) of a run with samples + 1 sample times.
inline RecordedTrajectories recorded_sized(const std::vector<std::uint64_t>& record, std::uint64_t first, std::uint64_t n,
                                           const std::vector<std::uint64_t>& only, int S, bool reference, index_t samples) {
  RecordedTrajectories rec;
  for (std::uint64_t i : record)
    if (only.empty() ? i >= first && i - first < n : std::binary_search(only.begin(), only.end(), i))
      rec.instances.push_back(i);
  rec.state_size = S;
  rec.has_reference = reference;
  const std::size_t K = static_cast<std::size_t>(samples + 1), R = rec.instances.size();
  rec.t.assign(K, 0.0);
  rec.state.assign(K * R * static_cast<std::size_t>(S), 0.0);
  if (reference) rec.reference.assign(K * R * static_cast<std::size_t>(S), 0.0);
  rec.metrics.assign(K * R * metric_count, 0.0);
  rec.measured.assign(K * R, 0);
  return rec;
}

// A recorded sample as a row of recorded_row_width(S) doubles: the physical state [0, S), the
// reference state [S, 2S) (0 without one), the metrics [2S, 2S + metric_count) and 1 where
// measured (0: lost). Both backends fill it with fill_recorded_row where the instance was
// measured (the GPU in its kernel), so a recorded trajectory holds the very numbers the
// statistics saw: its integration_error is |state - reference| of its own columns and its
// last metrics are the kept final metrics, bit for bit.
constexpr int recorded_row_width(int S) { return 2 * S + metric_count + 1; }

template <class System, class Real, class Inst>
CHENS_HD void fill_recorded_row(const System& sys, const RunParams<Real>& rp, const Inst& in, index_t k, bool measured,
                                const Metrics<double>& m, double* row) {
  constexpr int S = physical_state_size_v<System>;
  const auto phys = sys.physical(in.z);
  for (int c = 0; c < S; ++c) row[c] = static_cast<double>(phys[c]);
  for (int c = 0; c < S; ++c) row[S + c] = 0.0;
  if constexpr (decltype(in.ref)::available) {
    if (in.ref.enabled()) {  // advanced to sample k by measure_instance
      const auto r = in.ref.eval(rp.reference_time(k));
      for (int c = 0; c < S; ++c) row[S + c] = static_cast<double>(r[c]);
    }
  }
  for (int c = 0; c < metric_count; ++c) row[2 * S + c] = measured ? m.v[c] : 0.0;
  row[2 * S + metric_count] = measured ? 1.0 : 0.0;
}

// Sample k of the recorded instance in slot `slot`, from its row.
inline void record_row(RecordedTrajectories& rec, std::size_t slot, index_t k, double t, const double* row) {
  const int S = rec.state_size;
  const std::size_t R = rec.instances.size();
  const std::size_t at = static_cast<std::size_t>(k) * R + slot;
  rec.t[static_cast<std::size_t>(k)] = t;
  for (int c = 0; c < S; ++c) rec.state[at * S + c] = row[c];
  if (rec.has_reference)
    for (int c = 0; c < S; ++c) rec.reference[at * S + c] = row[S + c];
  for (int c = 0; c < metric_count; ++c) rec.metrics[at * metric_count + c] = row[2 * S + c];
  rec.measured[at] = row[2 * S + metric_count] != 0.0 ? 1 : 0;
}

// Sample k of the recorded instance in slot `slot` on the host (the CPU backend): its row,
// filled as the GPU fills it, then stored.
template <class System, class Real, class Inst>
void record_sample(RecordedTrajectories& rec, const System& sys, const RunParams<Real>& rp, std::size_t slot, index_t k,
                   const Inst& in, bool measured, const Metrics<double>& m) {
  double row[recorded_row_width(physical_state_size_v<System>)];
  fill_recorded_row(sys, rp, in, k, measured, m, row);
  record_row(rec, slot, k, rp.reference_time(k), row);
}

// Instance 0's final state (formulation variables and physical) and whether it was lost.
template <class System, class Inst>
void record_instance0_final(EnsembleResult& res, const System& sys, const Inst& i0) {
  constexpr int S = physical_state_size_v<System>;
  const auto phys = sys.physical(i0.z);
  for (int c = 0; c < S; ++c) {
    res.instance0_state.push_back(static_cast<double>(i0.z[c]));
    res.instance0_physical.push_back(static_cast<double>(phys[c]));
  }
  res.instance0_lost = i0.lost != int(LostReason::none);
}

// Instance i's state (formulation variables) and physical state into row i of both arrays.
template <class System, class Inst>
void keep_states(std::vector<double>& state, std::vector<double>& physical, const System& sys, std::uint64_t i,
                 const Inst& in) {
  constexpr int S = physical_state_size_v<System>;
  const auto phys = sys.physical(in.z);
  for (int c = 0; c < S; ++c) {
    state[i * S + c] = static_cast<double>(in.z[c]);
    physical[i * S + c] = static_cast<double>(phys[c]);
  }
}

// Instance i's initial state into kept.
template <class System, class Inst>
void keep_initial(PerInstanceResult& kept, const System& sys, std::uint64_t i, const Inst& in) {
  keep_states(kept.initial_state, kept.initial_physical, sys, i, in);
}

// Instance i's final state, lost reason and counters into kept (its metrics at the last
// sample are stored when they are measured).
template <class System, class Inst>
void keep_final(PerInstanceResult& kept, const System& sys, std::uint64_t i, const Inst& in) {
  keep_states(kept.final_state, kept.final_physical, sys, i, in);
  kept.lost[i] = in.lost;
  kept.counters[i] = in.c;
  if (!kept.first_passage.empty())
    for (int s = 0; s < passage_slots; ++s)
      kept.first_passage[i * passage_slots + static_cast<std::uint64_t>(s)] = in.passage.at(s);
}

}  // namespace chens
