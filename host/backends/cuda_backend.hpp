// The CUDA ensemble backend as the host sees it: declarations free of CUDA types, so that
// host/ builds with g++ alone. Defined in kernels/ (nvcc) when CUDA is built, and by
// host/backends/cuda_unavailable.cpp otherwise (every call then reports that no GPU
// backend is built).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <chens/ensemble/run_params.hpp>

#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"

namespace chens {

struct Study;

// Chain sizes with CUDA kernels in this build (the systems list's GPU chains: CMake's
// CHENS_CUDA_CHAIN_ATOMS, kept small because nvcc compiles every (formulation, method) pair
// per size), ascending.
std::vector<int> cuda_chain_sizes();

struct CudaDeviceInfo {
  bool available = false;
  std::string description;  // device name, or why none is usable
};

// Checks cudaGetDeviceCount before anything touches device memory (error 35 on
// machines without a driver); never aborts.
CudaDeviceInfo cuda_device_info();

// MPI ranks: use device local_rank modulo the number of devices (no-op without a device).
void cuda_select_device(int local_rank);

// Creates the CUDA context now (a few hundred milliseconds on a first call), so that a GPU
// run's wall time starts with a ready device; `chens run` calls it once it has chosen the
// GPU. The context counts in the process's time to first result. No-op without a device.
void cuda_initialize();

// Why the GPU backend cannot run this study (a model size without kernels), or "".
std::string cuda_unsupported_reason(const Study& s);

// Why the GPU cannot run this study here (no usable device, or no kernels for it), or "".
std::string gpu_unusable_reason(const Study& s);

// The ensemble does not fit the device's free memory; thrown before any launch.
class DeviceMemoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs the study's ensemble on the GPU with statistics reduced on the device
// (kernels/cuda_engine.cuh): run_study<CudaBackend> (dispatch/system_dispatch.hpp). Throws
// std::runtime_error when no device is usable or the build has no kernels for the study.
EnsembleResult run_study_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);

}  // namespace chens
