// The first instances of an ensemble one by one (EnsembleSpec::keep_instances): initial and
// final states, final metrics and counters, for comparing backends instance by instance and
// for states.h5.
#pragma once

#include <cstdint>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/counters.hpp>

namespace chens {

struct PerInstanceResult {
  std::vector<double> initial_state;     // size * state_size, formulation variables
  std::vector<double> initial_physical;  // size * state_size, physical (q, p)
  std::vector<double> final_state;       // size * state_size, formulation variables
  std::vector<double> final_physical;    // size * state_size, physical (q, p)
  std::vector<double> metrics;           // size * metric_count at the last sample (0 where lost)
  std::vector<int> lost;                 // LostReason per instance
  std::vector<Counters> counters;        // per instance
  // With output's [first_passage]: size * passage_slots first-passage times (Passage::at,
  // +inf where not crossed); empty otherwise.
  std::vector<double> first_passage;
  // With output.lyapunov_spectrum: size * K finite-time Lyapunov exponents at the last sample
  // time, the largest first (K = 2(n - m); NaN where the instance was lost); empty otherwise.
  std::vector<double> lyapunov_spectrum;

  // Storage for n instances of state size S.
  static PerInstanceResult sized(std::uint64_t n, int S) {
    PerInstanceResult r;
    for (auto* v : {&r.initial_state, &r.initial_physical, &r.final_state, &r.final_physical})
      v->resize(n * static_cast<std::uint64_t>(S));
    r.metrics.resize(n * metric_count);
    r.lost.resize(n);
    r.counters.resize(n);
    return r;
  }
};

}  // namespace chens
