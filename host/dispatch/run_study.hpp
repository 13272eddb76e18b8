// The one entry point from a resolved study to a CPU ensemble run, whatever the model.
#pragma once

#include <cstddef>

#include "backends/cpu/cpu_ensemble.hpp"
#include "backends/ensemble_result.hpp"
#include "study/study.hpp"

namespace chens {

EnsembleResult run_study_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);

// Upper bound on the host memory one instance of the study's model needs.
std::size_t bytes_per_instance(const Study& s);

}  // namespace chens
