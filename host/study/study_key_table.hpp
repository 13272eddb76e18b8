// The study keys, each declared once (study_keys.cpp): section, name, the Study member it
// sets with its type and range rule, the studies it applies to, how it is printed, and its
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

// [parameters]: whether a parameter's values may be 0 (gravity, the Lennard-Jones epsilon:
// the rules of model.gravity and model.lj_epsilon) or must be > 0 (the other keys'). The keys'
// rules and the check of every drawn value (study_parameters.cpp) both read it.
bool parameter_may_be_zero(ParameterId p);

// The TOML text of a value (what --dry-run prints after "key = ").
std::string toml_text(const KeyValue& v);

enum class Printout { toml, json };

// How a key's value is read (with its messages), read back from a Study, and allowed.
struct KeyType {
  std::function<void(const toml::node&, const std::string& key, Study&)> parse;
  // The member's value; empty for members whose value is resolved (std::optional members),
  // which their key prints and documents by its own `printed` and `doc_default`.
  std::function<KeyValue(const Study&)> value;
  std::string allowed;  // the docs' "allowed", in the words of the messages
};

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

// The type of a key a model declares itself (ModelDescription::own_keys): an array of finite
// numbers, each satisfying `ok` (`rule` its text, " > 0"), kept in Study::model_values under
// `path`, where Study{} has none: an empty array (model_numbers reads it back).
KeyType own_numbers(const char* path, const char* what, const char* rule, bool (*ok)(double));
// The value of such a key in the study (empty where not given).
const std::vector<double>& model_numbers(const Study& s, const char* path);

// Every key, section by section, each section's keys in the order messages list them: the
// table of study_keys.cpp with each registered model's own keys (with_own_keys).
const std::vector<StudyKey>& study_keys();
// The table with the models' own keys (ModelDescription::own_keys), in the models' order, each
// with KeyScope::model after the last key of its section (a new section's at the end); throws
// std::logic_error naming a key declared twice.
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
