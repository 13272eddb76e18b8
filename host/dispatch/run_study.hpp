// The one entry point from a resolved study to a CPU ensemble run, whatever the model.
#pragma once

#include <cstddef>

#include "backends/cpu/cpu_ensemble.hpp"
#include "backends/ensemble_result.hpp"
#include "study/study.hpp"

namespace chens {

// What a backend is asked to run for the study: its size, seed, perturbation and whether
// instance 0's trajectory is recorded; threads for the CPU backend (0 = all).
EnsembleSpec ensemble_spec(const Study& s, int threads = 0);

EnsembleResult run_study_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);

// Upper bound on the host memory one instance of the study's model needs.
std::size_t bytes_per_instance(const Study& s);

}  // namespace chens
