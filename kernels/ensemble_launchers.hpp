// Per-model CUDA ensemble launchers (one translation unit each, so nvcc builds them in
// parallel); reached through run_study_cuda (host/backends/cuda_backend.hpp).
#pragma once

#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"
#include "study/study.hpp"

namespace chens {

EnsembleResult run_pendulum_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);
EnsembleResult run_chain_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);
// output.wedge on the pendulum (ensemble_pendulum_wedge.cu); the penalty model
// (ensemble_penalty.cu) with or without it.
EnsembleResult run_pendulum_wedge_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);
EnsembleResult run_penalty_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);
// integrator.precision = "float" (host/dispatch/float_runs.hpp).
EnsembleResult run_float_pendulum_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);
EnsembleResult run_float_chain_cuda(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);

}  // namespace chens
