// The CUDA backend's entry points in a build without CUDA (CHENS_ENABLE_CUDA=OFF or no nvcc).
#include <stdexcept>

#include "backends/cuda_backend.hpp"

namespace chens {

CudaDeviceInfo cuda_device_info() { return {false, "this chens was built without CUDA (CHENS_ENABLE_CUDA=OFF or no nvcc)"}; }

std::vector<int> cuda_chain_sizes() { return {}; }

void cuda_select_device(int) {}

void cuda_initialize() {}

std::string cuda_unsupported_reason(const Study&) { return "this chens was built without CUDA"; }

EnsembleResult run_study_cuda(const Study&, const RunParams<double>&, const EnsembleSpec&) {
  throw std::runtime_error("this chens was built without CUDA");
}

std::string gpu_unusable_reason(const Study& s) {
  const CudaDeviceInfo dev = cuda_device_info();
  return dev.available ? cuda_unsupported_reason(s) : dev.description;
}

}  // namespace chens
