// CPU float runs (integrator.precision = "float"; float_runs.hpp).
#pragma once

#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"
#include "study/study.hpp"

namespace chens {

EnsembleResult run_float_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);

}  // namespace chens
