// The CUDA backend's entry points (host/backends/cuda_backend.hpp): device discovery and
// the one run_study over the GPU's units of the systems list (dispatch/system_dispatch.hpp;
// the units are generated, cmake/ChensSystems.cmake).
#include "backends/cuda_backend.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <chens/ensemble/chain_group_steps.hpp>

#include "dispatch/system_dispatch.hpp"
#include "study/study.hpp"

namespace chens {

void cuda_select_device(int local_rank) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) cudaSetDevice(local_rank % count);
}

void cuda_initialize() {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) cudaFree(nullptr);
}

std::vector<int> cuda_chain_sizes() {
  std::vector<int> sizes;
  for_each_system<CudaBackend>([&](auto e) {
    using Model = typename decltype(e)::Model;
    if constexpr (ModelTraits<Model>::kind == ModelKind::chain) {
      if (std::find(sizes.begin(), sizes.end(), Model::atoms) == sizes.end()) sizes.push_back(Model::atoms);
    }
    return false;
  });
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

std::string cuda_unsupported_reason(const Study& s) {
  // Rodas5P steps a whole state per thread (its W couples every component); the chains the
  // engine runs on thread groups (ensemble/group_segment.hpp's chain_group_system, which
  // dispatch/methods.hpp's rodas5p_on_slices fences at compile time) a lane's slice each.
  if (s.method == MethodId::rodas5p) {
    if (s.model_kind == ModelKind::chain) {
      const int atoms = model_key(s).atoms;
      const int lanes = chain_group_lanes(atoms);
      if (lanes > 1 && chain_group_formulation(s.formulation))
        return "integrator.method = \"rodas5p\" steps a whole state per GPU thread, and the GPU runs a chain of " +
               std::to_string(atoms) + " atoms on thread groups of " + std::to_string(lanes) +
               " lanes, a slice of the chain each (docs/numerics.md, \"Rodas5P\")";
    }
    if (const std::size_t n = physical_state_names(s).size(); n > static_cast<std::size_t>(rodas5p_max_gpu_state))
      return "integrator.method = \"rodas5p\" on the GPU takes states of at most " + std::to_string(rodas5p_max_gpu_state) +
             " components (each thread's Jacobian, W and LU in local memory, " +
             "which the device sets aside for every thread it holds); this one has " + std::to_string(n) +
             " (docs/numerics.md, \"Rodas5P\")";
  }
  if (s.first_passage_on())
    return "first-passage statistics ([first_passage]) run on the CPU backend only for now (docs/first_passage.md)";
  if (s.varies_parameters())
    return "parameter ensembles ([parameters]) run on the CPU backend only for now (docs/parameter_ensembles.md)";
  if (has_system<CudaBackend>(s)) return "";
  if (s.tangents())
    return std::string("the GPU backend has no tangent system (output.wedge, output.lyapunov) for model.kind = \"") +
           model_name(s) + "\" with integrator.formulation = \"" + formulation_name(s.formulation) +
           "\"; the CPU backend (--backend cpu) compiles it on first use (docs/jit.md)";
  if (s.model_kind == ModelKind::custom && !s.model_source.empty())
    return "a user model from a header (model.source) runs on the GPU in double precision only";
  if (s.model_kind == ModelKind::chain) {
    std::string all, groups;
    for (int n : cuda_chain_sizes()) {
      all += (all.empty() ? "" : ", ") + std::to_string(n);
      if (chain_group_lanes(n) > 1) groups += (groups.empty() ? "" : ", ") + std::to_string(n);
    }
    std::string why = "the GPU backend has chain kernels for model.atoms = " + (all.empty() ? std::string("none") : all);
    if (!groups.empty()) why += " (" + groups + " on thread groups)";
    return why + (jit_gpu_built() ? " and compiles chains of 2 to " + std::to_string(max_jit_chain_atoms) +
                                        " atoms in double precision on first use (docs/jit.md)"
                                  : " only");
  }
  return std::string("the GPU backend has no kernels for model.kind = \"") + model_name(s) +
         "\" with integrator.formulation = \"" + formulation_name(s.formulation) + "\"";
}

EnsembleResult run_study_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  const std::string why = cuda_unsupported_reason(s);
  if (!why.empty()) throw std::runtime_error(why);
  return run_study<CudaBackend>(s, rp, spec);
}

std::string gpu_unusable_reason(const Study& s) {
  const CudaDeviceInfo dev = cuda_device_info();
  return dev.available ? cuda_unsupported_reason(s) : dev.description;
}

}  // namespace chens
