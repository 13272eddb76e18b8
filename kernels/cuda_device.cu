// The CUDA device as the host sees it (backends/cuda_backend.hpp's cuda_device_info): in the
// GPU's support library (kernels/CMakeLists.txt, chens_cuda_support) with the device
// statistics, because every engine calls it, and the engines compiled on first use for the
// GPU (dispatch/jit_systems.cpp) link that library rather than the executable that loads them.
#include <cuda_runtime.h>

#include <string>

#include "backends/cuda_backend.hpp"

namespace chens {

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

}  // namespace chens
