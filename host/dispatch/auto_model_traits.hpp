// ModelTraits of the user models (models/auto_model.hpp; docs/custom-models.md): included by
// the units chens_add_model generates (cmake/custom_model_unit.in, custom_model_registration.in)
// and by nothing else, so that the built-in units do not depend on auto_model.hpp.
// C++17-clean: nvcc compiles it.
#pragma once

#include <string>

#include <chens/ensemble/instance.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/geometry/tangent_system.hpp>
#include <chens/models/auto_model.hpp>
#include <chens/reference/numerical.hpp>

#include "dispatch/model_traits.hpp"

namespace chens {

// A user model from V and phi (models/auto_model.hpp; registered by chens_add_model,
// dispatch/custom_models.hpp): model.kind is its spec's name, its parameters the study's
// Study::parameters (defaults filled in by the parser), as SystemArgs::custom. No closed form: a tight DOPRI5 run of
// the Hamilton-Dirac equations is the reference (output.reference = "auto"), as for chains.
template <class Spec>
struct ModelTraits<AutoModel<Spec, double>> {
  using Model = AutoModel<Spec, double>;
  static constexpr ModelKind kind = ModelKind::custom;
  static bool matches(const ModelKey& k) {
    return k.kind == kind && k.custom_name == Spec::name && precision_matches<double>(k);
  }
  static Model make(const SystemArgs& a) {
    typename Model::Params k = Model::Params::zero();
    for (int i = 0; i < Model::parameter_count && i < static_cast<int>(a.custom.size()); ++i)
      k[i] = a.custom[static_cast<std::size_t>(i)];
    return Model::make(k);
  }
  using Reference = NumericalReference<Model>;
  static std::string reference_kind(const RunParams<double>& rp) { return numerical_reference_kind(rp); }
  // With tangents (output.lyapunov; a model from a header, compiled on first use): the tangent
  // system's instance, its state over nested dual numbers' values (geometry/tangent_system.hpp).
  static constexpr std::size_t bytes_per_instance(bool tangents) {
    using Dirac = HamiltonDirac<Model>;
    using Reference = NumericalReference<Model>;
    return tangents ? sizeof(InstanceOf<TangentSystem<Dirac>, Reference>) : sizeof(InstanceOf<Dirac, Reference>);
  }
};

}  // namespace chens
