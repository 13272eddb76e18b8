// The one dispatch from a resolved study to the entry of the systems list that runs it, on
// either backend (Backend: backends/backend.hpp): run_study<CpuBackend> is instantiated in
// run_study.cpp, run_study<CudaBackend> in kernels/cuda_backend.cu, where the GPU's units are.
// C++17-clean: nvcc compiles it.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

#include "backends/backend.hpp"
#include "dispatch/custom_models.hpp"
#include "dispatch/model_traits.hpp"
#include "dispatch/system_list.hpp"

namespace chens {

template <class T>
struct TypeTag {
  using type = T;
};

// One unit of the systems list.
template <class Model_, FormulationId F, bool T>
struct SystemEntry {
  using Model = Model_;
  static constexpr FormulationId formulation = F;
  static constexpr bool tangents = T;
  static bool runs(const Study& s) {
    return s.formulation == F && s.wedge == T && ModelTraits<Model>::matches(s);
  }
};

// Calls f(entry) for each unit of Backend in the systems list, where entry has Model,
// formulation and tangents; stops at the first f that returns true.
template <class Backend, class F>
bool for_each_system(F&& f) {
  bool done = false;
#define CHENS_SYSTEM_ENTRY(F_, T_, ...) \
  if (!done) done = f(SystemEntry<__VA_ARGS__, FormulationId::F_, T_>{});
  if constexpr (std::is_same_v<Backend, CpuBackend>) {
    CHENS_CPU_SYSTEMS(CHENS_SYSTEM_ENTRY)
  } else {
    CHENS_CUDA_SYSTEMS(CHENS_SYSTEM_ENTRY)
  }
#undef CHENS_SYSTEM_ENTRY
  return done;
}

// Whether this build runs the study on Backend: an entry of the systems list, or of a user
// model registered by chens_add_model (dispatch/custom_models.hpp).
template <class Backend>
bool has_system(const Study& s) {
  return for_each_system<Backend>([&](auto e) { return decltype(e)::runs(s); }) ||
         find_custom_entry(s, Backend::name) != nullptr;
}

// The study's ensemble on Backend, by the entry of the systems list that matches it.
template <class Backend>
EnsembleResult run_study(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  EnsembleResult r;
  bool ran = for_each_system<Backend>([&](auto e) {
    using E = decltype(e);
    if (!E::runs(s)) return false;
    r = run_system<Backend, typename E::Model, E::formulation, E::tangents>(s, rp, spec);
    return true;
  });
  if (!ran) {
    if (const CustomRunFn run = find_custom_entry(s, Backend::name)) {
      r = run(s, rp, spec);
      ran = true;
    }
  }
  if (!ran)
    throw std::runtime_error(std::string("this build has no ") + Backend::name + " unit for model.kind = \"" +
                             model_name(s) +
                             "\", integrator.formulation = \"" +
                             formulation_name(s.formulation) + "\", integrator.precision = \"" + s.precision +
                             "\" and output.wedge = " + (s.wedge ? "true" : "false") +
                             " (the systems list, CMakeLists.txt)");
  r.state_names = physical_state_names(s);
  return r;
}

// Calls f(TypeTag<Model>) with the model of the study (kind, precision, size) from the
// systems list's built-in models; false when the build has none (user models: custom_models.hpp).
template <class F>
bool with_study_model(const Study& s, F&& f) {
#define CHENS_MODEL_ENTRY(...)                    \
  if (ModelTraits<__VA_ARGS__>::matches(s)) {     \
    f(TypeTag<__VA_ARGS__>{});                    \
    return true;                                  \
  }
  CHENS_MODELS(CHENS_MODEL_ENTRY)
#undef CHENS_MODEL_ENTRY
  return false;
}

}  // namespace chens
