#include <chens/reference/pendulum_exact.hpp>

#include "dispatch/methods.hpp"
#include "ensemble_kernel.cuh"
#include "ensemble_launchers.hpp"

namespace chens {

EnsembleResult run_pendulum_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  const Pendulum<double> model{s.mass, s.length, s.gravity};
  const std::vector<double> z = initial_state(s);
  const Pendulum<double>::State z0{{z[0], z[1], z[2], z[3]}};
  return with_pendulum_formulation(s.formulation, model, [&](const auto& sys) {
    return with_method<std::decay_t<decltype(sys)>>(s.method, rp, [&](const auto& method) {
      EnsembleResult r = cuda::run_cuda_ensemble<std::decay_t<decltype(sys)>, std::decay_t<decltype(method)>,
                                                 PendulumExact<double>>(sys, method, rp, z0, spec);
      r.reference_kind = "closed form in Jacobi elliptic functions";
      r.state_names = {"x", "y", "px", "py"};
      return r;
    });
  });
}

}  // namespace chens
