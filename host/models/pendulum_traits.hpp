// The rigid pendulum's ModelTraits (dispatch/model_traits.hpp): what its system units need beyond
// its header. host/models/pendulum.cpp describes it to the study layer; chens_model() in the
// systems list registers both (cmake/ChensSystems.cmake). C++17-clean: nvcc compiles it.
#pragma once

#include <string>
#include <type_traits>

#include <chens/models/pendulum.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "dispatch/model_traits.hpp"

namespace chens {

// The rigid pendulum (001 §3, 002 §6), in double and (integrator.precision = "float") float.
template <class Real>
struct ModelTraits<Pendulum<Real>> {
  static constexpr ModelKind kind = ModelKind::pendulum;
  static bool matches(const ModelKey& k) { return k.kind == kind && precision_matches<Real>(k); }
  static Pendulum<Real> make(const SystemArgs& a) {
    return Pendulum<Real>{static_cast<Real>(a[ParameterId::mass]), static_cast<Real>(a[ParameterId::length]),
                          static_cast<Real>(a[ParameterId::gravity])};
  }
  // The closed form, in double at the float runs' step times too (diagnostics/metrics.hpp).
  using Reference = PendulumExact<double>;
  static std::string reference_kind(const RunParams<double>&) {
    return std::is_same_v<Real, float> ? "closed form in Jacobi elliptic functions (double, at the float run's step times)"
                                       : "closed form in Jacobi elliptic functions";
  }
  // With output.wedge or output.lyapunov an instance also carries two tangent vectors and the
  // exponent's two numbers (geometry/tangent_system.hpp). Upper bounds: make_engine.hpp asserts them.
  static constexpr std::size_t bytes_per_instance(bool tangents) { return tangents ? 576 : 448; }
  static void set_parameter(Pendulum<Real>& m, ParameterId p, double v) {
    if (p == ParameterId::mass) m.m = static_cast<Real>(v);
    if (p == ParameterId::length) m.l = static_cast<Real>(v);
    if (p == ParameterId::gravity) m.g = static_cast<Real>(v);
  }
  static constexpr ParameterId length_parameter = ParameterId::length;
  static double length_of(const Pendulum<Real>& m) { return static_cast<double>(m.l); }
};

}  // namespace chens
