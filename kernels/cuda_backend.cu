// The CUDA backend's entry points (host/backends/cuda_backend.hpp): device discovery and
// the one run_study over the GPU's units of the systems list (dispatch/system_dispatch.hpp;
// the units are generated, cmake/ChensSystems.cmake).
#include "backends/cuda_backend.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include <chens/ensemble/chain_group_steps.hpp>

#include "dispatch/system_dispatch.hpp"
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

namespace {

// Why cudaGetDeviceCount failed, in words for a user. Its message for error 35 ("CUDA driver
// version is insufficient for CUDA runtime version") is also what a machine without any
// NVIDIA driver gets, where it reads as if a driver update would help.
std::string device_count_error(cudaError_t e) {
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  const std::string version = std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
  std::string why = cudaGetErrorString(e);
  if (e == cudaErrorInsufficientDriver)
    why = "no NVIDIA driver is loaded (no GPU here?), or it is older than the CUDA " + version +
          " runtime chens was built with";
  else if (e == cudaErrorNoDevice) why = "no CUDA-capable device";
  return "no usable CUDA device: " + why + " (cudaGetDeviceCount returned " + std::to_string(int(e)) + ", " +
         cudaGetErrorName(e) + ")";
}

}  // namespace

CudaDeviceInfo cuda_device_info() {
  CudaDeviceInfo info;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    info.description = device_count_error(e);
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

std::vector<int> cuda_chain_sizes() {
  std::vector<int> sizes;
  for_each_system<CudaBackend>([&](auto e) {
    using Model = typename decltype(e)::Model;
    if constexpr (ModelTraits<Model>::kind == ModelKind::chain) {
      if (std::find(sizes.begin(), sizes.end(), Model::atoms) == sizes.end()) sizes.push_back(Model::atoms);
    }
    return false;
  });
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

std::string cuda_unsupported_reason(const Study& s) {
  if (s.first_passage_on())
    return "first-passage statistics ([first_passage]) run on the CPU backend only for now (docs/first_passage.md)";
  if (s.varies_parameters())
    return "parameter ensembles ([parameters]) run on the CPU backend only for now (docs/parameter_ensembles.md)";
  if (has_system<CudaBackend>(s)) return "";
  if (s.model_kind == ModelKind::custom && !s.model_source.empty())
    return "a user model from a header (model.source) is compiled on first use for the CPU only for now; build it into "
           "the executable with chens_add_model for the GPU (docs/custom-models.md)";
  if (s.model_kind == ModelKind::chain) {
    std::string all, groups;
    for (int n : cuda_chain_sizes()) {
      all += (all.empty() ? "" : ", ") + std::to_string(n);
      if (chain_group_lanes(n) > 1) groups += (groups.empty() ? "" : ", ") + std::to_string(n);
    }
    std::string why = "the GPU backend has chain kernels for model.atoms = " + (all.empty() ? std::string("none") : all);
    if (!groups.empty()) why += " (" + groups + " on thread groups)";
    return why + " only";
  }
  return std::string("the GPU backend has no kernels for model.kind = \"") + model_name(s) +
         "\" with integrator.formulation = \"" + formulation_name(s.formulation) + "\"";
}

EnsembleResult run_study_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  const std::string why = cuda_unsupported_reason(s);
  if (!why.empty()) throw std::runtime_error(why);
  return run_study<CudaBackend>(s, rp, spec);
}

std::string gpu_unusable_reason(const Study& s) {
  const CudaDeviceInfo dev = cuda_device_info();
  return dev.available ? cuda_unsupported_reason(s) : dev.description;
}

}  // namespace chens
