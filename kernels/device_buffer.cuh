// CUDA error checks that name what failed, and an owning device allocation.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace chens::cuda {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  std::size_t size = 0;
  explicit DeviceBuffer(std::size_t n) : size(n) { check(cudaMalloc(&ptr, (n > 0 ? n : 1) * sizeof(T)), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void to_host(std::vector<T>& v) const {
    check(cudaMemcpy(v.data(), ptr, v.size() * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  }
};

}  // namespace chens::cuda
