// What chens needs to know of a model beyond its per-instance code (issue 18): one traits
// specialisation per model, keyed by the model's type. A model is its header in
// include/chens/models/, an entry here, and a line in the systems list (CMakeLists.txt;
// docs/adding-a-model.md). Each traits entry gives
//   kind                     its ModelKind (model.kind)
//   matches(key)             whether a study of that ModelKey (study.hpp's model_key: kind,
//                            precision, size) runs this instantiation
//   make(args)               the model from the study's [model] keys, as SystemArgs carries
//                            them (dispatch/system_args.hpp; study_model.cpp's system_args)
//   Reference                what integration_error measures against (reference/)
//   reference_kind(rp)       summary.json's words for it
//   bytes_per_instance(t)    host memory an instance needs at most, with tangents (t) or not
//   set_parameter(m, p, v)   (models with [parameters]) set parameter p to v, as make() would
//                            from the study's key: an instance with the value v is the single
//                            run with that key set to v, bit for bit
//   length_parameter, length_of(m)   the parameter that sizes the configuration and its value:
//                            an instance's nominal positions are scaled by its own over the study's
// The initial state is the study's (model.initial or the model's default, initial_state())
// for every model, carried by SystemArgs; the physical state's component names are
// physical_state_names(study) (study/study_model.cpp), which resolve() needs for sizes the
// build may not have. User models (AutoModel<Spec>) have theirs in auto_model_traits.hpp,
// which only their units include. Nothing of host/study is included here: system units
// include this header (issue 42). C++17-clean: nvcc compiles it.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include <chens/ensemble/instance.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/models/chain.hpp>
#include <chens/models/double_pendulum.hpp>
#include <chens/models/pendulum.hpp>
#include <chens/models/penalty_pendulum.hpp>
#include <chens/reference/numerical.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "dispatch/system_args.hpp"

namespace chens {

template <class Model>
struct ModelTraits;

// Whether the key asks for Real's precision (integrator.precision).
template <class Real>
bool precision_matches(const ModelKey& k) {
  return k.single == std::is_same_v<Real, float>;
}

// The study's initial state (model.initial or the model's default) in the model's variables.
template <class Model>
typename Model::State initial_of(const SystemArgs& a) {
  const std::vector<double>& z = a.initial;
  typename Model::State z0;
  for (int c = 0; c < Model::state_size; ++c) z0[c] = static_cast<typename Model::Real>(z[static_cast<std::size_t>(c)]);
  return z0;
}

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
    return std::is_same_v<Real, float>
               ? "closed form in Jacobi elliptic functions (double, at the float run's step times)"
               : "closed form in Jacobi elliptic functions";
  }
  // With output.wedge an instance also carries two tangent vectors (geometry/wedge.hpp).
  static constexpr std::size_t bytes_per_instance(bool tangents) { return tangents ? 576 : 448; }
  static void set_parameter(Pendulum<Real>& m, ParameterId p, double v) {
    if (p == ParameterId::mass) m.m = static_cast<Real>(v);
    if (p == ParameterId::length) m.l = static_cast<Real>(v);
    if (p == ParameterId::gravity) m.g = static_cast<Real>(v);
  }
  static constexpr ParameterId length_parameter = ParameterId::length;
  static double length_of(const Pendulum<Real>& m) { return static_cast<double>(m.l); }
};

// The penalty pendulum (003): the rigid pendulum's limit mu -> infinity is its reference.
template <>
struct ModelTraits<PenaltyPendulum<double>> {
  static constexpr ModelKind kind = ModelKind::penalty_pendulum;
  static bool matches(const ModelKey& k) { return k.kind == kind && precision_matches<double>(k); }
  // As study_model.cpp's penalty_model(study).
  static PenaltyPendulum<double> make(const SystemArgs& a) {
    return PenaltyPendulum<double>::make(a[ParameterId::mass], a[ParameterId::length], a[ParameterId::gravity],
                                         a[ParameterId::penalty], a.penalty_g1 ? PenaltyConstraint::g1 : PenaltyConstraint::g);
  }
  // integration_error measures the distance to the rigid pendulum, which is the mu -> infinity
  // limit for tangential initial velocities (003 §3).
  using Reference = PendulumExact<double>;
  static std::string reference_kind(const RunParams<double>&) {
    return "constrained pendulum (closed form in Jacobi elliptic functions) from the initial data projected onto the "
           "constraint manifold";
  }
  static constexpr std::size_t bytes_per_instance(bool tangents) { return ModelTraits<Pendulum<double>>::bytes_per_instance(tangents); }
  static void set_parameter(PenaltyPendulum<double>& m, ParameterId p, double v) {
    ModelTraits<Pendulum<double>>::set_parameter(m, p, v);
    if (p == ParameterId::penalty) m.mu = v;
  }
  static constexpr ParameterId length_parameter = ParameterId::length;
  static double length_of(const PenaltyPendulum<double>& m) { return m.l; }
};

// summary.json's reference.kind for chains in double.
inline std::string numerical_reference_kind(const RunParams<double>& rp) {
  char tol[32];  // as a number: std::to_string printed 1e-12 as 0.000000 (issue 17)
  std::snprintf(tol, sizeof tol, "%.3g", rp.reference_tol);
  return std::string("numerical: DOPRI5 on the Hamilton-Dirac equations, rtol = atol = ") + tol;
}

// Chains of N atoms (002 §7): every size of the systems list is its own instantiation. In
// double a tight DOPRI5 run is the reference; float runs have none (the reference's 1e-12
// tolerance is below float's resolution).
template <class Real, int N>
struct ModelTraits<Chain<Real, N>> {
  static constexpr ModelKind kind = ModelKind::chain;
  static bool matches(const ModelKey& k) { return k.kind == kind && k.atoms == N && precision_matches<Real>(k); }
  static Chain<Real, N> make(const SystemArgs& a) {
    Chain<double, N> c = Chain<double, N>::uniform(a[ParameterId::bond_length], a[ParameterId::lj_epsilon], a[ParameterId::mass]);
    for (int i = 0; i < N; ++i) c.w[i] = a.inverse_masses[static_cast<std::size_t>(i)];
    if constexpr (std::is_same_v<Real, double>) {
      return c;
    } else {
      return c.template rebound<Real>();
    }
  }
  using Reference = std::conditional_t<std::is_same_v<Real, double>, NumericalReference<Chain<Real, N>>,
                                       NoReference<Real, Chain<Real, N>::state_size>>;
  static std::string reference_kind(const RunParams<double>& rp) {
    return std::is_same_v<Real, double> ? numerical_reference_kind(rp) : std::string("none");
  }
  static constexpr std::size_t bytes_per_instance(bool) {
    return sizeof(InstanceOf<HamiltonDirac<Chain<double, N>>, NumericalReference<Chain<double, N>>>);
  }
  // As make(): the inverse masses and lengths in double, then in Real.
  static void set_parameter(Chain<Real, N>& c, ParameterId p, double v) {
    if (p == ParameterId::mass)
      for (int i = 0; i < N; ++i) c.w[i] = static_cast<Real>(1.0 / v);
    if (p == ParameterId::bond_length) c.L = static_cast<Real>(v);
    if (p == ParameterId::lj_epsilon) c.eps = static_cast<Real>(v);
  }
  static constexpr ParameterId length_parameter = ParameterId::bond_length;
  static double length_of(const Chain<Real, N>& c) { return static_cast<double>(c.L); }
};

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
  static constexpr std::size_t bytes_per_instance(bool) {
    return sizeof(InstanceOf<HamiltonDirac<DoublePendulum<double>>, NumericalReference<DoublePendulum<double>>>);
  }
};

}  // namespace chens
