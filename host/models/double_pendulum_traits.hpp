// The double pendulum's ModelTraits (dispatch/model_traits.hpp): what its system units need beyond
// its header. host/models/double_pendulum.cpp describes it to the study layer; chens_model() in the
// systems list registers both (cmake/ChensSystems.cmake). C++17-clean: nvcc compiles it.
#pragma once

#include <string>

#include <chens/ensemble/instance.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/geometry/tangent_system.hpp>
#include <chens/models/double_pendulum.hpp>
#include <chens/reference/numerical.hpp>

#include "dispatch/model_traits.hpp"

namespace chens {

// The planar double pendulum (docs/adding-a-model.md): no closed form, so a tight DOPRI5 run
// of the Hamilton-Dirac equations is the reference (output.reference = "auto"), as for chains.
template <>
struct ModelTraits<DoublePendulum<double>> {
  static constexpr ModelKind kind = ModelKind::double_pendulum;
  static bool matches(const ModelKey& k) { return k.kind == kind && precision_matches<double>(k); }
  // As study_model.cpp's double_pendulum_model(study).
  static DoublePendulum<double> make(const SystemArgs& a) {
    return DoublePendulum<double>{a.masses[0], a.masses[1], a.lengths[0], a.lengths[1], a[ParameterId::gravity]};
  }
  using Reference = NumericalReference<DoublePendulum<double>>;
  static std::string reference_kind(const RunParams<double>& rp) { return numerical_reference_kind(rp); }
  // With output.lyapunov an instance also carries two tangent vectors (geometry/tangent_system.hpp).
  static constexpr std::size_t bytes_per_instance(bool tangents) {
    using Dirac = HamiltonDirac<DoublePendulum<double>>;
    using Reference = NumericalReference<DoublePendulum<double>>;
    return tangents ? sizeof(InstanceOf<TangentSystem<Dirac>, Reference>) : sizeof(InstanceOf<Dirac, Reference>);
  }
};

}  // namespace chens
