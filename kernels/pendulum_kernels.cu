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

CudaDeviceInfo cuda_device_info() {
  CudaDeviceInfo info;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    info.description = std::string("no usable CUDA device: cudaGetDeviceCount returned ") + std::to_string(int(e)) +
                       " (" + cudaGetErrorString(e) + ")";
    return info;
  }
  if (count == 0) {
    info.description = "no CUDA device found";
    return info;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  info.available = true;
  info.description = std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ")";
  return info;
}

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
