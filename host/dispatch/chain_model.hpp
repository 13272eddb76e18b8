// A chain model and its formulations from a study: shared by the CPU dispatch and the
// CUDA launchers (C++17-clean, no OpenMP: nvcc compiles it).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <chens/formulations/constrained.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/models/chain.hpp>

#include "study/study.hpp"

namespace chens {

// summary.json's reference.kind for chains.
inline std::string numerical_reference_kind(const RunParams<double>& rp) {
  char tol[32];  // as a number: std::to_string printed 1e-12 as 0.000000 (issue 17)
  std::snprintf(tol, sizeof tol, "%.3g", rp.reference_tol);
  return std::string("numerical: DOPRI5 on the Hamilton-Dirac equations, rtol = atol = ") + tol;
}

template <int N>
Chain<double, N> chain_model(const Study& s) {
  Chain<double, N> c = Chain<double, N>::uniform(s.bond_length, s.lj_epsilon, s.mass);
  const std::vector<double> w = chain_inverse_masses(s);
  for (int i = 0; i < N; ++i) c.w[i] = w[static_cast<std::size_t>(i)];
  return c;
}

// The study's initial state (model.initial or the default data) as a chain state.
template <int N>
typename Chain<double, N>::State chain_initial(const Study& s) {
  const std::vector<double> z = initial_state(s);
  typename Chain<double, N>::State z0;
  for (int c = 0; c < 4 * N; ++c) z0[c] = z[static_cast<std::size_t>(c)];
  return z0;
}

// Calls f with the chain formulation of `id` bound to `model` (naive, dirac, impetus or
// constrained; resolve() has refused the others).
template <class Model, class F>
decltype(auto) with_chain_formulation(FormulationId id, const Model& model, F&& f) {
  switch (id) {
    case FormulationId::naive: return f(Naive<Model>{model});
    case FormulationId::dirac: return f(HamiltonDirac<Model>{model});
    case FormulationId::impetus: return f(ImpetusStriction<Model>{model});
    case FormulationId::constrained: return f(Constrained<Model>{model});
    default: break;
  }
  throw StudyError(std::string("integrator.formulation = \"") + formulation_name(id) + "\" is not available for chains");
}

}  // namespace chens
