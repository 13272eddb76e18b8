#include "study/study.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

#include <toml++/toml.h>

#include <chens/diagnostics/metrics.hpp>
#include <chens/models/penalty_pendulum.hpp>
#include <chens/models/chain.hpp>
#include <chens/models/pendulum.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "dispatch/chain_sizes.hpp"
#include "study/default_study.hpp"

namespace chens {

const char* method_name(MethodId m) {
  switch (m) {
    case MethodId::euler: return "euler";
    case MethodId::rk2: return "rk2";
    case MethodId::rk4: return "rk4";
    case MethodId::dopri5: return "dopri5";
    case MethodId::midpoint: return "midpoint";
    case MethodId::gauss2: return "gauss2";
    case MethodId::rattle: return "rattle";
    case MethodId::verlet: return "verlet";
  }
  return "?";
}

int method_order(MethodId m) {
  switch (m) {
    case MethodId::euler: return 1;
    case MethodId::rk2: return 2;
    case MethodId::rk4: return 4;
    case MethodId::dopri5: return 5;
    case MethodId::midpoint: return 2;
    case MethodId::gauss2: return 4;
    case MethodId::rattle: return 2;
    case MethodId::verlet: return 2;
  }
  return 0;
}

namespace {

std::string where(const toml::node& n) {
  const auto& src = n.source();
  std::ostringstream os;
  if (src.path && !src.path->empty()) {
    os << *src.path;
    if (*src.path != "--set" && src.begin.line > 0) os << ":" << src.begin.line;
  } else {
    os << "study";
  }
  return os.str();
}

// Shortest text that reads back to the same double (what the user most likely typed).
std::string shortest(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

// A value as the user wrote it, for messages and run names. Arrays are rendered here, not
// by toml::toml_formatter: toml++ 3.3 sizes an array's floats with static_cast<size_t>(
// log10(|x|)), undefined for |x| < 1 (found by scripts/fuzz-study.sh).
std::string render(const toml::node& n) {
  std::ostringstream os;
  if (auto f = n.as_floating_point()) {
    const std::string x = shortest(f->get());
    os << x << (x.find_first_of(".eEn") == std::string::npos ? ".0" : "");  // a float reads as one
  } else if (auto s = n.as_string()) {
    os << '"' << s->get() << '"';
  } else if (n.is_table()) {
    os << "a table";
  } else if (auto a = n.as_array()) {
    if (a->empty()) return "[]";
    os << "[ ";
    for (std::size_t i = 0; i < a->size(); ++i) os << (i ? ", " : "") << render(*a->get(i));
    os << " ]";
  } else if (auto i = n.as_integer()) {
    os << i->get();
  } else if (auto b = n.as_boolean()) {
    os << (b->get() ? "true" : "false");
  } else {  // dates and times: a scalar, which the formatter prints without sizing anything
    os << toml::toml_formatter{n, toml::format_flags::none};
  }
  return os.str();
}

[[noreturn]] void fail(const toml::node& n, const std::string& key, const std::string& what) {
  throw StudyError(where(n) + ": " + key + " = " + render(n) + ": " + what);
}

double number(const toml::node& n, const std::string& key) {
  if (auto f = n.as_floating_point()) return f->get();
  if (auto i = n.as_integer()) return static_cast<double>(i->get());
  fail(n, key, "must be a number");
}

double finite_number(const toml::node& n, const std::string& key, const char* rule, const std::function<bool(double)>& ok) {
  const double x = number(n, key);
  if (!std::isfinite(x) || !ok(x)) fail(n, key, std::string("must be a finite number ") + rule);
  return x;
}

std::int64_t integer(const toml::node& n, const std::string& key, std::int64_t lo, std::int64_t hi) {
  auto i = n.as_integer();
  if (!i) fail(n, key, "must be an integer");
  const std::int64_t v = i->get();
  if (v < lo || v > hi) fail(n, key, "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

// A non-empty array of finite numbers each satisfying ok (described by rule).
std::vector<double> number_array(const toml::node& n, const std::string& key, const char* what, const char* rule,
                                 const std::function<bool(double)>& ok) {
  auto a = n.as_array();
  if (!a || a->empty()) fail(n, key, what);
  std::vector<double> out;
  for (std::size_t i = 0; i < a->size(); ++i) {
    const toml::node& e = *a->get(i);
    const double x = e.is_number() ? number(e, key) : std::numeric_limits<double>::quiet_NaN();
    if (!std::isfinite(x) || !ok(x)) fail(n, key, "element " + std::to_string(i) + " must be a finite number" + rule);
    out.push_back(x);
  }
  return out;
}

// An array of integers in [lo, hi] (empty allowed), in ascending order without repeats
// when `sorted_unique` (otherwise any order, repeats refused).
std::vector<std::int64_t> integer_array(const toml::node& n, const std::string& key, const char* what, std::int64_t lo,
                                        std::int64_t hi, bool sorted_unique) {
  auto a = n.as_array();
  if (!a) fail(n, key, what);
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < a->size(); ++i) {
    auto v = a->get(i)->as_integer();
    if (!v || v->get() < lo || v->get() > hi)
      fail(n, key, "element " + std::to_string(i) + " must be an integer in [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
    for (std::int64_t x : out)
      if (x == v->get()) fail(n, key, "element " + std::to_string(i) + " (" + std::to_string(x) + ") is repeated");
    if (sorted_unique && !out.empty() && v->get() < out.back())
      fail(n, key, "must be in ascending order (element " + std::to_string(i) + " is " + std::to_string(v->get()) +
                       ", after " + std::to_string(out.back()) + ")");
    out.push_back(v->get());
  }
  return out;
}

bool boolean(const toml::node& n, const std::string& key) {
  auto b = n.as_boolean();
  if (!b) fail(n, key, "must be true or false");
  return b->get();
}

template <class Enum>
Enum choice(const toml::node& n, const std::string& key, const std::vector<std::pair<std::string, Enum>>& options) {
  std::string allowed;
  for (const auto& o : options) allowed += (allowed.empty() ? "\"" : ", \"") + o.first + "\"";
  auto s = n.as_string();
  if (!s) fail(n, key, "must be one of " + allowed);
  for (const auto& o : options)
    if (o.first == s->get()) return o.second;
  fail(n, key, "unknown name; allowed: " + allowed);
}

struct KeySpec {
  const char* name;
  std::function<void(const toml::node&, const std::string&, Study&)> apply;
};

using Schema = std::vector<std::pair<const char*, std::vector<KeySpec>>>;

const Schema& schema() {
  static const Schema s = {
      {"model",
       {
           {"kind",
            [](const toml::node& n, const std::string& k, Study& st) {
              st.model_kind = choice<std::string>(
                  n, k, {{"pendulum", "pendulum"}, {"chain", "chain"}, {"penalty-pendulum", "penalty-pendulum"}});
            }},
           {"initial",
            [](const toml::node& n, const std::string& k, Study& st) {
              st.initial = number_array(n, k, "must be an array of numbers (pendulum: [x, y, px, py]; chain: 4 * atoms numbers)",
                                        "", [](double) { return true; });
            }},
           {"mass", [](const toml::node& n, const std::string& k, Study& st) {
              st.mass = finite_number(n, k, "> 0", [](double x) { return x > 0; });
            }},
           {"masses",
            [](const toml::node& n, const std::string& k, Study& st) {
              st.masses = number_array(n, k, "must be an array of one mass per atom", " > 0", [](double x) { return x > 0; });
            }},
           {"length", [](const toml::node& n, const std::string& k, Study& st) {
              st.length = finite_number(n, k, "> 0", [](double x) { return x > 0; });
            }},
           {"gravity", [](const toml::node& n, const std::string& k, Study& st) {
              st.gravity = finite_number(n, k, ">= 0", [](double x) { return x >= 0; });
            }},
           {"atoms", [](const toml::node& n, const std::string& k, Study& st) {
              st.atoms = integer(n, k, 2, 1000000);
            }},
           {"bond_length", [](const toml::node& n, const std::string& k, Study& st) {
              st.bond_length = finite_number(n, k, "> 0", [](double x) { return x > 0; });
            }},
           {"lj_epsilon", [](const toml::node& n, const std::string& k, Study& st) {
              st.lj_epsilon = finite_number(n, k, ">= 0", [](double x) { return x >= 0; });
            }},
           {"penalty", [](const toml::node& n, const std::string& k, Study& st) {
              st.penalty = finite_number(n, k, "> 0", [](double x) { return x > 0; });
            }},
           {"constraint",
            [](const toml::node& n, const std::string& k, Study& st) {
              st.penalty_constraint = choice<std::string>(n, k, {{"G", "G"}, {"G1", "G1"}});
            }},
       }},
      {"integrator",
       {
           {"formulation",
            [](const toml::node& n, const std::string& k, Study& st) {
              st.formulation = choice<FormulationId>(n, k,
                                                     {{"naive", FormulationId::naive},
                                                      {"total", FormulationId::total},
                                                      {"extended", FormulationId::extended},
                                                      {"dirac", FormulationId::dirac},
                                                      {"impetus", FormulationId::impetus},
                                                      {"impetus-modified", FormulationId::impetus_modified},
                                                      {"constrained", FormulationId::constrained},
                                                      {"baumgarte", FormulationId::baumgarte},
                                                      {"penalty", FormulationId::penalty}});
            }},
           {"method",
            [](const toml::node& n, const std::string& k, Study& st) {
              st.method = choice<MethodId>(n, k,
                                           {{"euler", MethodId::euler},
                                            {"rk2", MethodId::rk2},
                                            {"rk4", MethodId::rk4},
                                            {"dopri5", MethodId::dopri5},
                                            {"midpoint", MethodId::midpoint},
                                            {"gauss2", MethodId::gauss2},
                                            {"rattle", MethodId::rattle},
                                            {"verlet", MethodId::verlet}});
            }},
           {"h", [](const toml::node& n, const std::string& k, Study& st) {
              st.h = finite_number(n, k, "> 0", [](double x) { return x > 0; });
            }},
           {"t_end", [](const toml::node& n, const std::string& k, Study& st) {
              st.t_end = finite_number(n, k, ">= 0", [](double x) { return x >= 0; });
            }},
           {"rtol", [](const toml::node& n, const std::string& k, Study& st) {
              st.rtol = finite_number(n, k, ">= 0", [](double x) { return x >= 0; });
            }},
           {"atol", [](const toml::node& n, const std::string& k, Study& st) {
              st.atol = finite_number(n, k, ">= 0", [](double x) { return x >= 0; });
            }},
           {"tol", [](const toml::node& n, const std::string& k, Study& st) {
              st.tol = finite_number(n, k, "> 0", [](double x) { return x > 0; });
            }},
           {"max_iterations", [](const toml::node& n, const std::string& k, Study& st) {
              st.max_iterations = integer(n, k, 1, 1000000);
            }},
           {"max_steps", [](const toml::node& n, const std::string& k, Study& st) {
              st.max_steps = integer(n, k, 1, std::numeric_limits<std::int64_t>::max());
            }},
           {"impetus_reset", [](const toml::node& n, const std::string& k, Study& st) {
              st.impetus_reset = finite_number(n, k, ">= 0 (0 = never)", [](double x) { return x >= 0; });
            }},
           {"precision",
            [](const toml::node& n, const std::string& k, Study& st) {
              st.precision = choice<std::string>(n, k, {{"double", "double"}, {"float", "float"}});
            }},
           {"baumgarte_alpha", [](const toml::node& n, const std::string& k, Study& st) {
              st.baumgarte_alpha = finite_number(n, k, ">= 0", [](double x) { return x >= 0; });
            }},
           {"baumgarte_beta", [](const toml::node& n, const std::string& k, Study& st) {
              st.baumgarte_beta = finite_number(n, k, ">= 0", [](double x) { return x >= 0; });
            }},
           {"steps_per_oscillation", [](const toml::node& n, const std::string& k, Study& st) {
              st.steps_per_oscillation = integer(n, k, 4, 1000000);
            }},
       }},
      {"projection",
       {
           {"momentum", [](const toml::node& n, const std::string& k, Study& st) { st.momentum = boolean(n, k); }},
           {"position", [](const toml::node& n, const std::string& k, Study& st) { st.position = boolean(n, k); }},
           {"tol", [](const toml::node& n, const std::string& k, Study& st) {
              st.projection_tol = finite_number(n, k, "> 0", [](double x) { return x > 0; });
            }},
           {"max_iterations", [](const toml::node& n, const std::string& k, Study& st) {
              st.projection_max_iterations = integer(n, k, 1, 1000000);
            }},
           {"every", [](const toml::node& n, const std::string& k, Study& st) {
              st.projection_every = integer(n, k, 1, std::int64_t(1) << 40);
            }},
           {"scheme",
            [](const toml::node& n, const std::string& k, Study& st) {
              st.projection_scheme = choice<std::string>(n, k, {{"endpoint", "endpoint"}, {"midpoint", "midpoint"}});
            }},
       }},
      {"ensemble",
       {
           {"size", [](const toml::node& n, const std::string& k, Study& st) {
              st.size = integer(n, k, 1, std::int64_t(1) << 40);
            }},
           {"seed", [](const toml::node& n, const std::string& k, Study& st) {
              st.seed = static_cast<std::uint64_t>(integer(n, k, 0, std::numeric_limits<std::int64_t>::max()));
            }},
           {"perturbation", [](const toml::node& n, const std::string& k, Study& st) {
              st.perturbation = finite_number(n, k, ">= 0", [](double x) { return x >= 0; });
            }},
           {"distribution",
            [](const toml::node& n, const std::string& k, Study& st) {
              st.distribution = choice<std::string>(n, k, {{"uniform", "uniform"}, {"normal", "normal"}});
            }},
           {"kind",
            [](const toml::node& n, const std::string& k, Study& st) {
              st.kind = choice<std::string>(n, k, {{"consistent", "consistent"}, {"inconsistent", "inconsistent"}});
            }},
           {"phi_offset", [](const toml::node& n, const std::string& k, Study& st) {
              st.phi_offset = finite_number(n, k, ">= 0", [](double x) { return x >= 0; });
            }},
           {"psi_offset", [](const toml::node& n, const std::string& k, Study& st) {
              st.psi_offset = finite_number(n, k, ">= 0", [](double x) { return x >= 0; });
            }},
           {"lost_residual", [](const toml::node& n, const std::string& k, Study& st) {
              st.lost_residual = finite_number(n, k, ">= 0 (0 = never)", [](double x) { return x >= 0; });
            }},
           {"lost_unconverged",
            [](const toml::node& n, const std::string& k, Study& st) { st.lost_unconverged = boolean(n, k); }},
           {"lost_diverged", [](const toml::node& n, const std::string& k, Study& st) {
              st.lost_diverged = finite_number(n, k, ">= 0 (0 = never)", [](double x) { return x >= 0; });
            }},
           {"only", [](const toml::node& n, const std::string& k, Study& st) {
              st.only = integer_array(n, k, "must be an array of instance indices, e.g. [3, 17] (summary.json's lost_examples)",
                                      0, std::numeric_limits<std::int64_t>::max(), true);
            }},
       }},
      {"output",
       {
           {"sample_dt", [](const toml::node& n, const std::string& k, Study& st) {
              st.sample_dt = finite_number(n, k, "> 0", [](double x) { return x > 0; });
            }},
           {"trajectory", [](const toml::node& n, const std::string& k, Study& st) { st.trajectory = boolean(n, k); }},
           {"reference", [](const toml::node& n, const std::string& k, Study& st) {
              st.reference = choice<std::string>(n, k, {{"auto", "auto"}, {"none", "none"}});
            }},
           {"reference_tol", [](const toml::node& n, const std::string& k, Study& st) {
              st.reference_tol = finite_number(n, k, "> 0", [](double x) { return x > 0; });
            }},
           {"states", [](const toml::node& n, const std::string& k, Study& st) { st.states = boolean(n, k); }},
           {"record", [](const toml::node& n, const std::string& k, Study& st) {
              st.record = integer_array(n, k, "must be an array of instance indices, e.g. [0, 1, 2]", 0,
                                        std::numeric_limits<std::int64_t>::max(), true);
            }},
           {"phase_error", [](const toml::node& n, const std::string& k, Study& st) {
              st.phase_error = integer_array(n, k, "must be an array of numbers of periods, e.g. [2, 4, 10, 20, 30]", 1,
                                             std::int64_t(1) << 40, false);
            }},
           {"periodogram", [](const toml::node& n, const std::string& k, Study& st) {
              auto v = n.as_string();
              if (!v) fail(n, k, "must be the name of a physical state component (\"y\"), or \"\" for none");
              st.periodogram = v->get();
            }},
           {"wedge", [](const toml::node& n, const std::string& k, Study& st) { st.wedge = boolean(n, k); }},
       }},
  };
  return s;
}

std::string section_names() {
  std::string out;
  for (const auto& sec : schema()) out += (out.empty() ? "" : ", ") + std::string(sec.first);
  return out;
}

const std::vector<KeySpec>* find_section(const std::string& name) {
  for (const auto& sec : schema())
    if (name == sec.first) return &sec.second;
  return nullptr;
}

const KeySpec* find_key(const std::vector<KeySpec>& keys, const std::string& name) {
  for (const auto& k : keys)
    if (name == k.name) return &k;
  return nullptr;
}

std::string key_names(const std::vector<KeySpec>& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

// Edit distance (insertions, deletions, substitutions, transpositions of neighbours).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// " (did you mean PREFIX + X?)" for the closest candidate X: within a third of the name's
// length (at least 2 edits), or one a prefix of the other (tolerance, tol); else "".
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates,
                         const std::string& prefix = "") {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const auto& c : candidates) {
    if (c == name) continue;  // "did you mean X?" for X itself helps nobody
    const std::size_t d = edit_distance(name, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  if (best.empty())
    for (const auto& c : candidates)
      if (c != name && std::min(c.size(), name.size()) >= 3 && (c.rfind(name, 0) == 0 || name.rfind(c, 0) == 0)) best = c;
  return best.empty() ? "" : " (did you mean " + prefix + best + "?)";
}

std::string section_suggestion(const std::string& section) {
  std::vector<std::string> names;
  for (const auto& sec : schema()) names.emplace_back(sec.first);
  return did_you_mean(section, names);
}

// The same key in another section (integrator.sample_dt -> output.sample_dt), else the
// closest key of this section.
std::string key_suggestion(const std::string& section, const std::string& key) {
  for (const auto& sec : schema())
    if (section != sec.first && find_key(sec.second, key)) return " (did you mean " + std::string(sec.first) + "." + key + "?)";
  std::vector<std::string> names;
  for (const auto& sec : schema())
    if (section == sec.first)
      for (const auto& k : sec.second) names.emplace_back(k.name);
  return did_you_mean(key, names, section + ".");
}

// A section or key name as a message shows it: as it is when it is a plain name (letters,
// digits, _ - .), else quoted with invisible and non-ASCII bytes escaped, so that
// "integrator.h\xc2\xa0" (a no-break space pasted from a web page) cannot look like the
// integrator.h that "did you mean" offers.
std::string shown_name(const std::string& name) {
  bool plain = !name.empty();
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') plain = false;
  if (plain) return name;
  std::string out = "\"";
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Checks that a key exists; `origin` says where it came from.
const KeySpec& lookup(const std::string& section, const std::string& key, const std::string& origin) {
  const auto* keys = find_section(section);
  if (!keys)
    throw StudyError(origin + ": unknown section [" + shown_name(section) + "]" + section_suggestion(section) +
                     "; allowed sections: " + section_names());
  const auto* spec = find_key(*keys, key);
  if (!spec)
    throw StudyError(origin + ": unknown key " + shown_name(section + "." + key) + key_suggestion(section, key) +
                     "; allowed keys in [" + section + "]: " + key_names(*keys));
  return *spec;
}

// The text toml++ is given: study files are ASCII except in comments, whose non-ASCII
// characters become '?'. toml++ 3.3 (Debian 12) classifies some non-ASCII code points with
// undefined behaviour (unicode_autogenerated.h reaches __builtin_unreachable for U+00A1 to
// U+0499, Greek letters and the section sign included; found by scripts/fuzz-study.sh), so it
// never sees one. Strings (basic, literal, multi-line) are tracked so that '#' in a string is
// not a comment. Throws StudyError at the first non-ASCII byte outside a comment.
std::string ascii_toml(const std::string& text, const std::string& origin) {
  enum class In { code, comment, basic, literal, ml_basic, ml_literal } in = In::code;
  std::string out;
  out.reserve(text.size());
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < text.size(); ++i, ++column) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      if (in != In::comment)
        throw StudyError(origin + ":" + std::to_string(line) + ":" + std::to_string(column) +
                         ": a non-ASCII character outside a comment; study files are ASCII except in comments");
      out += '?';
      while (i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80) ++i;  // the rest of it
      continue;
    }
    const auto starts = [&](const char* tok) { return text.compare(i, std::strlen(tok), tok) == 0; };
    out += static_cast<char>(c);
    if (c == '\n') {
      ++line;
      column = 0;
      if (in == In::comment || in == In::basic || in == In::literal) in = In::code;
      continue;
    }
    switch (in) {
      case In::code:
        if (starts("\"\"\"")) {
          in = In::ml_basic;
          out += "\"\"";
          i += 2;
        } else if (starts("'''")) {
          in = In::ml_literal;
          out += "''";
          i += 2;
        } else if (c == '"') {
          in = In::basic;
        } else if (c == '\'') {
          in = In::literal;
        } else if (c == '#') {
          in = In::comment;
        }
        break;
      case In::basic:
      case In::ml_basic:
        if (c == '\\' && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0x80 && text[i + 1] != '\n') {
          out += text[++i];  // an escaped character (a non-ASCII one is refused above)
          ++column;
        } else if (in == In::basic && c == '"') {
          in = In::code;
        } else if (in == In::ml_basic && starts("\"\"\"")) {
          out += "\"\"";
          i += 2;
          in = In::code;
        }
        break;
      case In::literal:
        if (c == '\'') in = In::code;
        break;
      case In::ml_literal:
        if (starts("'''")) {
          out += "''";
          i += 2;
          in = In::code;
        }
        break;
      case In::comment:
        break;
    }
  }
  return out;
}

// TOML text (from `origin`, a file or --set) as a table. A UTF-8 byte-order mark (which
// some Windows editors write) is dropped; UTF-16 text and binary data are named as such
// rather than reported as a stray character at 1:1.
toml::table parse_toml(const std::string& raw, const std::string& origin) {
  const bool bom = raw.compare(0, 3, "\xEF\xBB\xBF") == 0;
  const std::string text = bom ? raw.substr(3) : raw;
  if (text.compare(0, 2, "\xFF\xFE") == 0 || text.compare(0, 2, "\xFE\xFF") == 0)
    throw StudyError(origin + ": UTF-16 text (it starts with a UTF-16 byte-order mark); study files are ASCII or "
                     "UTF-8 TOML: save it as UTF-8");
  if (const auto nul = text.find('\0'); nul != std::string::npos)
    throw StudyError(origin + ": a NUL byte at byte " + std::to_string(nul + (bom ? 3 : 0)) +
                     ": not a text file (binary data, or UTF-16 text); a study file is ASCII or UTF-8 TOML "
                     "(docs/study-format.md)");
  try {
    return toml::parse(ascii_toml(text, origin), std::string_view(origin));
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << origin << ":" << e.source().begin.line << ":" << e.source().begin.column << ": malformed TOML: "
       << e.description();
    throw StudyError(os.str());
  }
}

// The study file's table (empty without a file).
toml::table read_root(const std::optional<std::string>& path) {
  if (!path) return {};
  // Only a regular file (or a link to one): a directory would read as empty text, and a
  // FIFO or a device could block or never end.
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(*path, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    const char* what = fs::is_directory(st)        ? "a directory"
                       : fs::is_fifo(st)           ? "a FIFO"
                       : fs::is_character_file(st) ? "a character device"
                       : fs::is_block_file(st)     ? "a block device"
                       : fs::is_socket(st)         ? "a socket"
                                                   : "something other than a regular file";
    throw StudyError(*path + ": is " + std::string(what) + ", not a study file; give the path of a .toml file");
  }
  std::ifstream in(*path, std::ios::binary);
  if (!in) throw StudyError(*path + ": cannot open study file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_toml(text.str(), *path);
}

// Every top-level entry of root must be a known section holding known keys.
void check_sections(const toml::table& root) {
  for (const auto& [name, node] : root) {
    const std::string sec(name.str());
    if (!find_section(sec))
      throw StudyError(where(node) + ": unknown section [" + sec + "]" + section_suggestion(sec) +
                       "; allowed sections: " + section_names());
    const auto* tbl = node.as_table();
    if (!tbl) throw StudyError(where(node) + ": " + sec + " must be a table [" + sec + "]");
    for (const auto& [k, v] : *tbl) lookup(sec, std::string(k.str()), where(v));
  }
}

// s without the blanks (spaces, tabs, line ends) at either end.
std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n\v\f");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n\v\f") - first + 1);
}

// --set SECTION.KEY=VALUE: VALUE is read as a TOML value; a bare word is a string. Blanks
// around SECTION, KEY and VALUE are dropped: --set 'integrator.h = 0.05' is what it looks like.
void apply_sets(toml::table& root, const std::vector<std::string>& sets) {
  for (const std::string& s : sets) {
    const auto eq = s.find('=');
    const std::string lhs = s.substr(0, eq);
    const auto period = lhs.find('.');
    const std::string sec = period == std::string::npos ? "" : trimmed(lhs.substr(0, period));
    const std::string key = period == std::string::npos ? "" : trimmed(lhs.substr(period + 1));
    if (eq == std::string::npos || sec.empty() || key.empty())
      throw StudyError("--set " + s + ": expected SECTION.KEY=VALUE, e.g. --set integrator.h=0.05");
    lookup(sec, key, "--set " + s);
    const std::string value = trimmed(s.substr(eq + 1));
    toml::table parsed;
    try {
      parsed = toml::parse(ascii_toml("v = " + value, "--set " + s), std::string_view("--set"));
    } catch (const toml::parse_error&) {
      parsed = toml::table{};
      parsed.insert("v", value);
    }
    if (!root.contains(sec)) root.insert(sec, toml::table{});
    auto* tbl = root[sec].as_table();
    if (!tbl) throw StudyError("--set " + s + ": [" + sec + "] is not a table in the study file");
    tbl->insert_or_assign(key, std::move(*parsed.get("v")));
  }
}

Study study_from_root(const toml::table& root) {
  Study st;
  for (const auto& [sec, keys] : schema()) {
    const auto* tbl = root[sec].as_table();
    if (!tbl) continue;
    for (const auto& spec : keys) {
      if (const toml::node* n = tbl->get(spec.name)) {
        spec.apply(*n, std::string(sec) + "." + spec.name, st);
        st.given.insert(std::string(sec) + "." + spec.name);
      }
    }
  }
  // RATTLE integrates the constrained equations themselves: that is its formulation.
  if (st.method == MethodId::rattle && !st.has("integrator.formulation")) st.formulation = FormulationId::constrained;
  // The penalty model has one set of equations, its own.
  if (st.model_kind == "penalty-pendulum" && !st.has("integrator.formulation")) st.formulation = FormulationId::penalty;
  return st;
}

// A copy of a TOML value node, inserted as root[section][key].
void set_value(toml::table& root, const std::string& section, const std::string& key, const toml::node& value) {
  if (!root.contains(section)) root.insert(section, toml::table{});
  auto* tbl = root[section].as_table();
  if (!tbl) throw StudyError("[" + section + "] is not a table in the study file");
  value.visit([&](const auto& v) { tbl->insert_or_assign(key, v); });
}

// A value as a run name or override shows it: strings without quotes.
std::string plain_value(const toml::node& n) {
  if (const auto* str = n.as_string()) return str->get();
  return render(n);
}

// A run name usable as a directory name below --out: letters, digits and . _ = + - only,
// and no leading '.', so that no name can be "." or ".." or hidden.
std::string directory_safe(std::string name) {
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '=' && c != '+' && c != '-') c = '-';
  if (!name.empty() && name[0] == '.') name[0] = '-';
  return name;
}

struct Override {
  std::string section, key;
  const toml::node* value;
};

}  // namespace

Study load_study(const std::optional<std::string>& path, const std::vector<std::string>& sets) {
  toml::table root = read_root(path);
  if (root.contains("sweep") || root.contains("run"))
    throw StudyError(*path + " holds several runs ([sweep] or [[run]]); this command takes a study with one run");
  check_sections(root);
  apply_sets(root, sets);
  return study_from_root(root);
}

namespace {
std::vector<StudyRun> runs_of(toml::table root, const std::vector<std::string>& sets);
}  // namespace

std::vector<StudyRun> load_runs(const std::optional<std::string>& path, const std::vector<std::string>& sets) {
  return runs_of(read_root(path), sets);
}

std::vector<StudyRun> load_runs_text(const std::string& text, const std::string& origin,
                                     const std::vector<std::string>& sets) {
  return runs_of(parse_toml(text, origin), sets);
}

std::vector<StudyRun> load_default_runs(const std::vector<std::string>& sets) {
  return load_runs_text(builtin_default_study, builtin_default_study_name, sets);
}

namespace {

std::vector<StudyRun> runs_of(toml::table root, const std::vector<std::string>& sets) {
  if (!root.contains("sweep") && !root.contains("run")) {
    check_sections(root);
    apply_sets(root, sets);
    return {StudyRun{"", {}, study_from_root(root)}};
  }
  // Runs: each [[run]] (or the base study alone), times every combination of the [sweep]
  // values; each is the base study with its overrides, then --set.
  struct Partial {
    std::string name;
    std::vector<Override> overrides;
  };
  // Overrides and sweep values point into `source`, which outlives them; root loses its
  // [sweep] and [[run]] and becomes the base study.
  const toml::table source = root;
  std::vector<Partial> explicit_runs;
  if (const toml::node* runs = source.get("run")) {
    const auto* arr = runs->as_array();
    if (!arr || arr->empty() || !arr->is_array_of_tables())
      throw StudyError(where(*runs) + ": run must be a non-empty array of tables [[run]] (name = ..., then keys as " +
                       "SECTION.KEY = value)");
    for (const auto& entry : *arr) {
      const auto& tbl = *entry.as_table();
      Partial p;
      for (const auto& [k, v] : tbl) {
        const std::string sec(k.str());
        if (sec == "name") {
          if (!v.is_string() || v.as_string()->get().empty())
            throw StudyError(where(v) + ": run.name must be a non-empty string");
          p.name = v.as_string()->get();
          continue;
        }
        const auto* keys = v.as_table();
        if (!find_section(sec) || !keys)
          throw StudyError(where(v) + ": [[run]] holds name and SECTION.KEY = value overrides; " + sec +
                           " is not a section (allowed: " + section_names() + ")");
        for (const auto& [kk, vv] : *keys) {
          lookup(sec, std::string(kk.str()), where(vv));
          p.overrides.push_back({sec, std::string(kk.str()), &vv});
        }
      }
      if (p.name.empty()) p.name = "run" + std::to_string(explicit_runs.size() + 1);
      explicit_runs.push_back(std::move(p));
    }
  } else {
    explicit_runs.push_back({});
  }
  struct Axis {
    std::string section, key;
    const toml::array* values;
  };
  std::vector<Axis> axes;
  if (const toml::node* sweep = source.get("sweep")) {
    const auto* tbl = sweep->as_table();
    if (!tbl || tbl->empty())
      throw StudyError(where(*sweep) + ": [sweep] must hold SECTION.KEY = [values...], e.g. integrator.h = [0.1, 0.05]");
    for (const auto& [k, v] : *tbl) {
      const std::string sec(k.str());
      const auto* keys = v.as_table();
      if (!find_section(sec) || !keys)
        throw StudyError(where(v) + ": sweep." + sec + ": unknown section" + section_suggestion(sec) +
                         "; allowed sections: " + section_names());
      for (const auto& [kk, vv] : *keys) {
        lookup(sec, std::string(kk.str()), where(vv));
        const auto* values = vv.as_array();
        if (!values || values->empty())
          throw StudyError(where(vv) + ": sweep." + sec + "." + std::string(kk.str()) +
                           " must be a non-empty array of values to sweep over");
        axes.push_back({sec, std::string(kk.str()), values});
      }
    }
  }
  root.erase("run");
  root.erase("sweep");
  check_sections(root);

  std::vector<StudyRun> out;
  for (const Partial& base : explicit_runs) {
    std::vector<std::size_t> at(axes.size(), 0);
    while (true) {
      toml::table r = root;
      StudyRun run;
      std::string name = base.name;
      for (const Override& o : base.overrides) {
        set_value(r, o.section, o.key, *o.value);
        run.overrides.emplace_back(o.section + "." + o.key, plain_value(*o.value));
      }
      for (std::size_t a = 0; a < axes.size(); ++a) {
        const toml::node& v = *axes[a].values->get(at[a]);
        set_value(r, axes[a].section, axes[a].key, v);
        run.overrides.emplace_back(axes[a].section + "." + axes[a].key, plain_value(v));
        name += (name.empty() ? "" : "_") + axes[a].key + "=" + plain_value(v);
      }
      run.name = directory_safe(name);
      for (const StudyRun& earlier : out)
        if (earlier.name == run.name)
          throw StudyError("two runs are named \"" + run.name + "\"; give each [[run]] its own name");
      apply_sets(r, sets);
      try {
        run.study = study_from_root(r);
      } catch (const StudyError& e) {
        throw StudyError("run \"" + run.name + "\": " + e.what());
      }
      out.push_back(std::move(run));
      std::size_t a = 0;  // next combination (the last axis varies slowest)
      for (; a < axes.size(); ++a) {
        if (++at[a] < axes[a].values->size()) break;
        at[a] = 0;
      }
      if (a == axes.size()) break;
    }
  }
  return out;
}

}  // namespace

const std::vector<int>& compiled_chain_sizes() {
  static const std::vector<int> sizes = {
#define CHENS_CHAIN_SIZE_ENTRY(N) N,
      CHENS_FOR_EACH_CHAIN_SIZE(CHENS_CHAIN_SIZE_ENTRY)
#undef CHENS_CHAIN_SIZE_ENTRY
  };
  return sizes;
}

PenaltyPendulum<double> penalty_model(const Study& s) {
  return PenaltyPendulum<double>::make(s.mass, s.length, s.gravity, s.penalty,
                                       s.penalty_constraint == "G1" ? PenaltyConstraint::g1 : PenaltyConstraint::g);
}

std::vector<double> chain_inverse_masses(const Study& s) {
  std::vector<double> w(static_cast<std::size_t>(s.atoms), 1.0 / s.mass);
  if (!s.masses.empty() && s.masses.size() == w.size())
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1.0 / s.masses[i];
  return w;
}

std::vector<double> initial_state(const Study& s) {
  if (!s.initial.empty()) return s.initial;
  if (s.model_kind == "chain") {
    std::vector<double> z(static_cast<std::size_t>(4 * s.atoms));
    const std::vector<double> w = chain_inverse_masses(s);
    chain_default_initial(static_cast<int>(s.atoms), s.bond_length, w.data(), 0.25, z.data());
    return z;
  }
  return {1.0, 0.0, 0.0, -2.0};
}

bool reference_on(const Study& s) {
  if (s.reference) return *s.reference == "auto";
  return s.model_kind != "chain";  // the pendulum models have the closed form
}

std::vector<std::string> chain_state_names(int atoms) {
  std::vector<std::string> names;
  for (const char* prefix : {"", "p"})
    for (int i = 0; i < atoms; ++i) {
      names.push_back(std::string(prefix) + "x" + std::to_string(i));
      names.push_back(std::string(prefix) + "y" + std::to_string(i));
    }
  return names;
}

std::vector<std::string> physical_state_names(const Study& s) {
  if (s.model_kind == "chain") return chain_state_names(static_cast<int>(s.atoms));
  return {"x", "y", "px", "py"};
}

double pendulum_nominal_period(const Study& s) {
  if (s.model_kind != "pendulum")
    throw StudyError("output.phase_error measures the pendulum's phase after whole periods; model.kind is \"" +
                     s.model_kind + "\"");
  const std::vector<double> z = initial_state(s);
  const auto exact = PendulumExact<double>::make(Pendulum<double>{s.mass, s.length, s.gravity}, Vec<double, 4>{{z[0], z[1], z[2], z[3]}});
  const double T = exact.period();
  if (!std::isfinite(T) || !(T > 0))
    throw StudyError("output.phase_error: the nominal initial data [" + shortest(z[0]) + ", " + shortest(z[1]) + ", " +
                     shortest(z[2]) + ", " + shortest(z[3]) + "] have no finite period (the pendulum rests or sits on the separatrix)");
  return T;
}

std::vector<std::uint64_t> recorded_instances(const Study& s) {
  std::vector<std::uint64_t> out;
  for (std::int64_t i : s.record) out.push_back(static_cast<std::uint64_t>(i));
  if (s.trajectory || !s.phase_error.empty() || !s.periodogram.empty()) out.push_back(0);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool hdf5_available() {
#ifdef CHENS_HAVE_HDF5
  return true;
#else
  return false;
#endif
}

namespace {

std::string list(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ", ") + std::to_string(x);
  return out;
}

// Model-specific keys and values: which keys apply to which model, and whether the
// initial data make sense for it.
void validate_model(const Study& s) {
  const bool chain = s.model_kind == "chain";
  for (const char* k : {"model.atoms", "model.bond_length", "model.lj_epsilon", "model.masses"})
    if (!chain && s.has(k))
      throw StudyError(std::string(k) + " applies to model.kind = \"chain\" only (this study's model.kind is \"" +
                       s.model_kind + "\")");
  for (const char* k : {"model.length", "model.gravity"})
    if (chain && s.has(k))
      throw StudyError(std::string(k) + " applies to model.kind = \"pendulum\" only; a chain has model.bond_length "
                       "and no gravity");
  const bool penalty = s.model_kind == "penalty-pendulum";
  for (const char* k : {"model.penalty", "model.constraint"})
    if (!penalty && s.has(k))
      throw StudyError(std::string(k) + " applies to model.kind = \"penalty-pendulum\" only (this study's model.kind is \"" +
                       s.model_kind + "\")");
  if (penalty) {
    if (s.formulation != FormulationId::penalty)
      throw StudyError(std::string("model.kind = \"penalty-pendulum\" has no constraint to formulate: its equations are "
                       "the penalty ODE itself; remove integrator.formulation (it was \"") +
                       formulation_name(s.formulation) + "\")");
    if (s.method == MethodId::rattle)
      throw StudyError("integrator.method = \"rattle\" integrates constrained equations; model.kind = "
                       "\"penalty-pendulum\" has none: use \"verlet\" (Stormer-Verlet) or another ODE method");
    if (s.momentum || s.position)
      throw StudyError(std::string("projection.") + (s.position ? "position" : "momentum") +
                       " = true: model.kind = \"penalty-pendulum\" replaces the constraint by a potential and is not "
                       "projected (003); set it to false");
  } else if (s.formulation == FormulationId::penalty) {
    throw StudyError("integrator.formulation = \"penalty\" is the equations of model.kind = \"penalty-pendulum\" (this "
                     "study's model.kind is \"" + s.model_kind + "\")");
  }
  if (s.method == MethodId::verlet && !penalty)
    throw StudyError("integrator.method = \"verlet\" (Stormer-Verlet) needs a separable Hamiltonian: model.kind = "
                     "\"penalty-pendulum\"; for the constrained pendulum and chains \"rattle\" is Stormer-Verlet with "
                     "the constraints");
  if (s.has("integrator.steps_per_oscillation")) {
    if (!penalty)
      throw StudyError("integrator.steps_per_oscillation applies to model.kind = \"penalty-pendulum\" only (it sets h "
                       "from the penalty's fast frequency)");
    if (s.has("integrator.h"))
      throw StudyError("integrator.h and integrator.steps_per_oscillation are both given: use one (steps_per_oscillation "
                       "sets h = 2 pi / (omega_fast * steps_per_oscillation))");
  }
  for (const char* k : {"integrator.baumgarte_alpha", "integrator.baumgarte_beta"})
    if (s.has(k) && s.formulation != FormulationId::baumgarte)
      throw StudyError(std::string(k) + " is a parameter of integrator.formulation = \"baumgarte\" (formulation was \"" +
                       formulation_name(s.formulation) + "\")");
  if (s.projection_scheme == "midpoint") {
    if (s.method != MethodId::midpoint)
      throw StudyError(std::string("projection.scheme = \"midpoint\" projects the stage of the implicit midpoint rule "
                       "(004 §4): it needs integrator.method = \"midpoint\" (method was \"") + method_name(s.method) + "\")");
    if (!s.position && !s.momentum)
      throw StudyError("projection.scheme = \"midpoint\" projects the stage onto the manifold: set projection.position "
                       "and/or projection.momentum = true");
    if (s.projection_every != 1)
      throw StudyError("projection.every = " + std::to_string(s.projection_every) + " thins out the projections after "
                       "steps; with projection.scheme = \"midpoint\" every step projects its stage (use every = 1)");
  }
  if (s.projection_every != 1 && !s.position && !s.momentum && s.impetus_reset == 0)
    throw StudyError("projection.every = " + std::to_string(s.projection_every) + " but no projection is enabled: set "
                     "projection.position and/or projection.momentum = true");
  if (s.wedge) {
    if (chain)
      throw StudyError("output.wedge is written for the pendulum models (its consistent initial tangents, 004 §3.2); "
                       "model.kind is \"chain\"");
    if (s.method == MethodId::dopri5)
      throw StudyError("output.wedge propagates tangents through fixed-step maps (004 §3.2); integrator.method = "
                       "\"dopri5\" chooses its steps from the state: use a fixed-step method");
    if (s.precision == "float")
      throw StudyError("output.wedge runs in double precision only (integrator.precision = \"float\")");
  }
  if (s.method == MethodId::rattle && s.formulation != FormulationId::constrained)
    throw StudyError(std::string("integrator.method = \"rattle\" integrates the constrained equations themselves, not an "
                     "underlying ODE: remove integrator.formulation (or set it to \"constrained\"); it was \"") +
                     formulation_name(s.formulation) + "\"");
  if (s.formulation == FormulationId::constrained && s.method != MethodId::rattle)
    throw StudyError(std::string("integrator.formulation = \"constrained\" has no right-hand side to integrate; only "
                     "integrator.method = \"rattle\" integrates it (method was \"") + method_name(s.method) + "\")");
  // Float runs (docs/numerics.md, "Float runs"): the explicit fixed-step methods, whose
  // steps have no tolerance that float rounding could make unreachable; the naive and
  // Dirac equations (the throughput studies'; every float instantiation costs build time);
  // the pendulum with its closed-form reference, chains of float_chain_atoms atoms without a
  // reference (the numerical reference's 1e-12 tolerance is below float's resolution).
  if (s.precision == "float") {
    if (s.method != MethodId::euler && s.method != MethodId::rk2 && s.method != MethodId::rk4)
      throw StudyError(std::string("integrator.precision = \"float\" runs the explicit fixed-step methods \"euler\", "
                       "\"rk2\" and \"rk4\" only (method was \"") + method_name(s.method) +
                       "\": its tolerances assume double); use precision = \"double\"");
    if (s.formulation != FormulationId::naive && s.formulation != FormulationId::dirac)
      throw StudyError(std::string("integrator.precision = \"float\" is built for the formulations \"naive\" and "
                       "\"dirac\" only (formulation was \"") + formulation_name(s.formulation) +
                       "\"); use precision = \"double\"");
    if (chain && s.atoms != float_chain_atoms)
      throw StudyError("integrator.precision = \"float\" is built for chains of " + std::to_string(float_chain_atoms) +
                       " atoms only (model.atoms = " + std::to_string(s.atoms) + "); use precision = \"double\"");
    if (chain && s.reference && *s.reference == "auto")
      throw StudyError("output.reference = \"auto\" with integrator.precision = \"float\": the chain's numerical "
                       "reference runs at reference_tol = 1e-12, below float's resolution; use output.reference = "
                       "\"none\" or precision = \"double\"");
  }
  if (!chain) {
    const std::vector<double> z = initial_state(s);
    if (z.size() != 4)
      throw StudyError("model.initial has " + std::to_string(z.size()) +
                       " numbers: the pendulum needs an array of 4 numbers [x, y, px, py]");
    const double r2 = z[0] * z[0] + z[1] * z[1];
    if (!(r2 > 0) || !std::isfinite(r2))
      throw StudyError("model.initial: the position (x, y) = (0, 0) has no constraint gradient; the pendulum needs "
                       "x^2 + y^2 > 0");
    return;
  }
  const auto& sizes = compiled_chain_sizes();
  if (std::find(sizes.begin(), sizes.end(), static_cast<int>(s.atoms)) == sizes.end())
    throw StudyError("model.atoms = " + std::to_string(s.atoms) + ": this build has chains of " + list(sizes) +
                     " atoms; add " + std::to_string(s.atoms) +
                     " to the CMake list CHENS_CHAIN_ATOMS and rebuild (docs/study-format.md)");
  if (s.formulation != FormulationId::naive && s.formulation != FormulationId::dirac &&
      s.formulation != FormulationId::impetus && s.formulation != FormulationId::constrained)
    throw StudyError(std::string("integrator.formulation = \"") + formulation_name(s.formulation) +
                     "\" is written for the pendulum only; chains have \"naive\", \"dirac\", \"impetus\" and "
                     "method \"rattle\"");
  if (!s.masses.empty() && s.masses.size() != static_cast<std::size_t>(s.atoms))
    throw StudyError("model.masses has " + std::to_string(s.masses.size()) + " entries; model.atoms = " +
                     std::to_string(s.atoms) + " needs one mass per atom");
  if (s.has("model.masses") && s.has("model.mass"))
    throw StudyError("model.mass and model.masses are both given: use one (mass sets every atom)");
  const std::vector<double> z = initial_state(s);
  if (z.size() != static_cast<std::size_t>(4 * s.atoms))
    throw StudyError("model.initial has " + std::to_string(z.size()) + " numbers; model.atoms = " +
                     std::to_string(s.atoms) + " needs 4 * atoms = " + std::to_string(4 * s.atoms) +
                     " (x0, y0, ..., x" + std::to_string(s.atoms - 1) + ", y" + std::to_string(s.atoms - 1) +
                     ", then px0, py0, ...)");
  // Bonds must have the bond length: the constraint manifold is the whole point. The
  // tolerance admits coordinates typed to about 7 digits.
  constexpr double bond_rel_tol = 1e-6;
  for (std::int64_t a = 0; a + 1 < s.atoms; ++a) {
    const double dx = z[2 * a + 2] - z[2 * a], dy = z[2 * a + 3] - z[2 * a + 1];
    const double r = std::sqrt(dx * dx + dy * dy);
    if (!(std::fabs(r - s.bond_length) <= bond_rel_tol * s.bond_length))
      throw StudyError("model.initial: bond " + std::to_string(a) + " (atoms " + std::to_string(a) + " and " +
                       std::to_string(a + 1) + ") has length " + shortest(r) + ", but model.bond_length = " +
                       shortest(s.bond_length) + " (allowed relative deviation " + shortest(bond_rel_tol) + ")");
  }
  // Atoms on top of each other make the Lennard-Jones potential infinite.
  if (s.lj_epsilon > 0)
    for (std::int64_t i = 0; i < s.atoms; ++i)
      for (std::int64_t j = i + 1; j < s.atoms; ++j)
        if (z[2 * i] == z[2 * j] && z[2 * i + 1] == z[2 * j + 1])
          throw StudyError("model.initial: atoms " + std::to_string(i) + " and " + std::to_string(j) +
                           " are at the same position; the Lennard-Jones potential is infinite there");
}

}  // namespace

namespace {

// The [output] keys that depend on the time grid: recorded instances, states.h5, the phase
// error table and the periodogram (docs/study-format.md, [output]).
void validate_output(const Study& s, const RunParams<double>& rp) {
  constexpr std::size_t max_recorded = 4096;
  // cppcheck-suppress knownConditionTrueFalse ; a build-time constant
  if ((s.states || !s.record.empty()) && !hdf5_available())
    throw StudyError(std::string(s.states ? "output.states = true" : "output.record") +
                     " writes states.h5, but this build of chens has no HDF5: install libhdf5-dev "
                     "(scripts/bootstrap.sh does) and configure again");
  if (s.record.size() > max_recorded)
    throw StudyError("output.record lists " + std::to_string(s.record.size()) + " instances; at most " +
                     std::to_string(max_recorded) + " trajectories are recorded (use output.states for final states of all)");
  for (std::int64_t i : s.record)
    if (i >= s.size)
      throw StudyError("output.record: instance " + std::to_string(i) + " is not in the ensemble (ensemble.size = " +
                       std::to_string(s.size) + ", indices 0 to " + std::to_string(s.size - 1) + ")");
  // ensemble.only: the listed instances of the ensemble, integrated alone.
  for (std::int64_t i : s.only)
    if (i >= s.size)
      throw StudyError("ensemble.only: instance " + std::to_string(i) + " is not in the ensemble (ensemble.size = " +
                       std::to_string(s.size) + ", indices 0 to " + std::to_string(s.size - 1) + ")");
  if (!s.only.empty()) {
    for (std::int64_t i : s.record)
      if (!std::binary_search(s.only.begin(), s.only.end(), i))
        throw StudyError("output.record: instance " + std::to_string(i) + " is not among ensemble.only's instances");
    if ((s.trajectory || !s.phase_error.empty() || !s.periodogram.empty()) && s.only.front() != 0)
      throw StudyError(std::string(s.trajectory ? "output.trajectory" : !s.phase_error.empty() ? "output.phase_error"
                                                                                            : "output.periodogram") +
                       " is about instance 0, which ensemble.only leaves out; add 0 to ensemble.only or drop it");
  }
  const double S = s.model_kind == "chain" ? 4.0 * static_cast<double>(s.atoms) : 4.0;
  const std::size_t recorded = recorded_instances(s).size();
  const double rec_bytes = static_cast<double>(recorded) * static_cast<double>(rp.samples + 1) *
                           (2 * S + metric_count + 1) * 8;
  if (rec_bytes > 8e9)
    throw StudyError("output.record / output.trajectory: recording " + std::to_string(recorded) +
                     " instances at " + std::to_string(rp.samples + 1) + " sample times needs " +
                     shortest(rec_bytes / 1e9) + " GB of host memory (at most 8); record fewer instances or raise "
                     "output.sample_dt");
  if (!s.phase_error.empty()) {
    const double T = pendulum_nominal_period(s);
    if (!rp.reference)
      throw StudyError("output.phase_error compares y(kT) with the closed-form solution; it needs output.reference = \"auto\"");
    for (std::int64_t k : s.phase_error) {
      const double t = static_cast<double>(k) * T;
      const double m = t / rp.sample_dt;
      if (t > rp.t_end * (1 + 1e-9))
        throw StudyError("output.phase_error: " + std::to_string(k) + " T = " + shortest(t) + " is after integrator.t_end = " +
                         shortest(rp.t_end) + " (T = " + shortest(T) + ")");
      if (std::fabs(m - std::round(m)) > 1e-9 * std::max(1.0, m))
        throw StudyError("output.phase_error: " + std::to_string(k) + " T = " + shortest(t) +
                         " is not a sample time (output.sample_dt = " + shortest(rp.sample_dt) + "); the period of the "
                         "nominal initial data is T = " + shortest(T) + ": choose sample_dt = T / m and, for fixed-step "
                         "methods, integrator.h = T / n (e.g. h = " + shortest(T / 33) + ", sample_dt = " + shortest(T) + ")");
    }
  }
  if (!s.periodogram.empty()) {
    const std::vector<std::string> names = physical_state_names(s);
    if (std::find(names.begin(), names.end(), s.periodogram) == names.end()) {
      std::string allowed;
      for (std::size_t c = 0; c < names.size() && c < 8; ++c) allowed += (c ? ", \"" : "\"") + names[c] + "\"";
      throw StudyError("output.periodogram = \"" + s.periodogram + "\" is not a component of the physical state; allowed: " +
                       allowed + (names.size() > 8 ? ", ..." : ""));
    }
    if (rp.samples + 1 > periodogram_max_samples)
      throw StudyError("output.periodogram: " + std::to_string(rp.samples + 1) + " sample times; the periodogram takes at "
                       "most " + std::to_string(periodogram_max_samples) + " (raise output.sample_dt)");
    if (rp.samples < 4)
      throw StudyError("output.periodogram needs at least 5 sample times; the run has " + std::to_string(rp.samples + 1));
  }
}

}  // namespace

// integrator.h, or for the penalty pendulum with a fixed-step method and no h the step
// from integrator.steps_per_oscillation (docs/study-format.md).
double resolved_step(const Study& s) {
  if (s.model_kind != "penalty-pendulum" || s.has("integrator.h") || s.method == MethodId::dopri5) return s.h;
  const PenaltyPendulum<double> m = penalty_model(s);
  const double omega = PenaltyPendulum<double>::fast_frequency(m.m, m.l, m.mu, m.constraint);
  const double h_max = 2.0 * 3.14159265358979323846 / omega / static_cast<double>(s.steps_per_oscillation);
  if (!s.sample_dt) return h_max;
  // The largest step <= h_max that divides output.sample_dt: samples fall on the step grid.
  const double n = std::ceil(*s.sample_dt / h_max * (1.0 - 1e-12));
  return *s.sample_dt / std::max(1.0, n);
}

RunParams<double> resolve(const Study& s) {
  RunParams<double> rp;
  const bool adaptive = s.method == MethodId::dopri5;
  const bool impetus = s.formulation == FormulationId::impetus || s.formulation == FormulationId::impetus_modified;
  if (s.impetus_reset > 0 && !impetus)
    throw StudyError("integrator.impetus_reset = " + shortest(s.impetus_reset) +
                     ": only the impetus formulations (\"impetus\", \"impetus-modified\") carry impetuses to reset; "
                     "set it to 0 or choose an impetus formulation");
  if (adaptive && s.rtol == 0 && s.atol == 0)
    throw StudyError("integrator.rtol and integrator.atol are both 0: dopri5 needs at least one > 0");
  validate_model(s);
  const double h = resolved_step(s);
  if (!(h > 0) || !std::isfinite(h))
    throw StudyError("integrator.steps_per_oscillation = " + std::to_string(s.steps_per_oscillation) +
                     " with model.penalty = " + shortest(s.penalty) + " gives the step h = " + shortest(h) +
                     ": not a usable step; choose a smaller penalty or give integrator.h");
  rp.h = h;
  rp.t_end = s.t_end;
  rp.fixed_step = !adaptive;
  rp.rtol = s.rtol;
  rp.atol = s.atol;
  rp.max_steps = s.max_steps;
  rp.iteration_tol = s.tol;
  rp.max_iterations = static_cast<int>(s.max_iterations);
  rp.project_momentum = s.momentum;
  rp.project_position = s.position;
  rp.projection_tol = s.projection_tol;
  rp.projection_max_iterations = static_cast<int>(s.projection_max_iterations);
  rp.projection_every = s.projection_every;
  rp.stage_projection = s.projection_scheme == "midpoint";
  rp.impetus_reset = s.impetus_reset;
  rp.lost_residual = s.lost_residual;
  rp.lost_diverged = s.lost_diverged;
  rp.lost_unconverged = s.lost_unconverged;
  if (s.kind == "inconsistent" && !(s.phi_offset > 0 || s.psi_offset > 0))
    throw StudyError("ensemble.kind = \"inconsistent\" needs ensemble.phi_offset > 0 or ensemble.psi_offset > 0 "
                     "(how far off the constraint manifold every instance starts)");
  if (s.kind == "consistent" && (s.phi_offset > 0 || s.psi_offset > 0))
    throw StudyError("ensemble.phi_offset and ensemble.psi_offset move instances off the constraint manifold; they "
                     "need ensemble.kind = \"inconsistent\"");
  rp.perturbation_shape.distribution =
      s.distribution == "normal" ? PerturbationDistribution::normal : PerturbationDistribution::uniform;
  rp.perturbation_shape.phi_offset = s.phi_offset;
  rp.perturbation_shape.psi_offset = s.psi_offset;
  rp.reference = reference_on(s);
  rp.reference_tol = s.reference_tol;
  constexpr double rel = 1e-9;
  constexpr std::int64_t max_samples = 10000000;
  if (!adaptive) {
    const double n = s.t_end / h;
    if (n > 9.0e15) throw StudyError("integrator.t_end / integrator.h = " + shortest(n) + " steps: too many for fixed-step integration");
    const double nr = std::round(n);
    rp.total_steps = static_cast<index_t>(std::fabs(n - nr) <= rel * std::max(1.0, n) ? nr : std::ceil(n));
    rp.last_h = rp.total_steps > 0 ? s.t_end - static_cast<double>(rp.total_steps - 1) * h : h;
    if (s.sample_dt) {
      const double m = *s.sample_dt / h;
      const double mr = std::round(m);
      if (mr < 1 || std::fabs(m - mr) > rel * std::max(1.0, m)) {
        throw StudyError("output.sample_dt = " + shortest(*s.sample_dt) + " is not a multiple of integrator.h = " +
                         shortest(h) + ": fixed-step methods sample on their step grid; choose sample_dt = k * h");
      }
      rp.steps_per_sample = static_cast<index_t>(mr);
    } else {
      // About 100 samples over the run, on the step grid.
      rp.steps_per_sample = std::max<index_t>(1, static_cast<index_t>(std::llround(static_cast<double>(rp.total_steps) / 100.0)));
    }
    rp.sample_dt = static_cast<double>(rp.steps_per_sample) * h;
    rp.samples = rp.total_steps == 0 ? 0 : (rp.total_steps + rp.steps_per_sample - 1) / rp.steps_per_sample;
  } else {
    rp.sample_dt = s.sample_dt ? *s.sample_dt : (s.t_end > 0 ? s.t_end / 100.0 : 1.0);
    const double k = s.t_end / rp.sample_dt;
    if (k > static_cast<double>(max_samples))
      throw StudyError("output.sample_dt = " + shortest(rp.sample_dt) + " gives " + shortest(k) +
                       " samples; at most " + std::to_string(max_samples) + " are allowed");
    const double kr = std::round(k);
    rp.samples = static_cast<index_t>(std::fabs(k - kr) <= rel * std::max(1.0, k) ? kr : std::ceil(k));
    rp.total_steps = 0;
    rp.steps_per_sample = 0;
    rp.last_h = h;
  }
  if (rp.samples > max_samples)
    throw StudyError("output.sample_dt gives " + std::to_string(rp.samples) + " samples; at most " +
                     std::to_string(max_samples) + " are allowed");
  validate_output(s, rp);
  return rp;
}

namespace {
const char* formulation_key(FormulationId f) { return formulation_name(f); }
// The shortest text that reads back to x, as a TOML float (0.1, not 0.10000000000000001).
std::string num(double x) {
  std::string s = shortest(x);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}
}  // namespace

namespace {
std::string int_array(const std::vector<std::int64_t>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}
std::string num_array(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + num(v[i]);
  return out + "]";
}
}  // namespace

std::string to_toml(const Study& s, const RunParams<double>& rp) {
  std::ostringstream os;
  os << "[model]\nkind = \"" << s.model_kind << "\"\ninitial = " << num_array(initial_state(s)) << "\n";
  if (s.model_kind == "chain") {
    os << "atoms = " << s.atoms << "\nbond_length = " << num(s.bond_length) << "\nlj_epsilon = " << num(s.lj_epsilon) << "\n";
    if (!s.masses.empty()) {
      os << "masses = " << num_array(s.masses) << "\n\n";
    } else {
      os << "mass = " << num(s.mass) << "\n\n";
    }
  } else {
    os << "mass = " << num(s.mass) << "\nlength = " << num(s.length) << "\ngravity = " << num(s.gravity) << "\n";
    if (s.model_kind == "penalty-pendulum")
      os << "penalty = " << num(s.penalty) << "\nconstraint = \"" << s.penalty_constraint << "\"\n";
    os << "\n";
  }
  os << "[integrator]\nformulation = \"" << formulation_key(s.formulation) << "\"\nmethod = \"" << method_name(s.method)
     << "\"\nh = " << num(rp.h) << "\nt_end = " << num(s.t_end) << "\nrtol = " << num(s.rtol) << "\natol = " << num(s.atol)
     << "\ntol = " << num(s.tol) << "\nmax_iterations = " << s.max_iterations << "\nmax_steps = " << s.max_steps
     << "\nimpetus_reset = " << num(s.impetus_reset) << "\nprecision = \"" << s.precision << "\"\n";
  if (s.formulation == FormulationId::baumgarte)
    os << "baumgarte_alpha = " << num(s.baumgarte_alpha) << "\nbaumgarte_beta = " << num(s.baumgarte_beta) << "\n";
  os << "\n";
  os << "[projection]\nmomentum = " << (s.momentum ? "true" : "false") << "\nposition = " << (s.position ? "true" : "false")
     << "\ntol = " << num(s.projection_tol) << "\nmax_iterations = " << s.projection_max_iterations
     << "\nevery = " << s.projection_every << "\nscheme = \"" << s.projection_scheme << "\"\n\n";
  os << "[ensemble]\nsize = " << s.size << "\nseed = " << s.seed << "\nperturbation = " << num(s.perturbation)
     << "\ndistribution = \"" << s.distribution << "\"\nkind = \"" << s.kind << "\"\nphi_offset = " << num(s.phi_offset)
     << "\npsi_offset = " << num(s.psi_offset) << "\nlost_residual = " << num(s.lost_residual)
     << "\nlost_unconverged = " << (s.lost_unconverged ? "true" : "false")
     << "\nlost_diverged = " << num(s.lost_diverged) << "\nonly = " << int_array(s.only) << "\n\n";
  os << "[output]\nsample_dt = " << num(rp.sample_dt) << "\ntrajectory = " << (s.trajectory ? "true" : "false")
     << "\nreference = \"" << (reference_on(s) ? "auto" : "none") << "\"\nreference_tol = " << num(s.reference_tol)
     << "\nstates = " << (s.states ? "true" : "false") << "\nrecord = " << int_array(s.record)
     << "\nphase_error = " << int_array(s.phase_error) << "\nperiodogram = \"" << s.periodogram << "\"\nwedge = "
     << (s.wedge ? "true" : "false") << "\n";
  return os.str();
}

nlohmann::json to_json(const Study& s, const RunParams<double>& rp) {
  nlohmann::json j;
  j["model"] = {{"kind", s.model_kind}, {"initial", initial_state(s)}};
  if (s.model_kind == "chain") {
    j["model"]["atoms"] = s.atoms;
    j["model"]["bond_length"] = s.bond_length;
    j["model"]["lj_epsilon"] = s.lj_epsilon;
    std::vector<double> m;
    for (double w : chain_inverse_masses(s)) m.push_back(1.0 / w);
    j["model"]["masses"] = m;
  } else {
    j["model"]["mass"] = s.mass;
    j["model"]["length"] = s.length;
    j["model"]["gravity"] = s.gravity;
    if (s.model_kind == "penalty-pendulum") {
      j["model"]["penalty"] = s.penalty;
      j["model"]["constraint"] = s.penalty_constraint;
    }
  }
  j["integrator"] = {{"formulation", formulation_key(s.formulation)},
                     {"method", method_name(s.method)},
                     {"h", rp.h},
                     {"t_end", s.t_end},
                     {"rtol", s.rtol},
                     {"atol", s.atol},
                     {"tol", s.tol},
                     {"max_iterations", s.max_iterations},
                     {"max_steps", s.max_steps},
                     {"impetus_reset", s.impetus_reset},
                     {"precision", s.precision}};
  if (s.formulation == FormulationId::baumgarte) {
    j["integrator"]["baumgarte_alpha"] = s.baumgarte_alpha;
    j["integrator"]["baumgarte_beta"] = s.baumgarte_beta;
  }
  j["projection"] = {{"momentum", s.momentum},
                     {"position", s.position},
                     {"tol", s.projection_tol},
                     {"max_iterations", s.projection_max_iterations},
                     {"every", s.projection_every},
                     {"scheme", s.projection_scheme}};
  j["ensemble"] = {{"size", s.size},           {"seed", s.seed},
                   {"perturbation", s.perturbation}, {"distribution", s.distribution},
                   {"kind", s.kind},           {"phi_offset", s.phi_offset},
                   {"psi_offset", s.psi_offset},     {"lost_residual", s.lost_residual},
                   {"lost_unconverged", s.lost_unconverged},
                   {"lost_diverged", s.lost_diverged},
                   {"only", s.only}};
  j["output"] = {{"sample_dt", rp.sample_dt},
                 {"trajectory", s.trajectory},
                 {"reference", reference_on(s) ? "auto" : "none"},
                 {"reference_tol", s.reference_tol},
                 {"states", s.states},
                 {"record", s.record},
                 {"phase_error", s.phase_error},
                 {"periodogram", s.periodogram},
                 {"wedge", s.wedge}};
  return j;
}

}  // namespace chens
