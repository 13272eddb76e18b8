// Float runs (integrator.precision = "float"; docs/numerics.md, "Float runs"): the models,
// formulations and methods with float instantiations, shared by the CPU dispatch
// (float_dispatch.cpp) and the CUDA launchers (kernels/ensemble_float_*.cu).
// C++17-clean: nvcc compiles it. The per-instance code is the double code instantiated with
// Real = float; diagnostics and the pendulum's closed-form reference stay in double
// (diagnostics/metrics.hpp).
#pragma once

#include <string>
#include <type_traits>

#include <chens/diagnostics/metrics.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/linalg/vec.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"
#include "dispatch/chain_model.hpp"
#include "dispatch/methods.hpp"

namespace chens {

template <class T>
struct TypeTag {
  using type = T;
};

// Calls f with the explicit fixed-step method of id (resolve() has refused the others).
template <class F>
decltype(auto) with_explicit_method(MethodId id, F&& f) {
  switch (id) {
    case MethodId::euler: return f(ExplicitRk<EulerTableau>{});
    case MethodId::rk2: return f(ExplicitRk<Rk2Tableau>{});
    case MethodId::rk4: return f(ExplicitRk<Rk4Tableau>{});
    default: break;
  }
  throw StudyError(std::string("integrator.method = \"") + method_name(id) + "\" has no float instantiation");
}

// Calls f(sys, z0, TypeTag<Reference>) for a float pendulum study: the naive or the
// Hamilton-Dirac equations (the throughput studies' formulations; each float formulation
// costs build time, docs/performance.md), the closed-form reference in double.
template <class F>
decltype(auto) with_float_pendulum(const Study& s, F&& f) {
  using Model = Pendulum<float>;
  const Model model{static_cast<float>(s.mass), static_cast<float>(s.length), static_cast<float>(s.gravity)};
  const std::vector<double> z = initial_state(s);
  const Model::State z0{{static_cast<float>(z[0]), static_cast<float>(z[1]), static_cast<float>(z[2]),
                         static_cast<float>(z[3])}};
  using Ref = TypeTag<PendulumExact<double>>;
  if (s.formulation == FormulationId::naive) return f(Naive<Model>{model}, z0, Ref{});
  if (s.formulation == FormulationId::dirac) return f(HamiltonDirac<Model>{model}, z0, Ref{});
  throw StudyError(std::string("integrator.formulation = \"") + formulation_name(s.formulation) +
                   "\" has no float instantiation");
}

// Calls f(sys, z0, TypeTag<Reference>) for a float chain study of float_chain_atoms atoms:
// naive or dirac, no reference.
template <class F>
decltype(auto) with_float_chain(const Study& s, F&& f) {
  constexpr int N = float_chain_atoms;
  using Model = Chain<float, N>;
  const Model model = chain_model<N>(s).template rebound<float>();
  const typename Model::State z0 = vec_cast<float>(chain_initial<N>(s));
  using Ref = TypeTag<NoReference<float, Model::state_size>>;
  if (s.formulation == FormulationId::naive) return f(Naive<Model>{model}, z0, Ref{});
  if (s.formulation == FormulationId::dirac) return f(HamiltonDirac<Model>{model}, z0, Ref{});
  throw StudyError(std::string("integrator.formulation = \"") + formulation_name(s.formulation) +
                   "\" has no float instantiation for chains");
}

// What summary.json says of a float run's reference and state.
inline void label_float_result(EnsembleResult& r, const Study& s) {
  if (s.model_kind == "chain") {
    r.reference_kind = "none";
    r.state_names = chain_state_names(static_cast<int>(s.atoms));
  } else {
    r.reference_kind = "closed form in Jacobi elliptic functions (double, at the float run's step times)";
    r.state_names = {"x", "y", "px", "py"};
  }
}

// A float study on one backend: backend(sys, method, rp, z0, spec, TypeTag<Reference>) runs
// the ensemble (run_cpu_ensemble or cuda::run_cuda_ensemble); one model per call, so that
// each model's instantiations live in their own translation unit.
template <bool IsChain, class Backend>
EnsembleResult run_float_study(const Study& s, const RunParams<double>& rp_double, const EnsembleSpec& spec,
                               Backend&& backend) {
  const RunParams<float> rp = run_params_as<float>(rp_double);
  auto run = [&](const auto& sys, const auto& z0, auto ref) {
    return with_explicit_method(s.method, [&](const auto& method) {
      EnsembleResult r = backend(sys, method, rp, z0, spec, ref);
      label_float_result(r, s);
      return r;
    });
  };
  if constexpr (IsChain) {
    return with_float_chain(s, run);
  } else {
    return with_float_pendulum(s, run);
  }
}

}  // namespace chens
