// Launchers of the CUDA kernels, declared without CUDA types so that host/ and tests/
// build with the C++ compiler alone. Defined in pendulum_kernels.cu (nvcc).
//
// Until the GPU ensemble backend (issue #4) lands, the kernels run the per-instance
// driver of include/chens/ensemble/instance.hpp, one thread per instance, for every
// (formulation, method) pair of the pendulum, and return each instance's final state,
// counters and final metrics. The CPU-vs-GPU test compares them with the CPU path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <chens/ensemble/counters.hpp>
#include <chens/ensemble/run_params.hpp>
#include <chens/formulations/formulation.hpp>

namespace chens {

struct Study;
enum class MethodId : int;

struct CudaDeviceInfo {
  bool available = false;
  std::string description;  // device name, or why none is usable
};

// Checks cudaGetDeviceCount before anything touches device memory (error 35 on
// machines without a driver).
CudaDeviceInfo cuda_device_info();

struct PerInstanceResult {
  std::vector<double> final_state;  // size * 4, formulation variables
  std::vector<double> metrics;      // size * metric_count at the last sample
  std::vector<int> lost;            // LostReason per instance
  std::vector<Counters> counters;   // per instance
};

// Integrates `size` instances of a pendulum study to t_end on the GPU. Throws
// std::runtime_error when no device is usable.
PerInstanceResult cuda_run_pendulum_instances(const Study& s, const RunParams<double>& rp, std::uint64_t size);

}  // namespace chens
