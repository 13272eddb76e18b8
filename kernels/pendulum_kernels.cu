#include "pendulum_kernels.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include <chens/ensemble/instance.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "dispatch/methods.hpp"
#include "study/study.hpp"

namespace chens {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <class System, class Method>
__global__ void run_instances(System sys, Method method, RunParams<double> rp, typename System::State z0,
                              double perturbation, std::uint64_t seed, std::uint64_t n, double* final_state,
                              double* metrics, int* lost, Counters* counters) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  constexpr int S = System::State::size;
  run_instance_to_end<System, Method, PendulumExact<double>>(sys, method, rp, z0, perturbation, seed, i,
                                                             final_state + i * S, metrics + i * metric_count,
                                                             lost + i, counters + i);
}

template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  explicit DeviceBuffer(std::size_t n) { check(cudaMalloc(&ptr, n * sizeof(T)), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void to_host(std::vector<T>& v) const {
    check(cudaMemcpy(v.data(), ptr, v.size() * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  }
};

}  // namespace

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
  PerInstanceResult r;
  r.final_state.resize(n * 4);
  r.metrics.resize(n * metric_count);
  r.lost.resize(n);
  r.counters.resize(n);
  DeviceBuffer<double> d_state(n * 4), d_metrics(n * metric_count);
  DeviceBuffer<int> d_lost(n);
  DeviceBuffer<Counters> d_counters(n);
  const Pendulum<double> model{s.mass, s.length, s.gravity};
  const Pendulum<double>::State z0{{s.initial[0], s.initial[1], s.initial[2], s.initial[3]}};
  const unsigned threads = 128;
  const unsigned blocks = static_cast<unsigned>((n + threads - 1) / threads);
  with_pendulum_formulation(s.formulation, model, [&](const auto& sys) {
    return with_method(s.method, rp, [&](const auto& method) {
      run_instances<<<blocks, threads>>>(sys, method, rp, z0, s.perturbation, s.seed, n, d_state.ptr,
                                         d_metrics.ptr, d_lost.ptr, d_counters.ptr);
      return 0;
    });
  });
  check(cudaGetLastError(), "kernel launch");
  check(cudaDeviceSynchronize(), "kernel");
  d_state.to_host(r.final_state);
  d_metrics.to_host(r.metrics);
  d_lost.to_host(r.lost);
  d_counters.to_host(r.counters);
  return r;
}

}  // namespace chens
