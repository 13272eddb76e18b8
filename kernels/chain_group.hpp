// Chains of any size on the GPU, a thread group per instance (issue 20): the launcher of
// kernels/chain_group.cu, declared free of CUDA types so that host code, tests and
// benchmarks build with g++ alone. It advances an ensemble of one chain by fixed steps of
// the Hamilton-Dirac equations with RK4 and the tolerance-triggered momentum projection
// (ensemble/chain_group_steps.hpp), each instance on chain_group_lanes(N) lanes of a warp.
//
// `chens run` reaches the same per-instance code through the engine's group path
// (kernels/group_kernels.cuh); this standalone entry point, with its -fmad=false twin, is
// what tests/gpu/test_chain_group.cpp (bit for bit with the CPU) and
// bench/bench_chain_group.cpp measure the layout with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chens {

struct ChainGroupLaunch {
  int atoms = 0;         // N
  int lanes = 0;         // threads per instance (chain_group_lanes(N))
  double kernel_ms = 0;  // the kernel alone, by CUDA events
  // Per instance: steps taken, momentum projections, lost (a step or projection not finite).
  std::vector<std::uint32_t> steps, projections;
  std::vector<std::uint8_t> lost;
};

// The chain sizes this build has group kernels for (CHENS_CHAIN_GROUP_ATOMS, CMake).
std::vector<int> chain_group_sizes();

// z: count instances x 4N values (models/chain.hpp's layout, instance after instance),
// advanced in place by `steps` steps of size h; w: the N inverse masses. tol < 0: no
// projection. exact = true runs the kernels compiled with -fmad=false, whose results equal
// the CPU's (G = 1) bit for bit; false, the fast ones (nvcc's fused multiply-adds).
// Returns an empty string, or why nothing ran (no device, a size not built, a CUDA error).
std::string chain_group_dirac_rk4_gpu(int atoms, const double* w, double bond_length, double lj_epsilon, double* z,
                                      std::int64_t count, int steps, double h, double tol, bool exact,
                                      ChainGroupLaunch& out);

}  // namespace chens
