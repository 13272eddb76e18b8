// How a study key's value is read (with its messages), read back and allowed: the KeyType
// constructors that the key table (study_keys.cpp) and the models' own keys
// (models/model_description.hpp, through study_key_table.hpp) are built from, one per kind of
// value (a number with its range rule, an integer in a range, a flag, a choice of names, an
// array, a [parameters] law).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "study/study.hpp"
#include "study/study_values.hpp"

namespace chens {

enum class Printout { toml, json };

// How a key's value is read (with its messages), read back from a Study, and allowed.
struct KeyType {
  std::function<void(const toml::node&, const std::string& key, Study&)> parse;
  // The member's value; empty for members whose value is resolved (std::optional members),
  // which their key prints and documents by its own `printed` and `doc_default`.
  std::function<KeyValue(const Study&)> value;
  std::string allowed;  // the docs' "allowed", in the words of the messages
};

inline constexpr std::int64_t no_limit = std::numeric_limits<std::int64_t>::max();

// A range rule of a real key: `rule` is the text of its message ("must be a finite number > 0").
struct Bound {
  const char* rule;
  bool (*ok)(double);
};
// The rules the key table uses, in a namespace of their own so that their short names do not
// reach every file that includes the table (`using namespace rules;` where they are used).
namespace rules {
inline constexpr Bound positive{"> 0", [](double x) { return x > 0; }};
inline constexpr Bound non_negative{">= 0", [](double x) { return x >= 0; }};
inline constexpr Bound zero_is_never{">= 0 (0 = never)", [](double x) { return x >= 0; }};
inline constexpr Bound not_checked{">= 0 (0 = not checked)", [](double x) { return x >= 0; }};
}  // namespace rules

// " >= lo" or " in [lo, hi]": an integer key's rule as messages and docs give it.
std::string integer_rule(std::int64_t lo, std::int64_t hi);

// The Study member's value, set and read back:
template <class M>  // double, or std::optional<double> for a key whose default is resolved
KeyType real(M Study::*member, Bound b) {
  KeyType t;
  t.parse = [member, b](const toml::node& n, const std::string& k, Study& st) {
    st.*member = finite_number(n, k, b.rule, b.ok);
  };
  if constexpr (std::is_same_v<M, double>) t.value = [member](const Study& s) { return KeyValue(s.*member); };
  t.allowed = std::string("finite, ") + b.rule;
  return t;
}

template <class I>  // std::int64_t, or std::uint64_t for the seed
KeyType integer_in(I Study::*member, std::int64_t lo, std::int64_t hi) {
  KeyType t;
  t.parse = [member, lo, hi](const toml::node& n, const std::string& k, Study& st) {
    st.*member = static_cast<I>(integer(n, k, lo, hi));
  };
  t.value = [member](const Study& s) { return KeyValue(s.*member); };
  t.allowed = "integer" + integer_rule(lo, hi);
  return t;
}

// A choice key's allowed values as the docs list them: `"a"`, `"b"`.
template <class V>
std::string allowed_choices(const std::vector<std::pair<std::string, V>>& options) {
  std::string out;
  for (const auto& o : options) out += (out.empty() ? "`\"" : ", `\"") + o.first + "\"`";
  return out;
}
// Names as choices of themselves (a key whose value is the name).
std::vector<std::pair<std::string, std::string>> named_choices(const std::vector<std::string>& names);

template <class M, class V>  // M = V, or std::optional<V> for a key whose default is resolved
KeyType one_of(M Study::*member, const std::vector<std::pair<std::string, V>>& options) {
  KeyType t;
  t.parse = [member, options](const toml::node& n, const std::string& k, Study& st) {
    st.*member = choice<V>(n, k, options);
  };
  if constexpr (std::is_same_v<M, V>)
    t.value = [member, options](const Study& s) {
      for (const auto& o : options)
        if (o.second == s.*member) return KeyValue(o.first);
      return KeyValue(std::string());
    };
  t.allowed = allowed_choices(options);
  return t;
}

// Every value of an enumeration 0, ..., count - 1 with its name: the names it is chosen by.
template <class E, class Name>
std::vector<std::pair<std::string, E>> every_id(int count, Name name) {
  std::vector<std::pair<std::string, E>> out;
  for (int i = 0; i < count; ++i) out.emplace_back(name(static_cast<E>(i)), static_cast<E>(i));
  return out;
}

KeyType flag(bool Study::*member);
// One of the names, kept as the name.
KeyType strings_one_of(std::string Study::*member, const std::vector<std::string>& names);
// A non-empty array of finite numbers; `what` is the message for anything else.
KeyType numbers(std::vector<double> Study::*member, const char* what, const char* rule, bool (*ok)(double));
// An array of integers in [lo, hi] without repeats, ascending where `ascending`.
KeyType indices(std::vector<std::int64_t> Study::*member, const char* what, std::int64_t lo, std::int64_t hi,
                bool ascending);
// A string; `what` is the message for anything else.
KeyType text(std::string Study::*member, const char* what);

// [parameters]: whether a parameter's values may be 0 (gravity, the Lennard-Jones epsilon:
// the rules of model.gravity and model.lj_epsilon) or must be > 0 (the other keys'). The keys'
// rules and the check of every drawn value (study_parameters.cpp) both read it.
bool parameter_may_be_zero(ParameterId p);
// [parameters]: the key of a parameter's per-instance law, a string "uniform(min, max)",
// "normal(mean, sd)", "log-uniform(min, max)" or an array of values (parameter_laws.hpp),
// whose values and bounds obey the parameter's own rule (parameter_may_be_zero). A model
// declares the keys of the parameters that are its own, such as a chain's bond length.
KeyType parameter_law_key(ParameterId p);
// How a law key prints: where the parameter varies.
template <ParameterId P>
std::optional<KeyValue> printed_law(const Study& s, const RunParams<double>&, Printout) {
  const ParameterLaw& l = s.law(P);
  if (!l.varies()) return std::nullopt;
  if (l.kind == LawKind::list) return l.values;
  return law_text(l);
}

// A key a model declares itself (ModelDescription::own_keys), whose value is kept in
// Study::model_values under its path. An array of finite numbers, each satisfying `ok` (`rule`
// its text, " > 0"), where Study{} has none: an empty array (model_numbers reads it back).
KeyType own_numbers(const char* path, const char* what, const char* rule, bool (*ok)(double));
// The value of such a key in the study (empty where not given).
const std::vector<double>& model_numbers(const Study& s, const char* path);

// A model's own key of one value: its "section.key" and its default, the value a study has
// where the key is not given. The model's description declares the key with own_real,
// own_integer or own_choice and reads its value back with model_value.
template <class V>
struct OwnKey {
  const char* path;
  V fallback;
};
// A finite number within the rule (rules::positive, ...).
KeyType own_real(const OwnKey<double>& key, Bound b);
// An integer in [lo, hi].
KeyType own_integer(const OwnKey<std::int64_t>& key, std::int64_t lo, std::int64_t hi);
// One of the names (a string).
KeyType own_choice(const OwnKey<const char*>& key, const std::vector<std::string>& names);
double model_value(const Study& s, const OwnKey<double>& key);
std::int64_t model_value(const Study& s, const OwnKey<std::int64_t>& key);
std::string model_value(const Study& s, const OwnKey<const char*>& key);

}  // namespace chens
