// The one entry point from a resolved study to a CPU ensemble run, whatever the model.
#pragma once

#include <cstddef>

#include "backends/cpu/cpu_ensemble.hpp"
#include "backends/ensemble_result.hpp"
#include "study/study.hpp"

namespace chens {

// What a backend is asked to run for the study: its size, seed, perturbation, the recorded
// instances (recorded_instances) and, with output.states, every instance kept; threads for
// the CPU backend (0 = all).
EnsembleSpec ensemble_spec(const Study& s, int threads = 0);

EnsembleResult run_study_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);

// The physical state's size, 2 d (positions and momenta): 4 for the pendulum, 4N for a chain.
int physical_state_size(const Study& s);

// Upper bound on the host memory one instance of the study's model needs (output.states
// included).
std::size_t bytes_per_instance(const Study& s);

}  // namespace chens
