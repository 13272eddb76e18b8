#include "chain_kernels.hpp"

#include <stdexcept>
#include <string>

#include <chens/models/chain.hpp>
#include <chens/reference/numerical.hpp>

#include "dispatch/chain_model.hpp"
#include "dispatch/methods.hpp"
#include "instance_kernel.cuh"
#include "pendulum_kernels.hpp"
#include "study/study.hpp"

namespace chens {

PerInstanceResult cuda_run_chain_instances(const Study& s, const RunParams<double>& rp, std::uint64_t n) {
  const CudaDeviceInfo dev = cuda_device_info();
  if (!dev.available) throw std::runtime_error(dev.description);
  constexpr int N = cuda_chain_atoms;
  if (s.atoms != N) throw std::runtime_error("CUDA chain kernels exist for " + std::to_string(N) + " atoms only");
  using Model = Chain<double, N>;
  const Model model = chain_model<N>(s);
  const typename Model::State z0 = chain_initial<N>(s);
  return with_chain_formulation(s.formulation, model, [&](const auto& sys) {
    return with_method<std::decay_t<decltype(sys)>>(s.method, rp, [&](const auto& method) {
      return cuda::launch_instances<NumericalReference<Model>>(sys, method, rp, z0, s.perturbation, s.seed, n);
    });
  });
}

}  // namespace chens
