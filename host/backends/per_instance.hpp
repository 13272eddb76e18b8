// The first instances of an ensemble one by one (EnsembleSpec::keep_instances): final
// state, final metrics and counters, for comparing backends instance by instance.
#pragma once

#include <cstdint>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/counters.hpp>

namespace chens {

struct PerInstanceResult {
  std::vector<double> final_state;  // size * state_size, formulation variables
  std::vector<double> metrics;      // size * metric_count at the last sample
  std::vector<int> lost;            // LostReason per instance
  std::vector<Counters> counters;   // per instance

  // Storage for n instances of state size S.
  static PerInstanceResult sized(std::uint64_t n, int S) {
    PerInstanceResult r;
    r.final_state.resize(n * static_cast<std::uint64_t>(S));
    r.metrics.resize(n * metric_count);
    r.lost.resize(n);
    r.counters.resize(n);
    return r;
  }
};

}  // namespace chens
