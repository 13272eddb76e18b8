#include <chens/reference/numerical.hpp>

#include "dispatch/chain_model.hpp"
#include "dispatch/methods.hpp"
#include "ensemble_kernel.cuh"
#include "ensemble_launchers.hpp"

namespace chens {

EnsembleResult run_chain_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  constexpr int N = cuda_chain_atoms;
  using Model = Chain<double, N>;
  const Model model = chain_model<N>(s);
  const typename Model::State z0 = chain_initial<N>(s);
  return with_chain_formulation(s.formulation, model, [&](const auto& sys) {
    return with_method<std::decay_t<decltype(sys)>>(s.method, rp, [&](const auto& method) {
      EnsembleResult r = cuda::run_cuda_ensemble<std::decay_t<decltype(sys)>, std::decay_t<decltype(method)>,
                                                 NumericalReference<Model>>(sys, method, rp, z0, spec);
      r.reference_kind = numerical_reference_kind(rp);
      r.state_names = chain_state_names(N);
      return r;
    });
  });
}

}  // namespace chens
