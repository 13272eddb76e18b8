// Launchers of the CUDA kernels, declared without CUDA types so that host/ and tests/
// build with the C++ compiler alone. Defined in pendulum_kernels.cu (nvcc).
//
// Per-instance results (not the ensemble backend, kernels/ensemble_kernel.cuh): the kernel
// runs the per-instance driver of include/chens/ensemble/instance.hpp (run_instance_to_end),
// one thread per instance, for every (formulation, method) pair of the pendulum, and
// returns each instance's final state, metrics and counters; tests/gpu and chens validate
// compare them with the CPU twin cpu_run_pendulum_instances, which runs the very same
// function in an OpenMP loop.
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda_backend.hpp"
#include "backends/per_instance.hpp"

namespace chens {

// Integrates `size` instances of a pendulum study to t_end on the GPU. Throws
// std::runtime_error when no device is usable.
PerInstanceResult cuda_run_pendulum_instances(const Study& s, const RunParams<double>& rp, std::uint64_t size);

}  // namespace chens
