#include "pendulum_kernels.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include <chens/ensemble/instance.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "dispatch/methods.hpp"
#include "instance_kernel.cuh"
#include "study/study.hpp"

namespace chens {

using cuda::check;

PerInstanceResult cuda_run_pendulum_instances(const Study& s, const RunParams<double>& rp, std::uint64_t n) {
  const CudaDeviceInfo dev = cuda_device_info();
  if (!dev.available) throw std::runtime_error(dev.description);
  const Pendulum<double> model{s.mass, s.length, s.gravity};
  const std::vector<double> z = initial_state(s);
  const Pendulum<double>::State z0{{z[0], z[1], z[2], z[3]}};
  return with_pendulum_formulation(s.formulation, model, [&](const auto& sys) {
    return with_method<std::decay_t<decltype(sys)>>(s.method, rp, [&](const auto& method) {
      return cuda::launch_instances<PendulumExact<double>>(sys, method, rp, z0, s.perturbation, s.seed, n);
    });
  });
}

}  // namespace chens
