// What the CUDA engine's thread-group path runs (issue 20; ensemble/group_segment.hpp,
// kernels/group_kernels.cuh): Hamilton-Dirac chains whose atoms divide among two lanes or
// more, with RK4, no projection or the tolerance-triggered momentum projection after every
// step (the lean loop, lean_steps.hpp), and no reference solution (the chains' numerical
// reference is DOPRI5, whose error norm needs an ordered group sum: not yet on groups). One
// rule for `chens run`'s backend choice (cuda_unsupported_reason, kernels/cuda_backend.cu)
// and the engine itself. C++17-clean: nvcc compiles it.
#pragma once

#include <string>

#include <chens/ensemble/lean_steps.hpp>
#include <chens/ensemble/run_params.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/models/chain.hpp>

namespace chens {

// Why the group path cannot run these settings, or "".
inline std::string chain_group_refusal(int atoms, bool rk4, const RunParams<double>& rp) {
  const std::string what = "chains of " + std::to_string(atoms) +
                           " atoms run on the GPU's thread groups with integrator.formulation = \"dirac\" and ";
  if (!rk4) return what + "integrator.method = \"rk4\" only (use --backend cpu)";
  if (rp.steps_per_sample > index_t(0x7fffffff))
    return what + "at most 2147483647 steps between samples (lower output.sample_dt or raise integrator.h)";
  LeanPolicy policy{};
  if (!lean_policy_for<HamiltonDirac<Chain<double, 4>>>(rp, policy))
    return what + "the momentum projection after every step or none (projection.position = false, "
                  "projection.scheme = \"endpoint\", projection.every = 1; use --backend cpu)";
  if (rp.reference) return what + "output.reference = \"none\" only (use --backend cpu for a reference)";
  return "";
}

}  // namespace chens
