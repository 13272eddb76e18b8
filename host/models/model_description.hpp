// What the study layer needs to know about a model (issue 42, item 2): one description per
// model, registered in one list (model_registry.cpp), which reading, checking, resolving and
// printing a study ask instead of naming a model. A built-in model is its header under
// include/chens/models, its description here (host/models/<model>.cpp), its traits
// (host/models/<model>_traits.hpp) and its lines in the systems list (chens_model(), which
// makes its ModelKind and puts it in the registry, and chens_system(); docs/adding-a-model.md);
// user models (chens_add_model, model.source) share one description (user_model.cpp) that
// reads their spec's registration (custom_models.hpp).
//
// The description says which of the key table's model-dependent keys the model takes (a key
// declared with KeyScope::model is refused for every other model, with the names of those that
// take it), the keys it declares itself (own_keys: a model's key no other model had, such as
// the double pendulum's model.lengths, is declared here, not in study.hpp and study_keys.cpp),
// which formulations it has and which methods its kind of equations allow, its
// state's names, its default initial state, its own rules for the study's values, and what its
// system units are given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "study/study.hpp"
#include "study/study_key_table.hpp"

namespace chens {

struct ModelDescription {
  ModelKind kind;    // the systems list's key (dispatch/system_args.hpp)
  const char* name;  // model.kind's value; "user-model" for the description user models share
  // The keys of the key table (study_key_table.hpp) declared with KeyScope::model that apply
  // to it: "model.atoms", "parameters.mass", "first_passage.linear_momentum_error", ...
  std::vector<std::string> keys;
  // The keys it declares itself (study_keys() puts them at the end of their section, with
  // KeyScope::model; their values live in Study::model_values): it takes them too, and a model
  // that lists one in `keys` shares it.
  std::vector<StudyKey> own_keys = {};
  // integrator.formulation's values it has ("constrained": the equations RATTLE integrates),
  // and the one a study gets without integrator.formulation (RATTLE's aside).
  std::vector<FormulationId> (*formulations)(const Study&);
  // Where a user model's formulations come from (chens_add_model's FORMULATIONS, the defaults
  // of a model from a header), for the message refusing another; nullptr: the model itself.
  const char* (*formulations_note)(const Study&) = nullptr;
  FormulationId default_formulation = FormulationId::dirac;
  // false: its equations are an ODE of its own (the penalty pendulum, 003): no constraints to
  // project, nothing for RATTLE to integrate, no other formulation.
  bool constrained = true;
  // Its Hamiltonian is separable (T(p) + V(q)), which Störmer–Verlet needs.
  bool separable = false;
  // output.reference's default is "auto": a closed-form solution is cheap (the pendulums).
  bool closed_form_reference = false;
  // output.wedge: its consistent initial tangents are written (004 §3.2).
  bool wedge = false;
  // output.lyapunov: its tangent systems exist (its model rebinds to dual numbers,
  // geometry/tangent_system.hpp) and carry generic initial tangents if not the wedge's.
  bool lyapunov = false;
  // integrator.precision = "float" has units for it (the rest of the rule in `validate`).
  bool single_precision = false;

  // The C++ type of its model in the systems list, under namespace chens, spelt as the
  // compiler names it ("Chain<double, 12>", default template arguments written out): what a
  // unit compiled on first use instantiates (dispatch/jit_systems.cpp).
  std::string (*cpp_type)(const Study&);
  // The physical state's component names (state columns, output.periodogram's values).
  std::vector<std::string> (*state_names)(const Study&);
  // The initial state where model.initial is not given.
  std::vector<double> (*default_initial)(const Study&);
  // Its own rules (sizes, initial data on its manifold, key pairs): StudyError naming the key;
  // called after the rules every model shares (formulation, method, precision).
  void (*validate)(const Study&);
  // Fills what its system units read from SystemArgs beyond the shared fields (nullptr:
  // nothing more; mass, length and gravity are every model's).
  void (*system_args)(const Study&, SystemArgs&) = nullptr;
  // Whether it conserves the total angular momentum (no gravity, no pivot): the metric
  // angular_momentum_error is reported and [first_passage] may check it.
  bool (*conserves_angular_momentum)(const Study&);
  // Fills what picks its unit of the systems list beyond the kind and precision (a chain's
  // atoms, a user model's name); nullptr: nothing.
  void (*system_key)(const Study&, ModelKey&) = nullptr;
  // output.phase_error's period of the nominal instance; nullptr: it has no closed-form period.
  double (*nominal_period)(const Study&) = nullptr;
  // The step where integrator.h is not given and the method has a fixed step (the penalty
  // pendulum: from integrator.steps_per_oscillation); nullptr: integrator.h's default.
  double (*default_step)(const Study&) = nullptr;
  // Each body's mass as summary.json prints it (model.masses resolved); nullptr: the model
  // prints model.mass alone. (A key of the model's own prints itself: its StudyKey's `printed`.)
  std::vector<double> (*body_masses)(const Study&) = nullptr;
  // How messages name the study's model beyond model.kind ("chain N = 12"); nullptr: model.kind.
  std::string (*label)(const Study&) = nullptr;
  // Its number m of holonomic constraints (0: none, as for the penalty pendulum, whose
  // equations are an ODE on R^2n): the Lyapunov spectrum has 2(n - m) exponents
  // (output.lyapunov_spectrum).
  std::int64_t (*constraints)(const Study&) = nullptr;

  bool takes(const std::string& key) const;
  // The study's number of Lyapunov exponents, 2(n - m) (output.lyapunov_spectrum's rule and
  // `chens models`'s line): its state's size less twice its constraints.
  std::int64_t spectrum_exponents(const Study& s) const;
};

// Every built-in model, in model.kind's documented order, then the user models' description.
const std::vector<const ModelDescription*>& model_descriptions();
// The built-in model of that model.kind, or nullptr.
const ModelDescription* find_built_in_model(const std::string& name);
// The description of the study's model.
const ModelDescription& model_of(const Study& s);
// The names of the models that take `key`, quoted and joined ("\"chain\" and
// \"double-pendulum\"", "user models"), for the message refusing it elsewhere.
std::string models_taking(const std::string& key);
// "\"name\"".
std::string quoted(const char* name);
// The items as a message lists them: "a", "a and b", "a, b and c".
std::string and_list(const std::vector<std::string>& items);

// Shared by the descriptions: formulation lists, and rules that two models have alike.
std::vector<FormulationId> formulations_without_penalty();  // every formulation but "penalty"
// The rigid pendulum's state, default initial state and rule for it (pendulum.cpp), which the
// penalty pendulum shares.
std::vector<std::string> pendulum_state_names(const Study&);
std::vector<double> pendulum_default_initial(const Study&);
void validate_pendulum_initial(const Study&);
// A model under gravity or held by a pivot: no conserved angular momentum.
inline bool no_angular_momentum(const Study&) { return false; }
// The relative deviation a bond or link length of model.initial may have from its parameter:
// coordinates typed to about 7 digits pass.
inline constexpr double length_rel_tol = 1e-6;

}  // namespace chens
