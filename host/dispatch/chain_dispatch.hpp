// Runs a chain-molecule study on the CPU backend: (atoms, formulation, method) -> one
// instantiation. The sizes come from the CMake list CHENS_CHAIN_ATOMS (chain_sizes.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "backends/cpu/cpu_ensemble.hpp"
#include "backends/ensemble_result.hpp"
#include "dispatch/chain_model.hpp"
#include "study/study.hpp"

namespace chens {

EnsembleResult run_chain_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);

// Host memory one instance of an `atoms`-atom chain needs (the Instance struct).
std::size_t chain_bytes_per_instance(int atoms);

template <int N, FormulationId F>
EnsembleResult run_chain_cpu_formulation(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);

}  // namespace chens
