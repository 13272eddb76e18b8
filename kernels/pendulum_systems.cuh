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
  return with_method<System>(s.method, rp, [&](const auto& method) -> EnsembleResult {
    using Method = std::decay_t<decltype(method)>;
    EnsembleResult r;
    if constexpr (!Tangents) {
      r = cuda::run_cuda_ensemble<System, Method, PendulumExact<double>>(sys, method, rp, z0, spec);
    } else if constexpr (!Method::adaptive) {
      r = cuda::run_cuda_ensemble<TangentSystem<System>, TangentStepper<Method>, PendulumExact<double>>(
          TangentSystem<System>::of(sys), TangentStepper<Method>{method}, rp, z0, spec);
    } else {
      throw StudyError(std::string("output.wedge propagates tangents through fixed-step maps; integrator.method = \"") +
                       method_name(s.method) + "\" is adaptive");
    }
    r.reference_kind = reference_kind;
    r.state_names = {"x", "y", "px", "py"};
    return r;
  });
}

}  // namespace chens
