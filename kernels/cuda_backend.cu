// The CUDA backend's entry points (host/backends/cuda_backend.hpp): device discovery and
// the model switch; the instantiations live in ensemble_pendulum.cu, ensemble_pendulum_wedge.cu,
// ensemble_penalty.cu and ensemble_chain.cu.
#include "backends/cuda_backend.hpp"

#include <cuda_runtime.h>

#include <string>

#include "ensemble_launchers.hpp"
#include "study/study.hpp"

namespace chens {

void cuda_select_device(int local_rank) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) cudaSetDevice(local_rank % count);
}

void cuda_initialize() {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) cudaFree(nullptr);
}

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
  const cudaError_t p = cudaGetDeviceProperties(&prop, 0);
  if (p != cudaSuccess) {
    info.description = std::string("no usable CUDA device: cudaGetDeviceProperties returned ") + cudaGetErrorString(p);
    return info;
  }
  info.available = true;
  info.description = std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ")";
  return info;
}

std::string cuda_unsupported_reason(const Study& s) {
  if (s.model_kind == "chain" && s.atoms != cuda_chain_atoms)
    return "the GPU backend has chain kernels for model.atoms = " + std::to_string(cuda_chain_atoms) + " only";
  return "";
}

EnsembleResult run_study_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  const std::string why = cuda_unsupported_reason(s);
  if (!why.empty()) throw std::runtime_error(why);
  if (s.precision == "float")
    return s.model_kind == "chain" ? run_float_chain_cuda(s, rp, spec) : run_float_pendulum_cuda(s, rp, spec);
  if (s.model_kind == "chain") return run_chain_cuda(s, rp, spec);
  if (s.model_kind == "penalty-pendulum") return run_penalty_cuda(s, rp, spec);
  return run_pendulum_cuda(s, rp, spec);
}

std::string gpu_unusable_reason(const Study& s) {
  const CudaDeviceInfo dev = cuda_device_info();
  return dev.available ? cuda_unsupported_reason(s) : dev.description;
}

}  // namespace chens
