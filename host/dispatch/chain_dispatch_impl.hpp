#pragma once

#include <chens/models/chain.hpp>
#include <chens/reference/numerical.hpp>

#include "dispatch/chain_dispatch.hpp"
#include "dispatch/chain_model.hpp"
#include "dispatch/methods.hpp"

namespace chens {

template <int N, FormulationId F>
EnsembleResult run_chain_cpu_formulation(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  using Model = Chain<double, N>;
  using System = typename FormulationOf<F>::template type<Model>;
  const System sys{chain_model<N>(s)};
  const typename Model::State z0 = chain_initial<N>(s);
  return with_method<System>(s.method, rp, [&](const auto& method) {
    EnsembleResult r =
        run_cpu_ensemble<System, std::decay_t<decltype(method)>, NumericalReference<Model>>(sys, method, rp, z0, spec);
    r.reference_kind = numerical_reference_kind(rp);
    r.state_names = chain_state_names(N);
    return r;
  });
}

}  // namespace chens
