// The study keys, each declared once (study_keys.cpp, and a model's own keys in its
// description, host/models): section, name, the Study member it sets with its type and range
// rule (study_key_types.hpp), the studies it applies to, how it is printed, and its
// documentation. Reading a study (study_files.cpp), refusing a key outside its scope
// (study_resolve.cpp), --dry-run's TOML, summary.json's "study" and the docs' key tables
// (study_export.cpp) are all generated from this one table.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "study/study.hpp"
#include "study/study_key_types.hpp"
#include "study/study_values.hpp"

namespace chens {

// Whether the study's model is a user model (its [model] entries are its spec's parameters).
bool is_custom(const Study& s);

// Which studies a key belongs to: given in any other it is refused, and it is printed
// (to_toml, to_json) only in its own.
enum class KeyScope {
  every_study,
  model,      // the models whose description lists the key (models/model_description.hpp)
  baumgarte,  // integrator.formulation = "baumgarte"
};
struct StudyKey;
bool in_scope(const StudyKey& key, const Study& s);

// The TOML text of a value (what --dry-run prints after "key = ").
std::string toml_text(const KeyValue& v);

struct StudyKey {
  const char* section;
  const char* name;
  KeyType type;
  KeyScope scope = KeyScope::every_study;
  const char* scope_note = nullptr;  // the reason the message refusing it elsewhere gives
  // The value to print, or nullopt where it is not printed, when that is not simply the
  // member's value within the key's scope (resolved values, defaults filled in).
  std::optional<KeyValue> (*printed)(const Study&, const RunParams<double>&, Printout) = nullptr;
  const char* print_after = nullptr;  // to_toml prints it after this key of its section where that is printed
  const char* doc_default = nullptr;  // the docs' default where Study{}'s value is not the whole story
  const char* doc_allowed = nullptr;  // cross-key conditions, after the type's rule in the docs
  const char* meaning = nullptr;      // the docs' description (markdown)

  std::string path() const { return std::string(section) + "." + name; }
};

// Every key, section by section, each section's keys in the order messages list them: the
// table of study_keys.cpp with each registered model's own keys (with_own_keys).
const std::vector<StudyKey>& study_keys();
// The table with the models' own keys (ModelDescription::own_keys), in the models' order, each
// with KeyScope::model after the last model-dependent key of its section, else after its last
// key (a new section's at the end); throws std::logic_error naming a key declared twice.
struct ModelDescription;
std::vector<StudyKey> with_own_keys(std::vector<StudyKey> table, const std::vector<const ModelDescription*>& models);
// The sections, in order.
const std::vector<std::string>& study_sections();
// The keys of a section (none for an unknown section).
std::vector<const StudyKey*> section_keys(const std::string& section);

// Throws StudyError for a key of `section` that the study gives outside the key's scope.
void refuse_keys_out_of_scope(const Study& s, const std::string& section);
// The value of a key as to_toml or to_json prints it; nullopt where it is not printed.
std::optional<KeyValue> printed_value(const StudyKey& key, const Study& s, const RunParams<double>& rp, Printout to);

}  // namespace chens
