// Tolerance-triggered projections after each accepted step (002 §11; 001 §6): the
// decisions are taken independently from the residuals of the step's result; if both
// are needed, the position projection runs first so that the momentum projection uses
// the corrected positions. For impetus formulations the physical momenta satisfy
// psi = 0 identically (000 eq. 26), so only the position projection and the impetus
// reset of 000 §8 can act.
#pragma once

#include <chens/config.hpp>
#include <chens/ensemble/counters.hpp>
#include <chens/ensemble/run_params.hpp>
#include <chens/linalg/vec.hpp>
#include <chens/projections/momentum.hpp>
#include <chens/projections/position.hpp>

namespace chens {

// Returns true when the state was changed. RP is RunParams over any Real (the tangent
// propagation of geometry/tangent_system.hpp projects dual-number states with the run's params).
// With midpoint (stage) projection (integrators/midpoint_projection.hpp) the step itself
// projects and the end point is left alone.
template <class System, class RP>
CHENS_HD CHENS_FORCEINLINE bool apply_projections(const System& sys, const RP& rp, typename System::State& z, Counters& c) {
  using Model = decltype(sys.model);
  if (rp.stage_projection) return false;
  bool changed = false;
  if (rp.project_position || rp.project_momentum) {
    const bool need_pos = rp.project_position && max_abs(sys.model.phi(Model::q_of(z))) > rp.projection_tol;
    bool need_mom = false;
    if constexpr (!System::has_impetus) {
      need_mom = rp.project_momentum && max_abs(sys.model.psi(z)) > rp.projection_tol;
    }
    if (need_pos) {
      const ProjectionStatus ps = position_project(sys.model, z, rp.projection_tol, rp.projection_max_iterations);
      c.position_projections += 1;
      c.position_newton_iterations += static_cast<std::uint64_t>(ps.iterations);
      if (!ps.converged) c.unconverged_position_projections += 1;
      changed = true;
    }
    if (need_mom) {
      momentum_project(sys.model, z);
      c.momentum_projections += 1;
      changed = true;
    }
  }
  if constexpr (System::has_impetus) {
    if (rp.impetus_reset > typename System::Real(0)) {
      const auto phys = sys.physical(z);
      if (max_abs(z - phys) > rp.impetus_reset) {
        z = phys;
        c.impetus_resets += 1;
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace chens
