// What the backends record of instance 0 (host code shared by the CPU and CUDA backends):
// its rows of trajectory.csv and its final state in summary.json; and the instances kept
// one by one (EnsembleSpec::keep_instances).
#pragma once

#include <vector>

#include <chens/ensemble/counters.hpp>
#include <chens/ensemble/run_params.hpp>

#include "backends/ensemble_result.hpp"

namespace chens {

// t, the physical state and, when there is one, the reference state at sample k.
template <class System, class Real, class Inst>
std::vector<double> trajectory_row(const System& sys, const RunParams<Real>& rp, const Inst& in, index_t k) {
  constexpr int S = System::State::size;
  std::vector<double> row;
  row.push_back(rp.reference_time(k));
  const auto phys = sys.physical(in.z);
  for (int c = 0; c < S; ++c) row.push_back(static_cast<double>(phys[c]));
  if constexpr (decltype(in.ref)::available) {
    if (in.ref.enabled()) {
      const auto r = in.ref.eval(rp.reference_time(k));
      for (int c = 0; c < S; ++c) row.push_back(static_cast<double>(r[c]));
    }
  }
  return row;
}

// Instance 0's final state (formulation variables and physical) and whether it was lost.
template <class System, class Inst>
void record_instance0_final(EnsembleResult& res, const System& sys, const Inst& i0) {
  constexpr int S = System::State::size;
  const auto phys = sys.physical(i0.z);
  for (int c = 0; c < S; ++c) {
    res.instance0_state.push_back(static_cast<double>(i0.z[c]));
    res.instance0_physical.push_back(static_cast<double>(phys[c]));
  }
  res.instance0_lost = i0.lost != int(LostReason::none);
}

// Instance i's final state, lost reason and counters into kept (its metrics at the last
// sample are stored when they are measured).
template <class Inst>
void keep_final(PerInstanceResult& kept, std::uint64_t i, const Inst& in) {
  constexpr int S = decltype(in.z)::size;
  for (int c = 0; c < S; ++c) kept.final_state[i * S + c] = static_cast<double>(in.z[c]);
  kept.lost[i] = in.lost;
  kept.counters[i] = in.c;
}

}  // namespace chens
