// The CPU twin of cuda_run_pendulum_instances (kernels/pendulum_kernels.hpp).
#include <chens/reference/pendulum_exact.hpp>

#include "backends/cpu/cpu_instances.hpp"
#include "dispatch/methods.hpp"

namespace chens {

PerInstanceResult cpu_run_pendulum_instances(const Study& s, const RunParams<double>& rp, std::uint64_t n) {
  const Pendulum<double> model{s.mass, s.length, s.gravity};
  const std::vector<double> z = initial_state(s);
  const Pendulum<double>::State z0{{z[0], z[1], z[2], z[3]}};
  return with_pendulum_formulation(s.formulation, model, [&](const auto& sys) {
    return with_method<std::decay_t<decltype(sys)>>(s.method, rp, [&](const auto& method) {
      return cpu_run_instances<PendulumExact<double>>(sys, method, rp, z0, s.perturbation, s.seed, n);
    });
  });
}

}  // namespace chens
