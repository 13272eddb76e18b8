// The one body every entry of the systems list is generated from (cmake/ChensSystems.cmake,
// host/dispatch/system_unit.in): one model in one formulation, plain or with tangents
// (output.wedge), every method the formulation takes, on one backend. The same template is
// compiled by g++ for the CPU and by nvcc for the GPU. C++17-clean.
#pragma once

#include <type_traits>

#include <chens/concepts.hpp>

#include "backends/backend.hpp"
#include "dispatch/methods.hpp"
#include "dispatch/model_traits.hpp"
#include "dispatch/system_list.hpp"

namespace chens {

template <class Backend, class Model, FormulationId F, bool Tangents>
EnsembleResult run_system(const Study& s, const RunParams<double>& rp_double, const EnsembleSpec& spec) {
  using Traits = ModelTraits<Model>;
  using Real = typename Model::Real;
  using Reference = typename Traits::Reference;
  const RunParams<Real> rp = run_params_as<Real>(rp_double);
  const auto sys = make_formulation<F>(Traits::make(s), s);
  const typename Model::State z0 = initial_of<Model>(s);
  using System = std::decay_t<decltype(sys)>;
  return with_method<System>(s.method, rp, [&](const auto& method) {
#if defined(__cpp_concepts) && __cpp_concepts >= 201907L
    static_assert(ModelSystem<System> && OneStepMethod<std::decay_t<decltype(method)>, System>);
#endif
    return with_tangents_if<Tangents>(sys, method, [&](const auto& run_sys, const auto& run_method) {
      using RunSystem = std::decay_t<decltype(run_sys)>;
      static_assert(sizeof(InstanceOf<RunSystem, Reference>) <= Traits::bytes_per_instance(Tangents),
                    "ModelTraits::bytes_per_instance is an upper bound of the instances' size");
      EnsembleResult r =
          run_ensemble<Backend, RunSystem, std::decay_t<decltype(run_method)>, Reference>(run_sys, run_method, rp, z0, spec);
      r.reference_kind = Traits::reference_kind(rp_double);
      return r;
    });
  });
}

}  // namespace chens
