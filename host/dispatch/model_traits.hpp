// What chens needs to know of a model beyond its per-instance code (issues 18 and 42): one
// ModelTraits specialisation per model, keyed by the model's type, in the model's own
// host/models/<model>_traits.hpp (registered by chens_model() in the systems list,
// cmake/ChensSystems.cmake; docs/adding-a-model.md); this header has the primary template and
// what the entries share. Each traits entry gives
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
// The initial state is the study's (model.initial or the model's default) for every model,
// carried by SystemArgs. A system unit includes its own model's traits alone (nothing of
// another model's header: host/dispatch/system_unit.in); the dispatch over every model
// includes dispatch/all_model_traits.hpp (generated). User models (AutoModel<Spec>) have
// theirs in auto_model_traits.hpp, which only their units include. Nothing of host/study is
// included here (issue 42). C++17-clean: nvcc compiles it.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

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

// summary.json's reference.kind for a numerical reference (chains in double, the double pendulum)
// integrated by the pair `pair` (output.reference_method).
inline std::string numerical_reference_kind(const RunParams<double>& rp, MethodId pair = MethodId::dopri5) {
  char tol[32];  // as a number: std::to_string printed 1e-12 as 0.000000 (issue 17)
  std::snprintf(tol, sizeof tol, "%.3g", rp.reference_tol);
  const char* name = pair == MethodId::dop853 ? "DOP853" : pair == MethodId::vern9 ? "Vern9" : "DOPRI5";
  return std::string("numerical: ") + name + " on the Hamilton-Dirac equations, rtol = atol = " + tol;
}

}  // namespace chens
