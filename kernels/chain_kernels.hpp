// Launcher of the chain-molecule CUDA kernel, declared without CUDA types (see
// pendulum_kernels.hpp). The kernel runs run_instance_to_end, one thread per instance,
// with the numerical reference when the study asks for one; tests/gpu compares it with
// the CPU twin cpu_run_chain_instances instance by instance.
#pragma once

#include <cstdint>

#include "backends/per_instance.hpp"

namespace chens {

// Chain sizes with CUDA kernels in this build (a subset of CHENS_CHAIN_ATOMS, kept small
// because nvcc compiles every (formulation, method) pair per size).
inline constexpr int cuda_chain_atoms = 7;

// Integrates `size` instances of a chain study (model.atoms = cuda_chain_atoms) on the
// GPU. Throws std::runtime_error when no device is usable or the size has no kernel.
PerInstanceResult cuda_run_chain_instances(const Study& s, const RunParams<double>& rp, std::uint64_t size);

}  // namespace chens
