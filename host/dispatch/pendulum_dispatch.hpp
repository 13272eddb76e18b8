// Runs a pendulum study on the CPU backend: (formulation, method) -> one instantiation.
#pragma once

#include "backends/cpu/cpu_ensemble.hpp"
#include "backends/ensemble_result.hpp"
#include "study/study.hpp"

namespace chens {

// Upper bound on the host memory one pendulum instance needs (checked at compile time).
inline constexpr std::size_t pendulum_bytes_per_instance = 384;

EnsembleResult run_pendulum_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);

// One translation unit per formulation (pendulum_<name>.cpp) keeps builds parallel.
template <FormulationId F>
EnsembleResult run_pendulum_cpu_formulation(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);

}  // namespace chens
