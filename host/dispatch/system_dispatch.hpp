// The one dispatch from a resolved study to the entry of the systems list that runs it, on
// either backend (Backend: backends/backend.hpp): run_study<CpuBackend> is instantiated in
// run_study.cpp, run_study<CudaBackend> in kernels/cuda_backend.cu, where the GPU's units are.
// C++17-clean: nvcc compiles it.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/backend.hpp"
#include "dispatch/custom_models.hpp"
#include "dispatch/jit_systems.hpp"
#include "dispatch/all_model_traits.hpp"
#include "dispatch/chain_sizes.hpp"
#include "dispatch/system_list.hpp"
#include "dispatch/systems_ahead_of_time.hpp"
#include "study/study.hpp"

namespace chens {

template <class T>
struct TypeTag {
  using type = T;
};

// The methods the build compiled the entry (Backend, Model, F, Tangents) ahead of time for
// (dispatch/systems_ahead_of_time.hpp): every method but first_use_methods, those of the
// default study, or none (compiled on first use).
template <class Backend, class Model, FormulationId F, bool Tangents>
constexpr MethodMask ahead_of_time_methods() {
#if CHENS_AHEAD_OF_TIME_ALL
  return listed_methods;
#else
  MethodMask methods = 0;
#define CHENS_AHEAD_OF_TIME_ENTRY(F_, T_, M_, ...) \
  if constexpr (std::is_same_v<Model, __VA_ARGS__> && F == FormulationId::F_ && Tangents == T_) methods = M_;
  if constexpr (std::is_same_v<Backend, CpuBackend>) {
    CHENS_CPU_SYSTEMS_AHEAD_OF_TIME(CHENS_AHEAD_OF_TIME_ENTRY)
  } else {
    CHENS_CUDA_SYSTEMS_AHEAD_OF_TIME(CHENS_AHEAD_OF_TIME_ENTRY)
  }
#undef CHENS_AHEAD_OF_TIME_ENTRY
  return methods;
#endif
}

// One entry of the systems list on Backend.
template <class Backend, class Model_, FormulationId F, bool T>
struct SystemEntry {
  using Model = Model_;
  static constexpr FormulationId formulation = F;
  static constexpr bool tangents = T;
  // What a unit of the build instantiates; 0: the entry is compiled on first use.
  static constexpr MethodMask built_methods = ahead_of_time_methods<Backend, Model_, F, T>();
  static bool runs(const Study& s) { return runs(s, model_key(s)); }
  // With the model's key given (a chain of another size).
  static bool runs(const Study& s, const ModelKey& key) {
    // (no unit of the list carries the spectrum's tangents: they are compiled on first use)
    return s.formulation == F && s.tangents() == T && !s.lyapunov_spectrum && ModelTraits<Model>::matches(key);
  }
  // Whether a unit of the build runs the study (its method included; the numerical reference by
  // DOPRI5: output.reference_method's other pairs are compiled on first use).
  static bool built_for(const Study& s) {
    return runs(s) && has_method(built_methods, s.method) && s.reference_method == MethodId::dopri5;
  }
};

// Calls f(entry) for each entry of Backend in the systems list, where entry has Model,
// formulation, tangents and built_methods; stops at the first f that returns true.
template <class Backend, class F>
bool for_each_system(F&& f) {
  bool done = false;
#define CHENS_SYSTEM_ENTRY(F_, T_, ...) \
  if (!done) done = f(SystemEntry<Backend, __VA_ARGS__, FormulationId::F_, T_>{});
  if constexpr (std::is_same_v<Backend, CpuBackend>) {
    CHENS_CPU_SYSTEMS(CHENS_SYSTEM_ENTRY)
  } else {
    CHENS_CUDA_SYSTEMS(CHENS_SYSTEM_ENTRY)
  }
#undef CHENS_SYSTEM_ENTRY
  return done;
}

// Whether the systems list has an entry for the study on Backend (built ahead of time or not).
template <class Backend>
bool has_listed_system(const Study& s) {
  return for_each_system<Backend>([&](auto e) { return decltype(e)::runs(s); });
}

// Whether the build has a unit for the study on Backend: an entry of the systems list
// compiled ahead of time for its method, or a user model registered by chens_add_model
// (dispatch/custom_models.hpp).
template <class Backend>
bool has_built_in_system(const Study& s) {
  return for_each_system<Backend>([&](auto e) { return decltype(e)::built_for(s); }) ||
         find_custom_entry(s, Backend::name) != nullptr;
}

// Whether a unit compiled on first use (dispatch/jit_systems.hpp) can run the study on
// Backend: any system of the Backend's list (one the build left out, CHENS_AHEAD_OF_TIME; or
// any, CHENS_SYSTEMS=jit), a chain of a size the list lacks in a formulation, precision and
// variant the list has for its chains, the tangent system (output.wedge, output.lyapunov) of
// any of those the list has without tangents, in double precision, where the model has those
// tangents (as resolve() rules; on the CPU only: the GPU's tangents are the pendulums' entries
// of the list), or a user model from a header (model.source; its formulations and precision
// are checked by resolve()). Float chains keep the list's size (resolve() refuses others); user
// models of chens_add_model are compiled ahead of time. On the GPU only in a build with CUDA
// (jit_gpu_built).
template <class Backend>
bool jit_possible(const Study& s) {
  constexpr bool gpu = std::is_same_v<Backend, CudaBackend>;
  if (gpu && !jit_gpu_built()) return false;
  if (s.model_kind == ModelKind::custom) {
    const CustomModelInfo* m = find_custom_model(s.custom_model);
    return m && m->from_header && s.precision == Precision::double_precision &&
           (!s.tangents() || (!gpu && model_has_tangents(s)));
  }
  if (has_listed_system<Backend>(s)) return true;
  if (s.tangents()) {
    if (gpu || !model_has_tangents(s)) return false;
    Study plain = s;
    plain.wedge = plain.lyapunov = plain.lyapunov_spectrum = false;
    return jit_possible<Backend>(plain);
  }
  const ModelKey key = model_key(s);
  if (key.kind != ModelKind::chain) return false;
  if (key.atoms < 2 || key.atoms > max_jit_chain_atoms) return false;
  if (key.single && key.atoms != float_chain_atoms) return false;
  const std::vector<int>& sizes = compiled_chain_sizes();
  return std::any_of(sizes.begin(), sizes.end(), [&](int n) {
    ModelKey built = key;
    built.atoms = n;
    return for_each_system<Backend>([&](auto e) { return decltype(e)::runs(s, built); });
  });
}

// Whether the study runs on Backend: a unit of the build, or one compiled on first use.
template <class Backend>
bool has_system(const Study& s) {
  return has_built_in_system<Backend>(s) || jit_possible<Backend>(s);
}

// Whether running the study on Backend compiles its system on first use.
template <class Backend>
bool compiles_on_first_use(const Study& s) {
  return jit_possible<Backend>(s) && (jit_forced() || !has_built_in_system<Backend>(s));
}

// The study's ensemble on Backend, by the entry of the systems list that matches it, or by
// a unit compiled on first use.
template <class Backend>
EnsembleResult run_study(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  const SystemArgs args = system_args(s, rp);
  std::unique_ptr<Engine> engine;
  if (compiles_on_first_use<Backend>(s))
    engine = jit_make_engine(jit_system(s, std::is_same_v<Backend, CudaBackend>), args, spec);
  if (!engine)
    for_each_system<Backend>([&](auto e) {
      using E = decltype(e);
      if constexpr (E::built_methods == 0) {
        return false;
      } else {
        if (!E::built_for(s)) return false;
        if constexpr (E::built_methods == listed_methods)
          engine = make_engine<Backend, typename E::Model, E::formulation, E::tangents>(args, spec);
        else engine = make_engine_for<Backend, typename E::Model, E::formulation, E::tangents, E::built_methods>(args, spec);
        return true;
      }
    });
  if (!engine)
    if (const CustomRunFn make = find_custom_entry(s, Backend::name)) engine = make(args, spec);
  if (!engine)
    throw std::runtime_error(std::string("this build has no ") + Backend::name + " unit for model.kind = \"" +
                             model_name(s) + "\", integrator.formulation = \"" + formulation_name(s.formulation) +
                             "\", integrator.precision = \"" + precision_name(s.precision) + "\" and " +
                             (s.tangents() ? "tangents (output.wedge or output.lyapunov)" : "no tangents") +
                             " (the systems list, CMakeLists.txt)");
  EnsembleResult r = drive_segments(*engine, spec);
  r.reference_kind = engine->reference_kind();
  r.state_names = physical_state_names(s);
  return r;
}

// Calls f(TypeTag<Model>) with the model of the study (kind, precision, size) from the
// systems list's built-in models; false when the build has none (user models: custom_models.hpp).
template <class F>
bool with_study_model(const Study& s, F&& f) {
  const ModelKey key = model_key(s);
#define CHENS_MODEL_ENTRY(...)                  \
  if (ModelTraits<__VA_ARGS__>::matches(key)) { \
    f(TypeTag<__VA_ARGS__>{});                  \
    return true;                                \
  }
  CHENS_MODELS(CHENS_MODEL_ENTRY)
#undef CHENS_MODEL_ENTRY
  return false;
}

}  // namespace chens
