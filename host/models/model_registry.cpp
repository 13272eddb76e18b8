// The one list of models the study layer asks (model_description.hpp): the built-in models'
// descriptions in the order of their chens_model() calls (the systems list, CMakeLists.txt;
// generated/dispatch/model_kind.hpp), then the one user models share.
#include "models/model_description.hpp"

#include <algorithm>

#include "dispatch/custom_models.hpp"
#include "dispatch/model_kind.hpp"

namespace chens {

bool ModelDescription::takes(const std::string& key) const {
  return std::find(keys.begin(), keys.end(), key) != keys.end() ||
         std::any_of(own_keys.begin(), own_keys.end(), [&](const StudyKey& k) { return k.path() == key; });
}

// Each model's description (host/models/<model>.cpp), the user models' last.
#define CHENS_DECLARE_DESCRIPTION(id) const ModelDescription& id##_description();
CHENS_BUILT_IN_MODELS(CHENS_DECLARE_DESCRIPTION)
#undef CHENS_DECLARE_DESCRIPTION
const ModelDescription& user_model_description();

const std::vector<const ModelDescription*>& model_descriptions() {
  static const std::vector<const ModelDescription*> models = [] {
    std::vector<const ModelDescription*> all;
#define CHENS_LIST_DESCRIPTION(id) all.push_back(&id##_description());
    CHENS_BUILT_IN_MODELS(CHENS_LIST_DESCRIPTION)
#undef CHENS_LIST_DESCRIPTION
    all.push_back(&user_model_description());
    return all;
  }();
  return models;
}

const ModelDescription* find_built_in_model(const std::string& name) {
  for (const ModelDescription* m : model_descriptions())
    if (m->kind != ModelKind::custom && name == m->name) return m;
  return nullptr;
}

std::int64_t ModelDescription::spectrum_exponents(const Study& s) const {
  return static_cast<std::int64_t>(state_names(s).size()) - 2 * (constraints ? constraints(s) : 0);
}

const ModelDescription& model_of(const Study& s) {
  for (const ModelDescription* m : model_descriptions())
    if (m->kind == s.model_kind) return *m;
  throw StudyError("model.kind: no description of model kind " + std::to_string(static_cast<int>(s.model_kind)));
}

std::string quoted(const char* name) {
  // Appended, not "\"" + name: GCC 12 warns falsely (-Wrestrict) of that insertion.
  std::string out = "\"";
  out.append(name).push_back('"');
  return out;
}

std::string and_list(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return out;
}

std::string models_taking(const std::string& key) {
  std::vector<std::string> names;
  bool users = false;
  for (const ModelDescription* m : model_descriptions())
    if (m->takes(key)) {
      if (m->kind == ModelKind::custom) users = true;
      else names.push_back(quoted(m->name));
    }
  std::string out = names.empty() ? "" : "model.kind = " + and_list(names);
  if (users) out += out.empty() ? "user models" : " and user models";
  return out;
}

std::vector<FormulationId> formulations_without_penalty() {
  std::vector<FormulationId> out;
  for (int f = 0; f < formulation_count; ++f)
    if (FormulationId(f) != FormulationId::penalty) out.push_back(FormulationId(f));
  return out;
}

}  // namespace chens
