// The penalty (augmented-potential) pendulum of 003 on the GPU: its one formulation, with
// and without tangents; the rigid pendulum's closed form as reference
// (host/dispatch/penalty_dispatch.cpp is the CPU twin).
#include <chens/models/penalty_pendulum.hpp>

#include "dispatch/penalty_model.hpp"
#include "ensemble_launchers.hpp"
#include "pendulum_systems.cuh"

namespace chens {

EnsembleResult run_penalty_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  const std::vector<double> z = initial_state(s);
  const PenaltyPendulum<double>::State z0{{z[0], z[1], z[2], z[3]}};
  const PenaltyOde<PenaltyPendulum<double>> sys{penalty_model(s)};
  if (s.wedge) return run_pendulum_system_cuda<true>(s, rp, spec, sys, z0, penalty_reference_kind);
  return run_pendulum_system_cuda<false>(s, rp, spec, sys, z0, penalty_reference_kind);
}

}  // namespace chens
