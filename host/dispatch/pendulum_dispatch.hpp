// Runs a pendulum study on the CPU backend: (formulation, method) -> one instantiation.
#pragma once

#include "backends/cpu/cpu_ensemble.hpp"
#include "backends/ensemble_result.hpp"
#include "study/study.hpp"

namespace chens {

// Upper bound on the host memory one pendulum instance needs (checked at compile time);
// with output.wedge an instance also carries two tangent vectors (geometry/wedge.hpp).
inline constexpr std::size_t pendulum_bytes_per_instance = 384;
constexpr std::size_t pendulum_bytes_per_instance_with(bool wedge) { return wedge ? 512 : pendulum_bytes_per_instance; }

EnsembleResult run_pendulum_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);
// model.kind = "penalty-pendulum" (003; penalty_dispatch.cpp).
EnsembleResult run_penalty_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);

// One translation unit per formulation (pendulum_<name>.cpp) keeps builds parallel.
template <FormulationId F>
EnsembleResult run_pendulum_cpu_formulation(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);

}  // namespace chens
