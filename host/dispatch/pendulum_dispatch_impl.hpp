#pragma once

#include <chens/models/pendulum.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "dispatch/methods.hpp"
#include "dispatch/pendulum_dispatch.hpp"

namespace chens {

// One pendulum-model system (the pendulum's formulations, the penalty ODE) on the CPU
// backend: the study's method, with output.wedge its tangent system, the closed-form
// reference of the rigid pendulum.
template <class System>
EnsembleResult run_pendulum_system_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec,
                                       const System& sys, const char* reference_kind) {
  const std::vector<double> z = initial_state(s);
  const ModelStateOf<System> z0{{z[0], z[1], z[2], z[3]}};
  return with_method<System>(s.method, rp, [&](const auto& method) {
    return with_wedge_choice(s, sys, method, [&](const auto& run_sys, const auto& run_method) {
      using RunSystem = std::decay_t<decltype(run_sys)>;
      static_assert(sizeof(InstanceOf<RunSystem, PendulumExact<double>>) <=
                    pendulum_bytes_per_instance_with(has_tangents_v<RunSystem>));
      EnsembleResult r = run_cpu_ensemble<RunSystem, std::decay_t<decltype(run_method)>, PendulumExact<double>>(
          run_sys, run_method, rp, z0, spec);
      r.reference_kind = reference_kind;
      r.state_names = {"x", "y", "px", "py"};
      return r;
    });
  });
}

template <FormulationId F>
EnsembleResult run_pendulum_cpu_formulation(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  using Model = Pendulum<double>;
  return run_pendulum_system_cpu(s, rp, spec, make_formulation<F>(Model{s.mass, s.length, s.gravity}, s),
                                 "closed form in Jacobi elliptic functions");
}

}  // namespace chens
