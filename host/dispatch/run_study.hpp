// From a resolved study to an ensemble run on a backend: the one run_study over a Backend
// (system_dispatch.hpp) and what the host needs to know of a study's model before it runs.
#pragma once

#include <cstddef>
#include <string>

#include "backends/backend.hpp"
#include "backends/backend_id.hpp"
#include "backends/cuda_backend.hpp"
#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"
#include "study/study.hpp"

namespace chens {

// What a backend is asked to run for the study: its size, seed, perturbation, the recorded
// instances (recorded_instances) and, with output.states, every instance kept; threads for
// the CPU backend (0 = all).
EnsembleSpec ensemble_spec(const Study& s, int threads = 0);

// The study's ensemble on Backend (CpuBackend here; CudaBackend through run_study_cuda,
// backends/cuda_backend.hpp, which first checks for a usable device).
template <class Backend>
EnsembleResult run_study(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec);
extern template EnsembleResult run_study<CpuBackend>(const Study&, const RunParams<double>&, const EnsembleSpec&);

inline EnsembleResult run_study_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  return run_study<CpuBackend>(s, rp, spec);
}

// The study's ensemble on the chosen backend: run_study_cpu or run_study_cuda (inline: the
// GPU backend's library comes after the host library, and only the command line and MPI,
// which link both, choose).
inline EnsembleResult run_study_on(BackendId backend, const Study& s, const RunParams<double>& rp,
                                   const EnsembleSpec& spec) {
  return backend == BackendId::cuda ? run_study_cuda(s, rp, spec) : run_study_cpu(s, rp, spec);
}

// Whether the study's system is compiled on first use on the backend (dispatch/jit_systems.hpp):
// not (a unit of the build runs it), and if so whether its object is cached already.
enum class FirstUseCompile { none, cached, needed };
FirstUseCompile first_use_compile(const Study& s, BackendId backend);
// Whether a unit compiled on first use runs the study on the backend, cached or not (looks
// at no object: loading a GPU object registers its kernels with the CUDA runtime).
bool runs_compiled_on_first_use(const Study& s, BackendId backend);
// What the messages call the study's system on the backend ("chain N = 12, dirac, rk4, cpu").
std::string first_use_label(const Study& s, BackendId backend);

// The physical state's size, 2 d (positions and momenta): 4 for the pendulum, 4N for a chain.
int physical_state_size(const Study& s);

// Upper bound on the host memory one instance of the study's model needs (output.states
// included).
std::size_t bytes_per_instance(const Study& s);

// The bytes an instance of a chain of `atoms` atoms takes (ModelTraits::bytes_per_instance),
// from the sizes of chains of 3 and 4 atoms: every part of a chain's instance is N atoms'
// worth of numbers or a fixed part, so it is linear in N (for a size compiled on first use
// whose object is not cached yet; tests/test_jit_systems.cpp checks it at the built-in sizes).
std::size_t chain_bytes_per_instance_fit(int atoms, bool tangents = false);

}  // namespace chens
