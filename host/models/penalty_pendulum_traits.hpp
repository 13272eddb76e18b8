// The penalty pendulum's ModelTraits (dispatch/model_traits.hpp): what its system units need beyond
// its header. host/models/penalty_pendulum.cpp describes it to the study layer; chens_model() in the
// systems list registers both (cmake/ChensSystems.cmake). C++17-clean: nvcc compiles it.
#pragma once

#include <string>

#include <chens/models/penalty_pendulum.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "models/pendulum_traits.hpp"

namespace chens {

// The penalty pendulum (003): the rigid pendulum's limit mu -> infinity is its reference.
template <>
struct ModelTraits<PenaltyPendulum<double>> {
  static constexpr ModelKind kind = ModelKind::penalty_pendulum;
  static bool matches(const ModelKey& k) { return k.kind == kind && precision_matches<double>(k); }
  // As study_model.cpp's penalty_model(study).
  static PenaltyPendulum<double> make(const SystemArgs& a) {
    return PenaltyPendulum<double>::make(a[ParameterId::mass], a[ParameterId::length], a[ParameterId::gravity],
                                         a[ParameterId::penalty],
                                         a.penalty_g1 ? PenaltyConstraint::g1 : PenaltyConstraint::g);
  }
  // integration_error measures the distance to the rigid pendulum, which is the mu -> infinity
  // limit for tangential initial velocities (003 §3).
  using Reference = PendulumExact<double>;
  static std::string reference_kind(const RunParams<double>&) {
    return "constrained pendulum (closed form in Jacobi elliptic functions) from the initial data projected onto the "
           "constraint manifold";
  }
  static constexpr std::size_t bytes_per_instance(bool tangents) {
    return ModelTraits<Pendulum<double>>::bytes_per_instance(tangents);
  }
  static void set_parameter(PenaltyPendulum<double>& m, ParameterId p, double v) {
    ModelTraits<Pendulum<double>>::set_parameter(m, p, v);
    if (p == ParameterId::penalty) m.mu = v;
  }
  static constexpr ParameterId length_parameter = ParameterId::length;
  static double length_of(const PenaltyPendulum<double>& m) { return m.l; }
};

}  // namespace chens
