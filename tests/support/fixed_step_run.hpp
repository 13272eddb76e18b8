// The time grid of a fixed-step run for the lane and lean-loop tests: h, t_end (whose last
// step is short when h does not divide it), a sample every per_sample steps, the momentum
// projection at tol when `momentum`, no reference.
#pragma once

#include <chens/ensemble/run_params.hpp>
#include <cmath>

namespace chens::test {

template <class Real = double>
RunParams<Real> fixed_step_run(double h, double t_end, index_t per_sample, double tol, bool momentum) {
  RunParams<double> rp;
  rp.h = h;
  rp.fixed_step = true;
  rp.t_end = t_end;
  rp.total_steps = static_cast<index_t>(std::ceil(t_end / h - 1e-9));
  rp.last_h = t_end - static_cast<double>(rp.total_steps - 1) * h;  // != h: the short last step
  rp.steps_per_sample = per_sample;
  rp.samples = (rp.total_steps + per_sample - 1) / per_sample;
  rp.sample_dt = h * static_cast<double>(per_sample);
  rp.project_momentum = momentum;
  rp.projection_tol = tol;
  rp.reference = false;
  return run_params_as<Real>(rp);
}

}  // namespace chens::test
