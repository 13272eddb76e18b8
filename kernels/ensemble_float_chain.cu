// CUDA float runs of the chain (host/dispatch/float_runs.hpp): the same kernels as the double
// runs (ensemble_kernel.cuh) with Real = float.
#include "dispatch/float_runs.hpp"
#include "ensemble_kernel.cuh"
#include "ensemble_launchers.hpp"

namespace chens {

EnsembleResult run_float_chain_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  return run_float_study<true>(s, rp, spec, [](const auto& sys, const auto& method, const auto& rpf, const auto& z0,
                                                 const EnsembleSpec& sp, auto ref) {
    return cuda::run_cuda_ensemble<std::decay_t<decltype(sys)>, std::decay_t<decltype(method)>,
                                   typename decltype(ref)::type>(sys, method, rpf, z0, sp);
  });
}

}  // namespace chens
