// User models registered at start-up (issue 19; docs/custom-models.md): a model written as a
// spec of V and phi (models/auto_model.hpp) becomes model.kind = "<its name>" of a chens
// executable built with chens_add_model() (cmake/ChensAddModel.cmake), in that project's tree
// or out of chens's. The CMake function generates, per model, the systems-list units of its
// entries (make_engine<Backend, AutoModel<Spec, double>, F, false>, the same template as the
// built-in models') and one registration unit whose static initialiser calls
// register_custom_model(); the study parser, run_study's dispatch, the outputs and
// `chens check` then look the model up here by name. Built-in models are not in this
// registry: they are the compile-time systems list (dispatch/system_list.hpp).
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <chens/formulations/formulation.hpp>
#include <chens/ensemble/run_params.hpp>

#include "backends/engine.hpp"
#include "backends/ensemble_spec.hpp"
#include "dispatch/system_args.hpp"

namespace chens {

struct Study;

// One entry of a user model on one backend: make_engine_for<Backend, AutoModel<Spec, double>,
// F, tangents, methods>, the methods chens_add_model's METHODS named (every method by
// default); with `tangents`, the tangent system of output.lyapunov (chens_add_model's
// TANGENTS: its fixed-step methods, on the CPU). A model from a header has entries without
// `run`: its systems, tangent ones too, are compiled on first use.
using CustomRunFn = std::unique_ptr<Engine> (*)(const SystemArgs&, const EnsembleSpec&);
struct CustomEntry {
  const char* backend;  // "cpu" or "cuda" (Backend::name)
  FormulationId formulation;
  CustomRunFn run;
  MethodMask methods = all_methods;
  bool tangents = false;
};

// What the initial data look like to the model (checked before anything runs).
struct InitialCheck {
  double potential = 0;       // V(q0)
  std::vector<double> phi;    // phi(q0)
  double gram_condition = 0;  // the 2-norm condition number of Q(q0) (002 eq. 28)
};

struct CustomModelParameter {
  std::string name;
  double value;  // the default
  std::string meaning;
};

struct CustomModelInfo {
  std::string name;    // model.kind
  std::string header;  // the spec's header (for messages and summary.json)
  // A model from a header compiled on first use (model.source, dispatch/source_models.hpp):
  // its systems too are compiled on first use, from the spec's C++ type ("::ns::Spec"), and
  // keyed by the SHA-256 of the header's files. Its entries (CPU, every formulation of
  // chens_add_model's default, every method) have no `run`.
  bool from_header = false;
  std::string spec_type;
  std::string source_hash;
  int dof = 0, constraints = 0;
  std::vector<CustomModelParameter> parameters;
  std::vector<std::string> coordinates;  // names of q; state columns are these and p<name>
  bool has_initial = false;              // the spec gives default initial data
  void (*initial)(const double* k, double* z) = nullptr;
  bool angular_momentum = false;  // the spec names a conserved angular momentum
  InitialCheck (*check)(const double* k, const double* z) = nullptr;
  std::size_t bytes_per_instance = 0;           // an instance of its plain system
  std::size_t bytes_per_instance_tangents = 0;  // of its tangent system (output.lyapunov)
  std::vector<CustomEntry> entries;
};

// Adds a model; a second model of the same name, or one whose name is a built-in model's,
// is refused (std::logic_error at start-up: two specs would silently shadow each other).
bool register_custom_model(CustomModelInfo info);
// Adds a model from a header (dispatch/source_models.hpp), replacing one registered from a
// header under the same name; a name of a built-in model or of a model registered by
// register_custom_model is refused (StudyError, naming both). Registered models stay where
// they are in memory (references to them stay valid).
void register_header_model(CustomModelInfo info);
const std::deque<CustomModelInfo>& custom_models();
// The registered model of that name, or nullptr.
const CustomModelInfo* find_custom_model(const std::string& name);
// The study's user model (model.kind names one); throws StudyError where it does not.
const CustomModelInfo& custom_model_of(const Study& s);
// Whether `name` is a parameter of some registered model (so that [model] and --set accept it
// before the study's model.kind is known).
bool is_custom_parameter_name(const std::string& name);
// The entry of the study's user model for that backend, formulation and method, or nullptr.
CustomRunFn find_custom_entry(const Study& s, const char* backend);

}  // namespace chens
