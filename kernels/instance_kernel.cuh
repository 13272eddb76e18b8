// Shared by the CUDA launchers: error checks, a device buffer, and the one kernel that
// runs the per-instance driver of include/chens/ensemble/instance.hpp (run_instance_to_end)
// for one instance per thread, for any (System, Method, Reference).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/instance.hpp>

#include "backends/per_instance.hpp"

namespace chens::cuda {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <class System, class Method, class Reference>
__global__ void run_instances(System sys, Method method, RunParams<double> rp, typename System::State z0,
                              double perturbation, std::uint64_t seed, std::uint64_t n, double* final_state,
                              double* metrics, int* lost, Counters* counters) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  constexpr int S = System::State::size;
  run_instance_to_end<System, Method, Reference>(sys, method, rp, z0, perturbation, seed, i, final_state + i * S,
                                                 metrics + i * metric_count, lost + i, counters + i);
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

// Runs n instances of (sys, method) with reference type Reference; one thread each.
template <class Reference, class System, class Method>
PerInstanceResult launch_instances(const System& sys, const Method& method, const RunParams<double>& rp,
                                   const typename System::State& z0, double perturbation, std::uint64_t seed,
                                   std::uint64_t n) {
  constexpr int S = System::State::size;
  PerInstanceResult r = PerInstanceResult::sized(n, S);
  DeviceBuffer<double> d_state(n * S), d_metrics(n * metric_count);
  DeviceBuffer<int> d_lost(n);
  DeviceBuffer<Counters> d_counters(n);
  // Large per-thread states (chains) spill to local memory: fewer threads per block
  // keep more of it in L1.
  const unsigned threads = S <= 16 ? 128 : 64;
  const unsigned blocks = static_cast<unsigned>((n + threads - 1) / threads);
  run_instances<System, Method, Reference><<<blocks, threads>>>(sys, method, rp, z0, perturbation, seed, n, d_state.ptr,
                                                                d_metrics.ptr, d_lost.ptr, d_counters.ptr);
  check(cudaGetLastError(), "kernel launch");
  check(cudaDeviceSynchronize(), "kernel");
  d_state.to_host(r.final_state);
  d_metrics.to_host(r.metrics);
  d_lost.to_host(r.lost);
  d_counters.to_host(r.counters);
  return r;
}

}  // namespace chens::cuda
