// User models (docs/custom-models.md: chens_add_model's, and model.source's compiled on first
// use) as the study layer sees them: one description for all of them, which reads the spec's
// registration (dispatch/custom_models.hpp) of the model model.kind names. Their [model]
// entries are their own parameters (read by study_files.cpp from the registration).
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "dispatch/custom_models.hpp"
#include "models/model_description.hpp"
#include "study/study_values.hpp"

namespace chens {

namespace {

std::vector<FormulationId> formulations(const Study& s) {
  std::vector<FormulationId> out;
  for (const CustomEntry& e : custom_model_of(s).entries)
    if (std::find(out.begin(), out.end(), e.formulation) == out.end()) out.push_back(e.formulation);
  return out;
}

const char* formulations_note(const Study& s) {
  return custom_model_of(s).from_header ? "the formulations of a user model from its header"
                                        : "chens_add_model's FORMULATIONS";
}

std::vector<std::string> state_names(const Study& s) {  // q by the spec's names, then p<name>
  std::vector<std::string> names = custom_model_of(s).coordinates;
  for (const std::string& c : custom_model_of(s).coordinates) names.push_back("p" + c);
  return names;
}

std::vector<double> default_initial(const Study& s) {
  const CustomModelInfo& m = custom_model_of(s);
  std::vector<double> z(static_cast<std::size_t>(2 * m.dof), std::nan(""));
  if (m.has_initial) m.initial(s.parameters.data(), z.data());
  return z;
}

// The methods its executable built, its initial data's size, finite V and phi there, and
// independent constraints (Q = J M^-1 J^T of 002 eq. 28 well conditioned: every formulation
// solves with it, and a singular Q is a model or data error no integration can repair).
void validate(const Study& s) {
  const CustomModelInfo& m = custom_model_of(s);
  // The built methods that integrate the formulation: RATTLE, its compositions and the
  // Lobatto IIIA-IIIB pair the constrained equations alone.
  MethodMask methods = 0;
  for (const CustomEntry& e : m.entries)
    if (e.formulation == s.formulation) methods |= e.methods;
  methods &= s.formulation == FormulationId::constrained ? constrained_methods : ~constrained_methods;
  if (!has_method(methods, s.method)) {
    std::string names;
    for (int i = 0; i < method_count; ++i)
      if (has_method(methods, static_cast<MethodId>(i)))
        names += (names.empty() ? "\"" : ", \"") + std::string(method_name(static_cast<MethodId>(i))) + "\"";
    // (A model from a header has every method: only chens_add_model's METHODS leave some out.)
    throw StudyError(std::string("integrator.method = \"") + method_name(s.method) + "\": model.kind = \"" + m.name +
                     "\" is built with methods " + names + " (chens_add_model's METHODS)");
  }
  // A model's tangent system (output.lyapunov) is compiled on first use from its header, or
  // built in by chens_add_model's TANGENTS (CPU units of its fixed-step methods).
  if (s.lyapunov_spectrum && !m.from_header)
    throw StudyError("output.lyapunov_spectrum: model.kind = \"" + m.name +
                     "\" is built into this executable by chens_add_model; the spectrum's tangent systems are compiled "
                     "on first use only: name its header in model.source (docs/lyapunov.md)");
  if (s.reference_method != MethodId::dopri5 && !m.from_header)
    throw StudyError(std::string("output.reference_method = \"") + method_name(s.reference_method) + "\": model.kind = \"" +
                     m.name +
                     "\" is built into this executable by chens_add_model; a reference by DOP853 or Vern9 is compiled "
                     "on first use only: name its header in model.source (docs/jit.md)");
  if (s.lyapunov && !m.from_header) {
    bool built = false;
    for (const CustomEntry& e : m.entries)
      built = built || (e.tangents && e.formulation == s.formulation && has_method(e.methods, s.method));
    if (!built)
      throw StudyError("output.lyapunov: model.kind = \"" + m.name +
                       "\" is built into this executable by chens_add_model without the tangent system of "
                       "integrator.formulation = \"" +
                       formulation_name(s.formulation) + "\" and method \"" + method_name(s.method) +
                       "\"; build it with chens_add_model's TANGENTS, or name its header in model.source and chens "
                       "compiles its tangent system on first use (docs/lyapunov.md)");
  }
  if (s.initial.empty() && !m.has_initial)
    throw StudyError("model.initial is missing: model.kind = \"" + m.name + "\" (" + m.header +
                     ") has no default initial state; give " + std::to_string(2 * m.dof) + " numbers (q, then p)");
  const std::vector<double> z = initial_state(s);
  if (z.size() != static_cast<std::size_t>(2 * m.dof))
    throw StudyError("model.initial has " + std::to_string(z.size()) + " numbers; model.kind = \"" + m.name + "\" needs " +
                     std::to_string(2 * m.dof) + " (q, then p: " + std::to_string(m.dof) + " each)");
  for (std::size_t i = 0; i < z.size(); ++i)
    if (!std::isfinite(z[i]))
      throw StudyError("the initial state of model.kind = \"" + m.name + "\" has a non-finite component " +
                       physical_state_names(s)[i] + " = " + shortest(z[i]));
  const InitialCheck c = m.check(s.parameters.data(), z.data());
  if (!std::isfinite(c.potential))
    throw StudyError("the potential V of model.kind = \"" + m.name + "\" is not finite at the initial state (V = " +
                     shortest(c.potential) + "; " + m.header + ", parameters as given)");
  for (std::size_t a = 0; a < c.phi.size(); ++a)
    if (!std::isfinite(c.phi[a]))
      throw StudyError("constraint " + std::to_string(a) + " of model.kind = \"" + m.name +
                       "\" is not finite at the initial state (phi = " + shortest(c.phi[a]) + ")");
  constexpr double max_condition = 1e12;
  if (!(c.gram_condition <= max_condition))
    throw StudyError("the constraints of model.kind = \"" + m.name +
                     "\" are dependent at the initial state: Q = J M^-1 J^T "
                     "has condition number " +
                     shortest(c.gram_condition) + " (> " + shortest(max_condition) +
                     "; infinite: singular or not positive definite, e.g. a mass <= 0). Choose initial data where the "
                     "constraint gradients are independent");
}

// Its spec's AutoModel (auto_model_traits.hpp), over the spec its header defines.
std::string cpp_type(const Study& s) { return "AutoModel<" + custom_model_of(s).spec_type + ", double>"; }
// A model from a header is named with its header's file name.
std::string label(const Study& s) {
  const CustomModelInfo& m = custom_model_of(s);
  if (m.header.empty()) return m.name;
  return m.name + " (" + std::filesystem::path(m.header).filename().string() + ")";
}

void system_args(const Study& s, SystemArgs& a) { a.custom = s.parameters; }
void system_key(const Study& s, ModelKey& k) { k.custom_name = s.custom_model; }
bool angular_momentum(const Study& s) { return custom_model_of(s).angular_momentum; }

}  // namespace

const ModelDescription& user_model_description() {
  static const ModelDescription d{
      .kind = ModelKind::custom,
      .name = "user-model",
      .keys = {"model.source"},
      .formulations = formulations,
      .formulations_note = formulations_note,
      .lyapunov = true,  // from a header (validate): its tangent system over nested dual numbers
      .cpp_type = cpp_type,
      .state_names = state_names,
      .default_initial = default_initial,
      .validate = validate,
      .system_args = system_args,
      .conserves_angular_momentum = angular_momentum,
      .system_key = system_key,
      .label = label,
      .constraints = [](const Study& s) { return std::int64_t{custom_model_of(s).constraints}; },
  };
  return d;
}

}  // namespace chens
