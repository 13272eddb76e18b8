#include "pendulum_kernels.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include <chens/ensemble/instance.hpp>
#include <chens/models/pendulum.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "dispatch/methods.hpp"
#include "study/study.hpp"

namespace chens {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <class System, class Method>
__global__ void integrate_instances(System sys, Method method, RunParams<double> rp, typename System::State z0,
                                    double perturbation, std::uint64_t seed, std::uint64_t n, double* final_state,
                                    double* metrics, int* lost, Counters* counters) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  using Ref = PendulumExact<double>;
  auto in = make_instance<System, Ref>(sys, z0, perturbation, seed, i, rp);
  Metrics<double> m;
  for (index_t k = 1; k <= rp.samples; ++k) advance_to_sample(sys, method, rp, in, k);
  const bool ok = measure_instance(sys, rp, in, rp.samples, m);
  for (int c = 0; c < 4; ++c) final_state[i * 4 + c] = in.z[c];
  for (int j = 0; j < metric_count; ++j) metrics[i * metric_count + j] = ok ? m.v[j] : 0.0;
  lost[i] = in.lost;
  counters[i] = in.c;
}

template <template <class> class Formulation>
PerInstanceResult run(const Study& s, const RunParams<double>& rp, std::uint64_t n) {
  using Model = Pendulum<double>;
  using System = Formulation<Model>;
  const System sys{Model{s.mass, s.length, s.gravity}};
  const typename Model::State z0{{s.initial[0], s.initial[1], s.initial[2], s.initial[3]}};
  PerInstanceResult r;
  r.final_state.resize(n * 4);
  r.metrics.resize(n * metric_count);
  r.lost.resize(n);
  r.counters.resize(n);
  double *d_state = nullptr, *d_metrics = nullptr;
  int* d_lost = nullptr;
  Counters* d_counters = nullptr;
  check(cudaMalloc(&d_state, n * 4 * sizeof(double)), "cudaMalloc");
  check(cudaMalloc(&d_metrics, n * metric_count * sizeof(double)), "cudaMalloc");
  check(cudaMalloc(&d_lost, n * sizeof(int)), "cudaMalloc");
  check(cudaMalloc(&d_counters, n * sizeof(Counters)), "cudaMalloc");
  const unsigned threads = 128;
  const unsigned blocks = static_cast<unsigned>((n + threads - 1) / threads);
  with_method(s.method, rp, [&](const auto& method) {
    integrate_instances<<<blocks, threads>>>(sys, method, rp, z0, s.perturbation, s.seed, n, d_state, d_metrics,
                                             d_lost, d_counters);
    return 0;
  });
  check(cudaGetLastError(), "kernel launch");
  check(cudaDeviceSynchronize(), "kernel");
  check(cudaMemcpy(r.final_state.data(), d_state, n * 4 * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(r.metrics.data(), d_metrics, n * metric_count * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(r.lost.data(), d_lost, n * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(r.counters.data(), d_counters, n * sizeof(Counters), cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaFree(d_state);
  cudaFree(d_metrics);
  cudaFree(d_lost);
  cudaFree(d_counters);
  return r;
}

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

PerInstanceResult cuda_run_pendulum_instances(const Study& s, const RunParams<double>& rp, std::uint64_t size) {
  const CudaDeviceInfo dev = cuda_device_info();
  if (!dev.available) throw std::runtime_error(dev.description);
  switch (s.formulation) {
    case FormulationId::naive: return run<Naive>(s, rp, size);
    case FormulationId::total: return run<TotalHamiltonian>(s, rp, size);
    case FormulationId::extended: return run<ExtendedHamiltonian>(s, rp, size);
    case FormulationId::dirac: return run<HamiltonDirac>(s, rp, size);
    case FormulationId::impetus: return run<ImpetusStriction>(s, rp, size);
    case FormulationId::impetus_modified: return run<ImpetusModified>(s, rp, size);
  }
  throw std::runtime_error("unknown formulation");
}

}  // namespace chens
