// The fixed-step time grid (defined in study/study_resolve.cpp): resolve() and every instance
// of a step-size ensemble ([parameters] h, backends/cpu/cpu_engine.hpp) go through it, so that
// an instance's grid is the single run's. Apart from study.hpp so that system units need
// nothing of host/study. C++17-clean: nvcc compiles it.
#pragma once

#include <chens/ensemble/run_params.hpp>

namespace chens {

// The fixed-step time grid of step h (RunParams's h, last_h, total_steps, steps_per_sample,
// sample_dt, samples) for rp.t_end, sampling every sample_dt (0: about 100 samples); false
// where sample_dt is not a multiple of h.
bool fixed_step_grid(RunParams<double>& rp, double h, double sample_dt);
// rp with the step size h (fixed-step methods: its grid, sampling every sample_dt; dopri5:
// the initial trial step).
RunParams<double> with_step_size(const RunParams<double>& rp, double h, double sample_dt);
// A drawn step size h as a fixed-step method runs it: grid / n, n = max(1, round(grid / h)),
// so that every instance samples at the study's times (grid = output.sample_dt); h itself
// where grid is 0 (adaptive methods). Monotone in h. ParameterEnsemble::value's rounding.
double on_sample_grid(double h, double grid);

}  // namespace chens
