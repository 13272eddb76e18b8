// The registry of user models (custom_models.hpp).
#include "dispatch/custom_models.hpp"

#include <cstring>
#include <deque>
#include <stdexcept>

#include "study/study.hpp"

namespace chens {

namespace {
// A deque: a model from a header is added while references to the others may be held.
std::deque<CustomModelInfo>& registry() {
  static std::deque<CustomModelInfo> models;  // filled by static initialisers: constructed on first use
  return models;
}
}  // namespace

bool register_custom_model(CustomModelInfo info) {
  for (int k = 0; k < model_kind_count; ++k)
    if (info.name == model_kind_name(static_cast<ModelKind>(k)))
      throw std::logic_error("chens_add_model: a user model may not be called \"" + info.name +
                             "\", the name of a built-in model.kind (" + info.header + ")");
  for (const CustomModelInfo& m : registry())
    if (m.name == info.name)
      throw std::logic_error("chens_add_model: two user models are called \"" + info.name + "\" (" + m.header + ", " +
                             info.header + ")");
  registry().push_back(std::move(info));
  return true;
}

void register_header_model(CustomModelInfo info) {
  for (int k = 0; k < model_kind_count; ++k)
    if (info.name == model_kind_name(static_cast<ModelKind>(k)))
      throw StudyError("model.source = \"" + info.header + "\" defines a model called \"" + info.name +
                       "\", the name of a built-in model.kind; rename the spec (its name member)");
  for (CustomModelInfo& m : registry())
    if (m.name == info.name) {
      if (!m.from_header)
        throw StudyError("model.source = \"" + info.header + "\" defines a model called \"" + info.name +
                         "\", the name of a model built into this executable (" + m.header +
                         ", chens_add_model); rename one of the specs (its name member)");
      if (m.header != info.header || m.source_hash != info.source_hash) m = std::move(info);
      return;
    }
  registry().push_back(std::move(info));
}

const std::deque<CustomModelInfo>& custom_models() { return registry(); }

const CustomModelInfo* find_custom_model(const std::string& name) {
  for (const CustomModelInfo& m : registry())
    if (m.name == name) return &m;
  return nullptr;
}

const CustomModelInfo& custom_model_of(const Study& s) {
  const CustomModelInfo* m = s.model_kind == ModelKind::custom ? find_custom_model(s.custom_model) : nullptr;
  if (!m) throw StudyError("model.kind = \"" + s.custom_model + "\" is not a model of this executable");
  return *m;
}

bool is_custom_parameter_name(const std::string& name) {
  for (const CustomModelInfo& m : registry())
    for (const CustomModelParameter& p : m.parameters)
      if (p.name == name) return true;
  return false;
}

CustomRunFn find_custom_entry(const Study& s, const char* backend) {
  // (the spectrum's tangent systems and the references by DOP853 or Vern9 are compiled on first
  // use only)
  if (s.model_kind != ModelKind::custom || s.precision != Precision::double_precision || s.lyapunov_spectrum ||
      s.reference_method != MethodId::dopri5)
    return nullptr;
  const CustomModelInfo* m = find_custom_model(s.custom_model);
  if (!m) return nullptr;
  for (const CustomEntry& e : m->entries)
    if (e.formulation == s.formulation && e.tangents == s.tangents() && has_method(e.methods, s.method) &&
        std::strcmp(e.backend, backend) == 0)
      return e.run;  // nullptr for a model from a header: compiled on first use
  return nullptr;
}

}  // namespace chens
