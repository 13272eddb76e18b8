// The pendulum's formulations on the GPU, without tangents (output.wedge: ensemble_pendulum_wedge.cu).
#include "ensemble_launchers.hpp"
#include "pendulum_systems.cuh"

namespace chens {

EnsembleResult run_pendulum_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  if (s.wedge) return run_pendulum_wedge_cuda(s, rp, spec);
  const Pendulum<double> model{s.mass, s.length, s.gravity};
  const std::vector<double> z = initial_state(s);
  const Pendulum<double>::State z0{{z[0], z[1], z[2], z[3]}};
  return with_pendulum_formulation(s.formulation, model, s, [&](const auto& sys) {
    return run_pendulum_system_cuda<false>(s, rp, spec, sys, z0, "closed form in Jacobi elliptic functions");
  });
}

}  // namespace chens
