// Resolved, validated numbers one ensemble run needs on the device or the CPU: a plain
// trivially copyable struct (the host builds it from the study, host/study/).
#pragma once

#include <type_traits>

#include <chens/config.hpp>
#include <chens/ensemble/passage.hpp>
#include <chens/ensemble/perturbation_shape.hpp>

namespace chens {

template <class Real>
struct RunParams {
  // Time grid. Fixed-step methods take total_steps steps of size h (the last one of
  // size last_h, equal to h when t_end is a multiple of h), so the run ends exactly at
  // t_end; samples are taken every steps_per_sample steps and at t_end. Adaptive
  // methods hit every sample time t_k = k * sample_dt (and t_end) exactly.
  Real h = Real(0.1);       // step size (fixed) or initial step size (adaptive)
  Real last_h = Real(0.1);  // size of the final fixed step
  Real t_end = Real(0);
  Real sample_dt = Real(1);
  index_t total_steps = 0;
  index_t steps_per_sample = 1;
  index_t samples = 0;  // number of sample intervals; sample times are k = 0..samples
  bool fixed_step = true;

  // Adaptive stepping (dopri5).
  Real rtol = Real(1e-6);
  Real atol = Real(1e-9);
  index_t max_steps = 100000000;  // per instance, accepted + rejected, over the whole run

  // Implicit methods: fixed-point iteration (implicit_rk.hpp).
  Real iteration_tol = Real(1e-12);
  int max_iterations = 100;

  // Projections (002 §11): independent triggers, position first, then momentum.
  bool project_momentum = false;
  bool project_position = false;
  Real projection_tol = Real(1e-6);
  int projection_max_iterations = 50;
  // Infrequent projection (004 Fig. 4.5): project after every projection_every-th accepted
  // step only (1 = after every step).
  index_t projection_every = 1;
  // Midpoint (stage) projection of the implicit midpoint rule (004 §4): the step projects
  // its stage (integrators/midpoint_projection.hpp) and no projection follows the step.
  bool stage_projection = false;

  // Reference solution for the integration error: false = none. Models without a closed
  // form use a tight-tolerance DOPRI5 run of the Hamilton-Dirac equations from the same
  // physical initial data (reference/numerical.hpp), with rtol = atol = reference_tol.
  bool reference = true;
  Real reference_tol = Real(1e-12);

  // Impetus reset (000 §8): replace p* by p when max |p* - p| exceeds this; 0 = never.
  Real impetus_reset = Real(0);

  // An instance whose |phi| or |psi| exceeds this at a sample time is frozen there as lost
  // (LostReason::residual_bound) and leaves the statistics; 0 = never. In double, as the
  // metrics it is compared with.
  double lost_residual = 0.0;
  // ensemble.lost_unconverged: an implicit step or a position projection that stops at its
  // iteration cap freezes the instance at its last converged state (LostReason::unconverged)
  // instead of being counted and kept.
  bool lost_unconverged = false;
  // ensemble.lost_diverged (issue 17): an instance whose integration error, |phi|, |psi|
  // or momentum errors exceed this, or whose energy error exceeds it times max(1, |H0|),
  // at a sample time is frozen there as lost (LostReason::diverged): errors a million
  // times the size of the papers' unit systems are no longer errors of an integrator but
  // of an overflowing one, and would swamp every statistic; 0 = never.
  double lost_diverged = 1e6;

  // Distribution of the perturbations and the offsets of inconsistent ensembles
  // (ensemble/perturbation.hpp); their size is EnsembleSpec::perturbation.
  PerturbationShape<Real> perturbation_shape{};

  // output.first_passage (ensemble/passage.hpp): the levels whose first crossing each
  // instance records.
  PassageLevels passage{};

  // output.lyapunov (geometry/tangent_system.hpp): a tangent system's tangents are renormalised
  // after every lyapunov_every-th step (0 = never). The renormalisation is exact, so this
  // changes no number reported; it keeps chaotic tangents from overflowing.
  index_t lyapunov_every = 0;
  // Which diagnostics of a tangent system's tangents the run reports (output.wedge,
  // output.lyapunov): both are measured whenever tangents are carried.
  bool wedge = false;
  bool lyapunov = false;

  // Whether the projections are checked after the step that makes `steps` accepted steps
  // (projection_every).
  CHENS_HD bool projects_after(std::uint64_t steps) const {
    return projection_every <= 1 || steps % static_cast<std::uint64_t>(projection_every) == 0;
  }

  CHENS_HD Real sample_time(index_t k) const {
    if (fixed_step) return step_time(sample_step(k));
    return k >= samples ? t_end : Real(k) * sample_dt;
  }
  CHENS_HD index_t sample_step(index_t k) const {
    const index_t s = k * steps_per_sample;
    return s < total_steps ? s : total_steps;
  }
  CHENS_HD Real step_time(index_t n) const { return n >= total_steps ? t_end : Real(n) * h; }

  // Sample time k in double, where references are evaluated: n * h with the run's own
  // (possibly float-rounded) h, without rounding the product to Real. Equal to
  // sample_time(k) for double runs.
  CHENS_HD double reference_time(index_t k) const {
    if (!fixed_step) return k >= samples ? double(t_end) : double(k) * double(sample_dt);
    return step_time_double(sample_step(k));
  }
  // step_time(n) in double the same way (fixed-step methods): the time of a step's
  // first-passage crossing (passage.hpp), on the grid of reference_time's sample times.
  CHENS_HD double step_time_double(index_t n) const { return n >= total_steps ? double(t_end) : double(n) * double(h); }
};

// The run parameters in another precision (float runs, `integrator.precision`).
template <class R, class Real>
RunParams<R> run_params_as(const RunParams<Real>& rp) {
  if constexpr (std::is_same_v<R, Real>) return rp;
  RunParams<R> r;
  r.h = R(rp.h);
  r.last_h = R(rp.last_h);
  r.t_end = R(rp.t_end);
  r.sample_dt = R(rp.sample_dt);
  r.total_steps = rp.total_steps;
  r.steps_per_sample = rp.steps_per_sample;
  r.samples = rp.samples;
  r.fixed_step = rp.fixed_step;
  r.rtol = R(rp.rtol);
  r.atol = R(rp.atol);
  r.max_steps = rp.max_steps;
  r.iteration_tol = R(rp.iteration_tol);
  r.max_iterations = rp.max_iterations;
  r.project_momentum = rp.project_momentum;
  r.project_position = rp.project_position;
  r.projection_tol = R(rp.projection_tol);
  r.projection_max_iterations = rp.projection_max_iterations;
  r.projection_every = rp.projection_every;
  r.stage_projection = rp.stage_projection;
  r.reference = rp.reference;
  r.reference_tol = R(rp.reference_tol);
  r.impetus_reset = R(rp.impetus_reset);
  r.lost_residual = rp.lost_residual;
  r.lost_unconverged = rp.lost_unconverged;
  r.lost_diverged = rp.lost_diverged;
  r.perturbation_shape.distribution = rp.perturbation_shape.distribution;
  r.perturbation_shape.phi_offset = R(rp.perturbation_shape.phi_offset);
  r.perturbation_shape.psi_offset = R(rp.perturbation_shape.psi_offset);
  r.passage = rp.passage;
  r.lyapunov_every = rp.lyapunov_every;
  r.wedge = rp.wedge;
  r.lyapunov = rp.lyapunov;
  return r;
}

}  // namespace chens
