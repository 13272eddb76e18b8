#pragma once

#include <chens/models/pendulum.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "dispatch/methods.hpp"
#include "dispatch/pendulum_dispatch.hpp"

namespace chens {

template <FormulationId F>
EnsembleResult run_pendulum_cpu_formulation(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  using Model = Pendulum<double>;
  using System = typename FormulationOf<F>::template type<Model>;
  static_assert(sizeof(InstanceOf<System, PendulumExact<double>>) <= pendulum_bytes_per_instance);
  const System sys{Model{s.mass, s.length, s.gravity}};
  const std::vector<double> z = initial_state(s);
  const typename Model::State z0{{z[0], z[1], z[2], z[3]}};
  return with_method<System>(s.method, rp, [&](const auto& method) {
    EnsembleResult r = run_cpu_ensemble<System, std::decay_t<decltype(method)>, PendulumExact<double>>(sys, method, rp, z0, spec);
    r.reference_kind = "closed form in Jacobi elliptic functions";
    r.state_names = {"x", "y", "px", "py"};
    return r;
  });
}

}  // namespace chens
