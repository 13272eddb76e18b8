// chens models [--source HEADER]: the models this chens runs, from the model registry
// (host/models): each one's keys, formulations, state and defaults; the user models built into
// the executable (chens_add_model) and, with --source, those a header defines (model.source,
// compiled on first use).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>

#include "cli/cli.hpp"
#include "cli/cli_internal.hpp"
#include "dispatch/custom_models.hpp"
#include "dispatch/source_models.hpp"
#include "models/model_description.hpp"
#include "study/study_key_table.hpp"

namespace chens::cli {

namespace {

std::string joined(const std::vector<std::string>& items, const std::string& separator = ", ") {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : separator) + i;
  return out;
}

// A long state (a chain's) by its first and last names and its size.
std::string state_text(const std::vector<std::string>& names) {
  if (names.size() <= 12) return joined(names);
  return joined({names.begin(), names.begin() + 4}) + ", ..., " + names.back() + " (" + std::to_string(names.size()) +
         " numbers)";
}

void describe(const Study& s, const std::string& title, std::ostream& out) {
  const ModelDescription& model = model_of(s);
  out << title << "\n";
  std::vector<std::string> keys;
  if (is_custom(s)) {
    const CustomModelInfo& m = custom_model_of(s);
    for (std::size_t i = 0; i < m.parameters.size(); ++i)
      keys.push_back("model." + m.parameters[i].name + " (" + shortest(m.parameters[i].value) + ")");
  }
  for (const std::string& k : model.keys)
    if (!(is_custom(s) && k == "model.source")) keys.push_back(k);
  out << "  keys          " << (keys.empty() ? std::string("none beyond every study's") : joined(keys)) << "\n";
  std::vector<std::string> formulations;
  for (FormulationId f : model.formulations(s))
    formulations.push_back(
        f == FormulationId::constrained
            ? std::string("constrained (methods rattle, rattle4, rattle4-suzuki, rattle6, rattle8, lobatto3)")
            : formulation_name(f));
  out << "  formulations  " << joined(formulations)
      << (model.default_formulation != FormulationId::dirac
              ? std::string(" (the default: ") + formulation_name(model.default_formulation) + ")"
              : std::string())
      << "\n";
  out << "  state         " << state_text(model.state_names(s)) << "\n";
  out << "  reference     "
      << (model.closed_form_reference ? "closed form (output.reference = \"auto\" by default)"
                                      : "numerical, DOPRI5 at output.reference_tol (output.reference = \"none\" by default)")
      << "\n";
  std::vector<std::string> also;
  if (model.separable) also.push_back("integrator.method = \"verlet\"");
  if (model.wedge) also.push_back("output.wedge");
  if (model.lyapunov) also.push_back("output.lyapunov");
  if (model.lyapunov && model.constraints) {
    // The spectrum's exponents for the model's defaults, where study_resolve.cpp allows them.
    const std::int64_t k = model.spectrum_exponents(s);
    if (k <= max_spectrum_exponents) also.push_back("output.lyapunov_spectrum (" + std::to_string(k) + " exponents)");
  }
  if (model.nominal_period) also.push_back("output.phase_error");
  if (model.single_precision) also.push_back("integrator.precision = \"float\"");
  if (model.conserves_angular_momentum(s)) also.push_back("the angular momentum error");
  if (!also.empty()) out << "  also          " << joined(also) << "\n";
}

}  // namespace

int models_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    out << help_text("models");
    return exit_ok;
  }
  if (!args.empty() && (args.size() != 2 || args[0] != "--source")) {
    err << "chens models: unexpected arguments; the one option is --source HEADER\n" << see_help("models");
    return exit_bad_input;
  }
  std::vector<std::string> from_header;
  try {
    // (as model.source: an absolute path, which the generated unit includes)
    if (!args.empty()) from_header = load_source_models(std::filesystem::absolute(args[1]).lexically_normal().string());
  } catch (const StudyError& e) {
    err << "chens models: " << e.what() << "\n";
    return exit_bad_input;
  }
  bool first = true;
  const auto separate = [&] {
    if (!first) out << "\n";
    first = false;
  };
  for (const ModelDescription* m : model_descriptions()) {
    if (m->kind == ModelKind::custom) continue;
    Study s;
    s.model_kind = m->kind;
    separate();
    describe(s, std::string("model.kind = \"") + m->name + "\"", out);
  }
  for (const CustomModelInfo& m : custom_models()) {
    const bool named = std::find(from_header.begin(), from_header.end(), m.name) != from_header.end();
    if (m.from_header && !named) continue;  // (none but --source's are loaded here)
    Study s;
    s.model_kind = ModelKind::custom;
    s.custom_model = m.name;
    for (const CustomModelParameter& p : m.parameters) s.parameters.push_back(p.value);
    separate();
    describe(s,
             "model.kind = \"" + m.name + "\" (a user model: " + m.header +
                 (m.from_header ? ", model.source" : ", chens_add_model") + ")",
             out);
  }
  return exit_ok;
}

}  // namespace chens::cli
