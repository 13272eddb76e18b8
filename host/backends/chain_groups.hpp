// What the CUDA engine's thread-group path runs (issue 20; ensemble/group_segment.hpp,
// kernels/group_kernels.cuh): chains whose atoms divide among two lanes or more, in every
// chain formulation (chain_group_formulation) with every method (Euler, RK2 and RK4 under the
// lean loop's projection settings by lean_steps.hpp; every other method and setting by the
// per-instance driver over the slices), and no reference solution: the chains' numerical
// reference is a second, advancing DOPRI5 solution held in each instance, not yet laid out
// on slices.
// One rule for `chens run`'s backend choice (cuda_unsupported_reason, kernels/cuda_backend.cu)
// and the engine itself. C++17-clean: nvcc compiles it.
#pragma once

#include <string>

#include <chens/ensemble/run_params.hpp>

namespace chens {

// Why the group path cannot run these settings, or "".
inline std::string chain_group_refusal(int atoms, const RunParams<double>& rp) {
  if (rp.reference)
    return "chains of " + std::to_string(atoms) +
           " atoms run on the GPU's thread groups with output.reference = \"none\" only (use --backend cpu for a "
           "reference)";
  return "";
}

}  // namespace chens
