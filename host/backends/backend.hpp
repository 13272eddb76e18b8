// The backends, as compile-time tags: a template parameter of the one run_study
// (dispatch/system_dispatch.hpp) and of every generated system unit, which makes the
// backend's engine (EngineOf below; backends/engine_adapter.hpp puts it behind the engine
// interface). Free of CUDA types: host/ builds with g++ alone; a backend's engine is defined
// where its compiler sees it (backends/cpu/cpu_engine.hpp, kernels/cuda_engine.cuh).
// C++17-clean: nvcc compiles it.
#pragma once

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

}  // namespace chens
