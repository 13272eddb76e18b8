// One TOML value of a study key read, checked and shown, with the messages chens has always
// given for bad values ("FILE:LINE: section.key = VALUE: must be ..."): the building blocks of
// the key table (study_key_table.hpp) and of the study file reader (study_files.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "study/study.hpp"

namespace chens {

// Where a value came from: "FILE:LINE", "--set", or "study".
std::string where(const toml::node& n);
// Shortest text that reads back to the same double (what the user most likely typed).
std::string shortest(double x);
// A [parameters] law as the study writes it: "uniform(0.5, 2)", "normal(1, 0.1)",
// "log-uniform(1e-3, 1)" or "[0.1, 0.05]".
std::string law_text(const ParameterLaw& law);
// The same as a TOML float (0.1, 1.0: never an integer's text).
std::string toml_float(double x);
// A value as the user wrote it, for messages and run names.
std::string render(const toml::node& n);

[[noreturn]] void fail(const toml::node& n, const std::string& key, const std::string& what);

double number(const toml::node& n, const std::string& key);
// A finite number with ok(x); `rule` ("> 0") completes "must be a finite number ".
double finite_number(const toml::node& n, const std::string& key, const char* rule, const std::function<bool(double)>& ok);
std::int64_t integer(const toml::node& n, const std::string& key, std::int64_t lo, std::int64_t hi);
// A non-empty array of finite numbers each satisfying ok (described by rule); `what` is the
// message for anything else.
std::vector<double> number_array(const toml::node& n, const std::string& key, const char* what, const char* rule,
                                 const std::function<bool(double)>& ok);
// An array of integers in [lo, hi] (empty allowed), in ascending order without repeats
// when `sorted_unique` (otherwise any order, repeats refused).
std::vector<std::int64_t> integer_array(const toml::node& n, const std::string& key, const char* what, std::int64_t lo,
                                        std::int64_t hi, bool sorted_unique);
bool boolean(const toml::node& n, const std::string& key);

// `"a", "b", "c"`: the names of a key's choices as messages and docs list them.
template <class V>
std::string quoted_names(const std::vector<std::pair<std::string, V>>& options) {
  std::string out;
  for (const auto& o : options) out += (out.empty() ? "\"" : ", \"") + o.first + "\"";
  return out;
}

template <class V>
V choice(const toml::node& n, const std::string& key, const std::vector<std::pair<std::string, V>>& options) {
  const std::string allowed = quoted_names(options);
  auto s = n.as_string();
  if (!s) fail(n, key, "must be one of " + allowed);
  for (const auto& o : options)
    if (o.first == s->get()) return o.second;
  fail(n, key, "unknown name; allowed: " + allowed);
}

}  // namespace chens
