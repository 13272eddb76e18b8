// The CPU twin of cuda_run_chain_instances (kernels/chain_kernels.hpp).
#include <chens/models/chain.hpp>
#include <chens/reference/numerical.hpp>

#include "backends/cpu/cpu_instances.hpp"
#include "dispatch/chain_model.hpp"
#include "dispatch/methods.hpp"

namespace chens {

PerInstanceResult cpu_run_chain_instances(const Study& s, const RunParams<double>& rp, std::uint64_t n) {
  constexpr int N = 7;  // the size the CUDA kernels exist for (chain_kernels.hpp)
  if (s.atoms != N) throw StudyError("cpu_run_chain_instances: chains of 7 atoms only");
  using Model = Chain<double, N>;
  const Model model = chain_model<N>(s);
  const typename Model::State z0 = chain_initial<N>(s);
  return with_chain_formulation(s.formulation, model, [&](const auto& sys) {
    return with_method<std::decay_t<decltype(sys)>>(s.method, rp, [&](const auto& method) {
      return cpu_run_instances<NumericalReference<Model>>(sys, method, rp, z0, s.perturbation, s.seed, n);
    });
  });
}

}  // namespace chens
