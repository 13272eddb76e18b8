// One pendulum-model system (a formulation of the pendulum, or the penalty ODE) on the
// GPU: the study's method, plain or (Tangents, output.wedge) as its tangent system
// (geometry/wedge.hpp), with the rigid pendulum's closed form as reference. The plain and
// tangent instantiations live in different translation units (ensemble_pendulum.cu,
// ensemble_pendulum_wedge.cu, ensemble_penalty.cu) so that nvcc builds them in parallel.
#pragma once

#include <chens/reference/pendulum_exact.hpp>

#include "dispatch/methods.hpp"
#include "ensemble_kernel.cuh"

namespace chens {

template <bool Tangents, class System>
EnsembleResult run_pendulum_system_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec,
                                        const System& sys, const ModelStateOf<System>& z0, const char* reference_kind) {
  return with_method<System>(s.method, rp, [&](const auto& method) {
    return with_tangents_if<Tangents>(sys, method, [&](const auto& run_sys, const auto& run_method) {
      EnsembleResult r = cuda::run_cuda_ensemble<std::decay_t<decltype(run_sys)>, std::decay_t<decltype(run_method)>,
                                                 PendulumExact<double>>(run_sys, run_method, rp, z0, spec);
      r.reference_kind = reference_kind;
      r.state_names = {"x", "y", "px", "py"};
      return r;
    });
  });
}

}  // namespace chens
