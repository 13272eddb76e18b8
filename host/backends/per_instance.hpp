// Per-instance results of an ensemble (final state, final metrics, counters), for
// cross-validating backends instance by instance.
#pragma once

#include <cstdint>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/counters.hpp>
#include <chens/ensemble/run_params.hpp>

namespace chens {

struct Study;

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

// The CPU twin of cuda_run_pendulum_instances (kernels/pendulum_kernels.hpp).
PerInstanceResult cpu_run_pendulum_instances(const Study& s, const RunParams<double>& rp, std::uint64_t size);
// The CPU twin of cuda_run_chain_instances (kernels/chain_kernels.hpp), 7 atoms.
PerInstanceResult cpu_run_chain_instances(const Study& s, const RunParams<double>& rp, std::uint64_t size);

}  // namespace chens
