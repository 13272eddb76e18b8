// Per-instance work counters. Each field is summed over instances into the run totals
// (summary.json); none is dropped.
#pragma once

#include <cstdint>

#include <chens/config.hpp>

namespace chens {

enum class LostReason : int {
  none = 0,
  non_finite = 1,           // the state (or a metric of it) stopped being finite
  step_size_underflow = 2,  // adaptive step fell below 16 ulp of t
  max_steps = 3,            // adaptive run exceeded integrator.max_steps
  initial_projection = 4,   // perturbed initial data could not be put back on the level set
  reference_failed = 5,     // the numerical reference run of this instance failed
  residual_bound = 6,       // |phi| or |psi| exceeded RunParams::lost_residual
  unconverged = 7,          // an implicit step or position projection hit its cap (RunParams::lost_unconverged)
  diverged = 8,             // an error exceeded RunParams::lost_diverged (issue 17)
};
inline constexpr int lost_reason_count = 9;
inline constexpr const char* lost_reason_name(int r) {
  switch (r) {
    case 0: return "none";
    case 1: return "non_finite";
    case 2: return "step_size_underflow";
    case 3: return "max_steps";
    case 4: return "initial_projection";
    case 5: return "reference_failed";
    case 6: return "residual_bound";
    case 7: return "unconverged";
    case 8: return "diverged";
    default: return "?";
  }
}

struct Counters {
  std::uint64_t steps = 0;           // accepted steps
  std::uint64_t rejected_steps = 0;  // adaptive rejections
  std::uint64_t rhs_evaluations = 0;
  std::uint64_t iterations = 0;         // fixed-point sweeps of implicit methods
  std::uint64_t unconverged_steps = 0;  // implicit steps that hit max_iterations
  std::uint64_t momentum_projections = 0;
  std::uint64_t position_projections = 0;
  std::uint64_t position_newton_iterations = 0;
  std::uint64_t unconverged_position_projections = 0;
  std::uint64_t impetus_resets = 0;
  std::uint64_t reference_steps = 0;            // numerical reference runs: accepted steps
  std::uint64_t reference_rhs_evaluations = 0;  // and their right-hand-side evaluations

  CHENS_HD void add(const Counters& o) {
    steps += o.steps;
    rejected_steps += o.rejected_steps;
    rhs_evaluations += o.rhs_evaluations;
    iterations += o.iterations;
    unconverged_steps += o.unconverged_steps;
    momentum_projections += o.momentum_projections;
    position_projections += o.position_projections;
    position_newton_iterations += o.position_newton_iterations;
    unconverged_position_projections += o.unconverged_position_projections;
    impetus_resets += o.impetus_resets;
    reference_steps += o.reference_steps;
    reference_rhs_evaluations += o.reference_rhs_evaluations;
  }
};

}  // namespace chens
