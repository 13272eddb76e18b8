// The CPU twin of kernels/instance_kernel.cuh's launch_instances: the same per-instance
// function (run_instance_to_end), one loop iteration per instance, returning each
// instance's final state, metrics, lost flag and counters for instance-by-instance
// comparison with the GPU.
#pragma once

#include <cstdint>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/instance.hpp>

#include "backends/per_instance.hpp"

namespace chens {

template <class Reference, class System, class Method>
PerInstanceResult cpu_run_instances(const System& sys, const Method& method, const RunParams<double>& rp,
                                    const typename System::State& z0, double perturbation, std::uint64_t seed,
                                    std::uint64_t n) {
  constexpr int S = System::State::size;
  PerInstanceResult r = PerInstanceResult::sized(n, S);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
    run_instance_to_end<System, Method, Reference>(sys, method, rp, z0, perturbation, seed,
                                                   static_cast<std::uint64_t>(i), &r.final_state[i * S],
                                                   &r.metrics[i * metric_count], &r.lost[i], &r.counters[i]);
  }
  return r;
}

}  // namespace chens
