// The one body every entry of the systems list is generated from (cmake/ChensSystems.cmake,
// host/dispatch/system_unit.in): one model in one formulation, plain or with tangents
// (output.wedge), every method the formulation takes, on one backend. The same template is
// compiled by g++ for the CPU and by nvcc for the GPU. It is given SystemArgs, never the
// study: a system unit includes nothing of host/study, host/cli, host/output or host/mpi
// (issue 42). C++17-clean.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>

#include <chens/concepts.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/geometry/tangent_system.hpp>

#include "backends/backend.hpp"
#include "backends/engine_adapter.hpp"
#include "dispatch/methods.hpp"
#include "dispatch/model_traits.hpp"
#include "dispatch/system_list.hpp"

namespace chens {

// An upper bound of the instance of Model's spectrum system (output.lyapunov_spectrum;
// geometry/tangent_system.hpp): K = 2(n - m) <= 2n tangents, so the one with 2n bounds every
// formulation's (whose states are (q, p)-sized).
template <class Model>
constexpr std::size_t spectrum_bytes_per_instance() {
  using Dirac = HamiltonDirac<Model>;
  return sizeof(InstanceOf<TangentSystem<Dirac, Model::State::size>, typename ModelTraits<Model>::Reference>);
}

// The engine of the study's system and method, instantiated for the methods of Methods
// (dispatch/method_id.hpp): every method the formulation takes but the first-use ones (the
// systems list's units, listed_methods),
// the run's alone (a unit compiled on first use, dispatch/jit_systems.cpp), or a user
// model's METHODS (cmake/ChensAddModel.cmake): the same code, fewer instantiations.
// Spectrum: the tangents of output.lyapunov_spectrum (with Tangents; compiled on first use
// only, dispatch/jit_systems.cpp). ReferenceMethod: the numerical reference's pair
// (output.reference_method; DOP853 and Vern9 compiled on first use only). Their defaults, false
// and DOPRI5, are system_list.hpp's declaration's.
template <class Backend, class Model, FormulationId F, bool Tangents, MethodMask Methods, bool Spectrum,
          MethodId ReferenceMethod>
std::unique_ptr<Engine> make_engine_for(const SystemArgs& a, const EnsembleSpec& spec) {
  using Traits = ModelTraits<Model>;
  using Real = typename Model::Real;
  using Reference = ReferenceBy<typename Traits::Reference, ReferenceMethod>;
  const RunParams<Real> rp = run_params_as<Real>(a.rp);
  const auto sys = make_formulation<F>(Traits::make(a), a);
  const typename Model::State z0 = initial_of<Model>(a);
  using System = std::decay_t<decltype(sys)>;
  return with_method<System, Methods>(a.method, rp, [&](const auto& method) {
#if defined(__cpp_concepts) && __cpp_concepts >= 201907L
    static_assert(ModelSystem<System> && OneStepMethod<std::decay_t<decltype(method)>, System>);
#endif
    return with_tangents_if<Tangents, Spectrum>(sys, method, [&](const auto& run_sys, const auto& run_method) {
      using RunSystem = std::decay_t<decltype(run_sys)>;
      static_assert(sizeof(InstanceOf<RunSystem, Reference>) <=
                        (Spectrum ? spectrum_bytes_per_instance<Model>() : Traits::bytes_per_instance(Tangents)),
                    "ModelTraits::bytes_per_instance is an upper bound of the instances' size");
      // (a pair other than DOPRI5 is a numerical reference's: resolve() refuses it elsewhere)
      return make_backend_engine<Backend, RunSystem, std::decay_t<decltype(run_method)>, Reference>(
          run_sys, run_method, rp, z0, spec,
          ReferenceMethod == MethodId::dopri5 ? Traits::reference_kind(a.rp)
                                              : numerical_reference_kind(a.rp, ReferenceMethod));
    });
  });
}

template <class Backend, class Model, FormulationId F, bool Tangents>
std::unique_ptr<Engine> make_engine(const SystemArgs& a, const EnsembleSpec& spec) {
  return make_engine_for<Backend, Model, F, Tangents, listed_methods>(a, spec);
}

}  // namespace chens
