// model.kind = "penalty-pendulum" on the CPU backend: the penalty ODE (003) with any
// fixed-step or adaptive method, Stormer-Verlet included; the reference is the rigid
// pendulum's closed form from the projected initial data.
#include "dispatch/pendulum_dispatch_impl.hpp"
#include "dispatch/penalty_model.hpp"

namespace chens {

EnsembleResult run_penalty_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  return run_pendulum_system_cpu(s, rp, spec, PenaltyOde<PenaltyPendulum<double>>{penalty_model(s)},
                                 penalty_reference_kind);
}

}  // namespace chens
