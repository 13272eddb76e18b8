// Reading a study: the TOML text of a file or the built-in default study (ASCII outside
// comments), --set overrides, [sweep] and [[run]] into runs, and every key through its
// declaration (study_key_table.hpp), with "did you mean" for unknown sections and keys.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "study/default_study.hpp"
#include "dispatch/custom_models.hpp"
#include "dispatch/source_models.hpp"
#include "models/model_description.hpp"
#include "study/study_key_table.hpp"
#include "study/study_text.hpp"
#include "output/number_text.hpp"

namespace chens {

namespace fs = std::filesystem;

namespace {

std::string section_names() {
  std::string out;
  for (const std::string& sec : study_sections()) out += (out.empty() ? "" : ", ") + sec;
  return out;
}

bool known_section(const std::string& name) {
  const auto& sections = study_sections();
  return std::find(sections.begin(), sections.end(), name) != sections.end();
}

const StudyKey* find_key(const std::string& section, const std::string& name) {
  for (const StudyKey* k : section_keys(section))
    if (name == k->name) return k;
  return nullptr;
}

std::string key_names(const std::string& section) {
  std::string out;
  for (const StudyKey* k : section_keys(section)) out += (out.empty() ? "" : ", ") + std::string(k->name);
  if (section == "model")  // and the parameters of the executable's user models
    for (const CustomModelInfo& m : custom_models()) {
      out += "; model.kind = \"" + m.name + "\": kind, " + (m.from_header ? "source, " : "") + "initial";
      for (const CustomModelParameter& p : m.parameters) out += ", " + p.name;
    }
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

std::string section_suggestion(const std::string& section) { return did_you_mean(section, study_sections()); }

// The same key in another section (integrator.sample_dt -> output.sample_dt), else the
// closest key of this section.
std::string key_suggestion(const std::string& section, const std::string& key) {
  for (const std::string& sec : study_sections())
    if (section != sec && find_key(sec, key)) return " (did you mean " + sec + "." + key + "?)";
  std::vector<std::string> names;
  for (const StudyKey* k : section_keys(section)) names.emplace_back(k->name);
  if (section == "model")
    for (const CustomModelInfo& m : custom_models())
      for (const CustomModelParameter& p : m.parameters) names.push_back(p.name);
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

// The message for a key no model or section has; `origin` says where it came from.
[[noreturn]] void unknown_key(const std::string& section, const std::string& key, const std::string& origin) {
  throw StudyError(origin + ": unknown key " + shown_name(section + "." + key) + key_suggestion(section, key) +
                   "; allowed keys in [" + section + "]: " + key_names(section));
}

// Checks that a key exists; `origin` says where it came from. A user model's parameters are
// [model] keys too (checked against the study's model.kind by study_from_root).
void lookup(const std::string& section, const std::string& key, const std::string& origin) {
  if (!known_section(section))
    throw StudyError(origin + ": unknown section [" + shown_name(section) + "]" + section_suggestion(section) +
                     "; allowed sections: " + section_names());
  // A user model's parameter: study_from_root judges it once model.kind is known.
  if (section == "model" && is_custom_parameter_name(key)) return;
  if (!find_key(section, key)) unknown_key(section, key, origin);
}

// Every top-level entry of root must be a known section holding known keys.
void check_sections(const toml::table& root) {
  for (const auto& [name, node] : root) {
    const std::string sec(name.str());
    if (!known_section(sec))
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

// The "section.key" of each --set, as apply_sets reads it ("" where it is malformed, which
// apply_sets refuses with its own message).
std::vector<std::string> set_keys(const std::vector<std::string>& sets) {
  std::vector<std::string> out;
  for (const std::string& s : sets) {
    const std::string lhs = s.substr(0, s.find('='));
    const auto period = lhs.find('.');
    out.push_back(period == std::string::npos ? "" : trimmed(lhs.substr(0, period)) + "." + trimmed(lhs.substr(period + 1)));
  }
  return out;
}

// The value of the last --set of `key` ("section.key") in `sets`, as apply_sets reads it, or
// nullptr; `holder` keeps it.
const toml::node* last_set(const std::vector<std::string>& sets, const std::string& key, toml::table& holder) {
  const std::vector<std::string> keys = set_keys(sets);
  for (std::size_t q = sets.size(); q-- > 0;)
    if (keys[q] == key) {
      apply_sets(holder, {sets[q]});
      const auto period = key.find('.');
      return holder[key.substr(0, period)][key.substr(period + 1)].node();
    }
  return nullptr;
}

// The value a [sweep] or a [[run]] of the study gives `section.key` (the first found), or
// nullptr.
const toml::node* varied_in_runs(const toml::table& root, const std::string& section, const std::string& key) {
  if (const toml::node* n = root["sweep"][section][key].node()) return n;
  if (const auto* runs = root["run"].as_array())
    for (const toml::node& r : *runs)
      if (const toml::node* n = r.as_table() ? (*r.as_table())[section][key].node() : nullptr) return n;
  return nullptr;
}

// model.source (dispatch/source_models.hpp, docs/custom-models.md): the header's models are
// compiled on first use and registered before any key is read, since their parameters are
// [model] keys and model.kind names one of them. The path is relative to `base` (the study
// file's directory), or to the current directory where --set gives it; root's model.source
// becomes the absolute path, and the --set of it leaves `sets`. One study reads one header:
// model.source may not vary between runs. model.kind may be left out where the header
// defines one model.
void load_model_source(toml::table& root, std::vector<std::string>& sets, const fs::path& base) {
  if (const toml::node* v = varied_in_runs(root, "model", "source"))
    throw StudyError(where(*v) + ": model.source may not vary between runs ([sweep] or [[run]]): a study reads one "
                                 "header, which may define several models; vary model.kind over them instead");
  toml::table holder;
  const toml::node* from_set = last_set(sets, "model.source", holder);
  const toml::node* node = from_set ? from_set : root["model"]["source"].node();
  if (!node) return;
  const auto* path = node->as_string();
  if (!path || path->get().empty())
    throw StudyError((from_set ? std::string("--set model.source") : where(*node)) +
                     ": model.source must be a string: the path of a C++ header defining user models");
  const fs::path header = (fs::absolute(from_set ? fs::current_path() : base) / path->get()).lexically_normal();
  const std::vector<std::string> names = load_source_models(header.string());
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "\"" : ", \"") + n + "\"";
  const toml::node* kind = last_set(sets, "model.kind", holder);
  if (!kind) kind = root["model"]["kind"].node();
  if (kind && kind->as_string() && std::find(names.begin(), names.end(), kind->as_string()->get()) == names.end())
    throw StudyError("model.kind = \"" + kind->as_string()->get() + "\" is not a model of model.source = \"" +
                     header.string() + "\", which defines " + list);
  if (!root.contains("model")) root.insert("model", toml::table{});
  auto* model = root["model"].as_table();
  if (!model) throw StudyError("[model] is not a table in the study file");
  if (!kind && !varied_in_runs(root, "model", "kind")) {
    if (names.size() != 1)
      throw StudyError("model.source = \"" + header.string() + "\" defines " + std::to_string(names.size()) + " models (" +
                       list + "): say which with model.kind");
    model->insert_or_assign("kind", names.front());
  }
  model->insert_or_assign("source", header.string());
  const std::vector<std::string> keys = set_keys(sets);
  std::vector<std::string> rest;
  for (std::size_t q = 0; q < sets.size(); ++q)
    if (keys[q] != "model.source") rest.push_back(sets[q]);
  sets = rest;
}

// A user model's [model] table: kind, initial and its parameters, by name; anything else is
// refused with the parameters it has.
void read_custom_parameters(const toml::table& model, Study& st) {
  const CustomModelInfo& m = custom_model_of(st);
  std::string names;
  for (const CustomModelParameter& p : m.parameters) names += (names.empty() ? "" : ", ") + p.name;
  for (const auto& [k, v] : model) {
    const std::string key(k.str());
    if (key == "kind" || key == "initial" || key == "source") continue;
    std::size_t i = 0;
    while (i < m.parameters.size() && m.parameters[i].name != key) ++i;
    if (i == m.parameters.size()) {
      std::vector<std::string> candidates;
      for (const CustomModelParameter& p : m.parameters) candidates.push_back(p.name);
      throw StudyError(where(v) + ": model." + shown_name(key) + " is not a parameter of model.kind = \"" + m.name + "\"" +
                       did_you_mean(key, candidates, "model.") + "; its parameters: " + (names.empty() ? "none" : names) +
                       " (" + m.header + ")");
    }
    st.parameters[i] = finite_number(v, "model." + key, "", [](double) { return true; });
    st.given.insert("model." + key);
  }
}

Study study_from_root(const toml::table& root) {
  Study st;
  for (const StudyKey& key : study_keys()) {
    const auto* tbl = root[key.section].as_table();
    if (!tbl) continue;
    // A user model's other [model] entries are its parameters (read_custom_parameters).
    if (is_custom(st) && std::string(key.section) == "model" && std::string(key.name) != "initial" &&
        std::string(key.name) != "source")
      continue;
    if (const toml::node* n = tbl->get(key.name)) {
      key.type.parse(*n, key.path(), st);
      st.given.insert(key.path());
    }
  }
  if (is_custom(st)) read_custom_parameters(*root["model"].as_table(), st);
  else if (const auto* model = root["model"].as_table())
    for (const auto& [k, v] : *model) {
      const std::string key(k.str());
      if (find_key("model", key)) continue;
      throw StudyError(where(v) + ": model." + shown_name(key) +
                       " is a parameter of a user model; this study's "
                       "model.kind is \"" +
                       model_name(st) + "\"");
    }
  // RATTLE, its compositions and Lobatto IIIA-IIIB integrate the constrained equations themselves: that is their
  // formulation; a model whose equations are its own (the penalty pendulum) has no other.
  if (!st.has("integrator.formulation")) {
    const ModelDescription& model = model_of(st);
    st.formulation = is_constrained_method(st.method) && model.constrained ? FormulationId::constrained
                                                                           : model.default_formulation;
  }
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

// A text as a message quotes it: at most `most` bytes, then how long it was.
std::string clipped(const std::string& text, std::size_t most = 60) {
  if (text.size() <= most) return text;
  return text.substr(0, most) + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace

namespace {
// Where a study's relative paths (model.source) start: the study file's directory, else the
// current directory.
fs::path base_of(const std::optional<std::string>& path) {
  return path ? fs::absolute(fs::path(*path)).parent_path() : fs::current_path();
}
}  // namespace

Study load_study(const std::optional<std::string>& path, const std::vector<std::string>& sets) {
  toml::table root = read_root(path);
  if (root.contains("sweep") || root.contains("run"))
    throw StudyError(*path + " holds several runs ([sweep] or [[run]]); this command takes a study with one run");
  std::vector<std::string> rest = sets;
  load_model_source(root, rest, base_of(path));
  check_sections(root);
  apply_sets(root, rest);
  return study_from_root(root);
}

void set_key(Study& s, const std::string& set) {
  toml::table root;
  apply_sets(root, {set});
  for (const auto& [section, table] : root)
    for (const auto& [name, value] : *table.as_table()) {
      const StudyKey* key = find_key(std::string(section.str()), std::string(name.str()));
      key->type.parse(value, key->path(), s);
      s.given.insert(key->path());
    }
}

namespace {
std::vector<StudyRun> runs_of(toml::table root, std::vector<std::string> sets, const fs::path& dir);
}  // namespace

std::vector<StudyRun> load_runs(const std::optional<std::string>& path, const std::vector<std::string>& sets) {
  return runs_of(read_root(path), sets, base_of(path));
}

std::vector<StudyRun> load_runs_text(const std::string& text, const std::string& origin,
                                     const std::vector<std::string>& sets) {
  return runs_of(parse_toml(text, origin), sets, fs::current_path());
}

std::vector<StudyRun> load_default_runs(const std::vector<std::string>& sets) {
  return load_runs_text(builtin_default_study, builtin_default_study_name, sets);
}

namespace {

// Of the runs of a study (not only a [sweep]'s): at most this many, and names of at most
// NAME_MAX bytes (docs/study-format.md, "Limits"). study.json holds every run's digest
// (~6 kB) and is rewritten, flushed to the disk, before and after every run: a study of
// 10^4 tiny runs wrote 15 MB twice a run after 2,500 of them and slowed to a third of a
// second a run, O(runs^2). [parameters] varies a model's parameters or h per instance
// within one run instead (docs/parameter_ensembles.md).
constexpr std::size_t max_study_runs = 1000;
constexpr std::size_t max_run_name_bytes = 255;

struct Partial {
  std::string name;
  std::vector<Override> overrides;
};
struct Axis {
  std::string section, key;
  const toml::array* values;
};

// --set gives every run the same value. Of a key that the study's runs vary (a [sweep] key, or
// one that a [[run]] sets), that would run them alike under names, tables and legends that
// still say they differ: refused, naming the key and what varies it.
void refuse_sets_of_varied_keys(const std::vector<std::string>& sets, const std::vector<Partial>& explicit_runs,
                                const std::vector<Axis>& axes) {
  const std::vector<std::string> keys = set_keys(sets);
  for (std::size_t q = 0; q < sets.size(); ++q) {
    if (keys[q].empty()) continue;
    for (const Axis& a : axes)
      if (a.section + "." + a.key == keys[q])
        throw StudyError("--set " + clipped(sets[q]) + ": the study sweeps " + keys[q] + " over " +
                         clipped(render(*a.values)) +
                         ", and --set would give every run one value under names that "
                         "say otherwise; drop the --set, or list the values to run in [sweep] of a study file of "
                         "your own (the built-in default study is examples/default_study.toml)");
    std::string setters;
    for (const Partial& p : explicit_runs)
      for (const Override& o : p.overrides)
        if (o.section + "." + o.key == keys[q]) setters += (setters.empty() ? "\"" : ", \"") + clipped(p.name) + "\"";
    if (!setters.empty())
      throw StudyError("--set " + clipped(sets[q]) + ": [[run]] " + setters + " set" +
                       (setters.find(',') == std::string::npos ? "s " : " ") + keys[q] + " " +
                       (setters.find(',') == std::string::npos ? "itself" : "themselves") +
                       ", and --set would replace it under the run's name; drop the --set, or change the [[run]] in "
                       "the study file");
  }
}

std::vector<StudyRun> runs_of(toml::table root, std::vector<std::string> sets, const fs::path& dir) {
  load_model_source(root, sets, dir);
  if (!root.contains("sweep") && !root.contains("run")) {
    check_sections(root);
    apply_sets(root, sets);
    return {StudyRun{"", {}, study_from_root(root)}};
  }
  // Runs: each [[run]] (or the base study alone), times every combination of the [sweep]
  // values; each is the base study with its overrides, then --set.
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
        if (!known_section(sec) || !keys)
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
  std::vector<Axis> axes;
  if (const toml::node* sweep = source.get("sweep")) {
    const auto* tbl = sweep->as_table();
    if (!tbl || tbl->empty())
      throw StudyError(where(*sweep) + ": [sweep] must hold SECTION.KEY = [values...], e.g. integrator.h = [0.1, 0.05]");
    for (const auto& [k, v] : *tbl) {
      const std::string sec(k.str());
      const auto* keys = v.as_table();
      if (!known_section(sec) || !keys)
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
  refuse_sets_of_varied_keys(sets, explicit_runs, axes);
  // The study's size before any run is built: a sweep of a million runs took minutes and
  // hundreds of megabytes to expand before anything could be said about it.
  double count = static_cast<double>(explicit_runs.size());
  std::string factors = explicit_runs.size() > 1 ? std::to_string(explicit_runs.size()) + " [[run]]" : "";
  for (const Axis& a : axes) {
    count *= static_cast<double>(a.values->size());
    factors += (factors.empty() ? "" : " x ") + std::to_string(a.values->size()) + " values of " + a.section + "." + a.key;
  }
  if (count > static_cast<double>(max_study_runs))
    throw StudyError("the study has " + number_text(count, count < 1e15 ? "%.0f" : "%.3g") + " runs (" + factors +
                     "); one study runs at most " + std::to_string(max_study_runs) +
                     " (each is a directory, an entry of study.json, which is rewritten "
                     "after every run, and a row of every table): sweep fewer values, split it into several studies, or "
                     "vary model parameters and h per instance in one run ([parameters], docs/parameter_ensembles.md)");

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
      // A run is a directory below --out: its name must be one (NAME_MAX), or the study would
      // stop at that run after the ones before it had run.
      if (run.name.size() > max_run_name_bytes)
        throw StudyError("run \"" + clipped(run.name) + "\": its name is " + std::to_string(run.name.size()) +
                         " bytes, longer than the " + std::to_string(max_run_name_bytes) +
                         " a directory name may have; give the [[run]] a shorter name, or sweep fewer keys or "
                         "shorter values (the name is [[run]] name_key=value_...)");
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

}  // namespace chens
