// The KeyType constructors (study_key_types.hpp): how each kind of key value is read, with the
// messages chens has always given for bad values, read back and allowed.
#include "study/study_key_types.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace chens {

bool parameter_may_be_zero(ParameterId p) { return p == ParameterId::gravity || p == ParameterId::lj_epsilon; }

std::string integer_rule(std::int64_t lo, std::int64_t hi) {
  return hi == no_limit ? " >= " + std::to_string(lo) : " in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

KeyType flag(bool Study::*member) {
  KeyType t;
  t.parse = [member](const toml::node& n, const std::string& k, Study& st) { st.*member = boolean(n, k); };
  t.value = [member](const Study& s) { return KeyValue(s.*member); };
  t.allowed = "`true`, `false`";
  return t;
}

std::vector<std::pair<std::string, std::string>> named_choices(const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::string>> options;
  for (const std::string& name : names) options.emplace_back(name, name);
  return options;
}

KeyType strings_one_of(std::string Study::*member, const std::vector<std::string>& names) {
  return one_of(member, named_choices(names));
}

// A non-empty array of finite numbers; `what` is the message for anything else.
KeyType numbers(std::vector<double> Study::*member, const char* what, const char* rule, bool (*ok)(double)) {
  KeyType t;
  t.parse = [member, what, rule, ok](const toml::node& n, const std::string& k, Study& st) {
    st.*member = number_array(n, k, what, rule, ok);
  };
  t.value = [member](const Study& s) { return KeyValue(s.*member); };
  t.allowed = std::string("finite numbers") + rule;
  return t;
}

KeyType own_numbers(const char* path, const char* what, const char* rule, bool (*ok)(double)) {
  KeyType t;
  t.parse = [path, what, rule, ok](const toml::node& n, const std::string& k, Study& st) {
    st.model_values[path] = number_array(n, k, what, rule, ok);
  };
  t.value = [path](const Study& s) { return KeyValue(model_numbers(s, path)); };
  t.allowed = std::string("finite numbers") + rule;
  return t;
}

const std::vector<double>& model_numbers(const Study& s, const char* path) {
  static const std::vector<double> none;
  const auto it = s.model_values.find(path);
  return it == s.model_values.end() ? none : std::get<std::vector<double>>(it->second);
}

KeyType own_real(const OwnKey<double>& key, Bound b) {
  KeyType t;
  t.parse = [path = key.path, b](const toml::node& n, const std::string& k, Study& st) {
    st.model_values[path] = finite_number(n, k, b.rule, b.ok);
  };
  t.value = [key](const Study& s) { return KeyValue(model_value(s, key)); };
  t.allowed = std::string("finite, ") + b.rule;
  return t;
}

KeyType own_integer(const OwnKey<std::int64_t>& key, std::int64_t lo, std::int64_t hi) {
  KeyType t;
  t.parse = [path = key.path, lo, hi](const toml::node& n, const std::string& k, Study& st) {
    st.model_values[path] = integer(n, k, lo, hi);
  };
  t.value = [key](const Study& s) { return KeyValue(model_value(s, key)); };
  t.allowed = "integer" + integer_rule(lo, hi);
  return t;
}

KeyType own_choice(const OwnKey<const char*>& key, const std::vector<std::string>& names) {
  const std::vector<std::pair<std::string, std::string>> options = named_choices(names);
  KeyType t;
  t.parse = [path = key.path, options](const toml::node& n, const std::string& k, Study& st) {
    st.model_values[path] = choice<std::string>(n, k, options);
  };
  t.value = [key](const Study& s) { return KeyValue(model_value(s, key)); };
  t.allowed = allowed_choices(options);
  return t;
}

namespace {

// The value of a model's own key of one value: the study's where given, else the key's default.
template <class V, class Stored>
Stored own_value(const Study& s, const OwnKey<V>& key) {
  const auto it = s.model_values.find(key.path);
  if (it == s.model_values.end()) return Stored(key.fallback);
  return std::get<Stored>(it->second);
}

}  // namespace

double model_value(const Study& s, const OwnKey<double>& key) { return own_value<double, double>(s, key); }
std::int64_t model_value(const Study& s, const OwnKey<std::int64_t>& key) {
  return own_value<std::int64_t, std::int64_t>(s, key);
}
std::string model_value(const Study& s, const OwnKey<const char*>& key) {
  return own_value<const char*, std::string>(s, key);
}

KeyType indices(std::vector<std::int64_t> Study::*member, const char* what, std::int64_t lo, std::int64_t hi,
                bool ascending) {
  KeyType t;
  t.parse = [member, what, lo, hi, ascending](const toml::node& n, const std::string& k, Study& st) {
    st.*member = integer_array(n, k, what, lo, hi, ascending);
  };
  t.value = [member](const Study& s) { return KeyValue(s.*member); };
  t.allowed = std::string(ascending ? "ascending integers" : "integers") + integer_rule(lo, hi) + ", no repeats";
  return t;
}

namespace {

// [parameters]: a parameter's law, a string "uniform(min, max)", "normal(mean, sd)",
// "log-uniform(min, max)" or an array of values (parameter_laws.hpp); `b` is the rule of the
// parameter's own key, which a list's values and a uniform law's bounds obey.
ParameterLaw read_law(const toml::node& n, const std::string& k, Bound b) {
  ParameterLaw law;
  if (n.is_array()) {
    law.kind = LawKind::list;
    law.values = number_array(n, k,
                              "must be a distribution (\"uniform(min, max)\", \"normal(mean, sd)\", "
                              "\"log-uniform(min, max)\") or a non-empty array of values",
                              (std::string(" ") + b.rule).c_str(), b.ok);
    return law;
  }
  if (n.is_number())
    fail(n, k,
         "one value for every instance is the model's or integrator's own key; [parameters] takes a "
         "distribution (\"uniform(min, max)\", \"normal(mean, sd)\", \"log-uniform(min, max)\") or an array of values");
  const auto given = n.as_string();
  if (!given)
    fail(n, k,
         "must be a distribution (\"uniform(min, max)\", \"normal(mean, sd)\", \"log-uniform(min, max)\") or "
         "an array of values");
  std::string t;
  for (char c : given->get())
    if (c != ' ' && c != '\t') t += c;
  const std::size_t open = t.find('('), close = t.rfind(')');
  const std::string name = t.substr(0, open);
  const std::vector<std::pair<std::string, LawKind>> kinds = {
      {"uniform", LawKind::uniform}, {"normal", LawKind::normal}, {"log-uniform", LawKind::log_uniform}};
  const auto kind = std::find_if(kinds.begin(), kinds.end(), [&](const auto& e) { return e.first == name; });
  if (kind == kinds.end())
    fail(n, k,
         "unknown distribution \"" + name +
             "\"; allowed: \"uniform(min, max)\", \"normal(mean, sd)\", "
             "\"log-uniform(min, max)\", or an array of values");
  law.kind = kind->second;
  const bool normal = law.kind == LawKind::normal;
  const std::string form = normal ? name + "(mean, sd)" : name + "(min, max)";
  if (open == std::string::npos || close != t.size() - 1 || close < open)
    fail(n, k, "must read \"" + form + "\" with two numbers");
  const std::string args = t.substr(open + 1, close - open - 1);
  const std::size_t comma = args.find(',');
  double x[2] = {0, 0};
  const std::string parts[2] = {args.substr(0, comma), comma == std::string::npos ? "" : args.substr(comma + 1)};
  for (int i = 0; i < 2; ++i) {
    const std::string& part = parts[i];
    const char* end = part.data() + part.size();
    const auto r = part.empty() ? std::from_chars_result{part.data(), std::errc::invalid_argument}
                                : std::from_chars(part.data(), end, x[i]);
    if (comma == std::string::npos || r.ec != std::errc() || r.ptr != end || !std::isfinite(x[i]))
      fail(n, k, "must read \"" + form + "\" with two finite numbers");
  }
  law.a = x[0];
  law.b = x[1];
  if (normal) {
    if (!(law.b > 0)) fail(n, k, "the standard deviation must be > 0");
    if (!b.ok(law.a)) fail(n, k, std::string("the mean must be ") + b.rule);
    return law;
  }
  if (!(law.a < law.b)) fail(n, k, "min must be < max (got min = " + shortest(law.a) + ", max = " + shortest(law.b) + ")");
  if (law.kind == LawKind::log_uniform && !(law.a > 0)) fail(n, k, "log-uniform needs min > 0");
  if (!b.ok(law.a)) fail(n, k, std::string("min must be ") + b.rule);
  return law;
}

}  // namespace

KeyType parameter_law_key(ParameterId p) {
  const Bound b = parameter_may_be_zero(p) ? rules::non_negative : rules::positive;
  KeyType t;
  t.parse = [p, b](const toml::node& n, const std::string& k, Study& st) {
    st.vary[static_cast<std::size_t>(p)] = read_law(n, k, b);
  };
  t.value = [p](const Study& s) -> KeyValue {
    const ParameterLaw& l = s.law(p);
    if (l.kind == LawKind::list) return l.values;
    return law_text(l);
  };
  t.allowed = std::string("`\"uniform(min, max)\"`, `\"normal(mean, sd)\"`, `\"log-uniform(min, max)\"`, or an "
                          "array of values; values ") +
              b.rule;
  return t;
}

KeyType text(std::string Study::*member, const char* what) {
  KeyType t;
  t.parse = [member, what](const toml::node& n, const std::string& k, Study& st) {
    auto v = n.as_string();
    if (!v) fail(n, k, what);
    st.*member = v->get();
  };
  t.value = [member](const Study& s) { return KeyValue(s.*member); };
  t.allowed = "a string";
  return t;
}

}  // namespace chens
