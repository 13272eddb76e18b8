// The backends, as compile-time tags (the backend is a template parameter of the one
// run_study, dispatch/run_study.hpp, and of every generated system unit), and the one way
// to run an ensemble on one: the backend's engine under the one segment driver
// (backends/segment_driver.hpp). Free of CUDA types: host/ builds with g++ alone; a backend's
// engine is defined where its compiler sees it (backends/cpu/cpu_engine.hpp,
// kernels/cuda_engine.cuh). C++17-clean: nvcc compiles it.
#pragma once

#include <chens/ensemble/run_params.hpp>

#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"

#include <chens/formulations/formulation.hpp>

namespace chens {

struct CpuBackend {
  static constexpr const char* name = "cpu";
};
struct CudaBackend {
  static constexpr const char* name = "cuda";
};

// EngineOf<Backend>::type<System, Method, Reference>: the backend's engine.
template <class Backend>
struct EngineOf;

template <class Engine>
EnsembleResult drive_segments(Engine& engine, const RunParams<typename Engine::Real>& rp, const EnsembleSpec& spec);

// One ensemble of System integrated by Method from z0, measured against Reference, on Backend.
template <class Backend, class System, class Method, class Reference>
EnsembleResult run_ensemble(const System& sys, const Method& method, const RunParams<typename System::Real>& rp,
                            const ModelStateOf<System>& z0, const EnsembleSpec& spec) {
  typename EngineOf<Backend>::template type<System, Method, Reference> engine(sys, method, rp, z0, spec);
  return drive_segments(engine, rp, spec);
}

}  // namespace chens
