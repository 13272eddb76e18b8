#include "study/study_values.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

namespace chens {

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

std::string shortest(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

std::string toml_float(double x) {
  std::string s = shortest(x);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // a float reads as one
  return s;
}

// Arrays are rendered here, not by toml::toml_formatter: toml++ 3.3 sizes an array's floats
// with static_cast<size_t>(log10(|x|)), undefined for |x| < 1 (found by scripts/fuzz-study.sh).
std::string render(const toml::node& n) {
  std::ostringstream os;
  if (auto f = n.as_floating_point()) {
    os << toml_float(f->get());
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
  // A value is quoted as given, up to a line's worth: a megabyte of model.kind is named by
  // its start and its length, not echoed whole.
  constexpr std::size_t most = 120;
  std::string value = render(n);
  if (value.size() > most) value.replace(most, std::string::npos, "... (" + std::to_string(value.size()) + " characters)");
  throw StudyError(where(n) + ": " + key + " = " + value + ": " + what);
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

std::vector<std::int64_t> integer_array(const toml::node& n, const std::string& key, const char* what, std::int64_t lo,
                                        std::int64_t hi, bool sorted_unique) {
  auto a = n.as_array();
  if (!a) fail(n, key, what);
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < a->size(); ++i) {
    auto v = a->get(i)->as_integer();
    if (!v || v->get() < lo || v->get() > hi)
      fail(n, key,
           "element " + std::to_string(i) + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
               "]");
    for (std::int64_t x : out)
      if (x == v->get()) fail(n, key, "element " + std::to_string(i) + " (" + std::to_string(x) + ") is repeated");
    if (sorted_unique && !out.empty() && v->get() < out.back())
      fail(n, key,
           "must be in ascending order (element " + std::to_string(i) + " is " + std::to_string(v->get()) + ", after " +
               std::to_string(out.back()) + ")");
    out.push_back(v->get());
  }
  return out;
}

bool boolean(const toml::node& n, const std::string& key) {
  auto b = n.as_boolean();
  if (!b) fail(n, key, "must be true or false");
  return b->get();
}

std::string law_text(const ParameterLaw& law) {
  switch (law.kind) {
    case LawKind::fixed: return "";
    case LawKind::uniform: return "uniform(" + shortest(law.a) + ", " + shortest(law.b) + ")";
    case LawKind::log_uniform: return "log-uniform(" + shortest(law.a) + ", " + shortest(law.b) + ")";
    case LawKind::normal: return "normal(" + shortest(law.a) + ", " + shortest(law.b) + ")";
    case LawKind::list: {
      std::string s = "[";
      for (std::size_t i = 0; i < law.values.size(); ++i) s += (i ? ", " : "") + shortest(law.values[i]);
      return s + "]";
    }
  }
  return "";
}

}  // namespace chens
