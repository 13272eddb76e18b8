// A resolved study printed from the key declarations (study_keys.cpp): as TOML (--dry-run,
// which reads back to the same run), as JSON (summary.json's "study"), and as the docs'
// markdown tables of keys.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "dispatch/custom_models.hpp"
#include "models/model_description.hpp"
#include "study/study_key_table.hpp"
#include "study/study_keys.hpp"

namespace chens {

namespace {

// The TOML text of each alternative of a KeyValue.
struct TomlText {
  std::string operator()(bool b) const { return b ? "true" : "false"; }
  std::string operator()(std::int64_t i) const { return std::to_string(i); }
  std::string operator()(std::uint64_t i) const { return std::to_string(i); }
  std::string operator()(double x) const { return toml_float(x); }
  std::string operator()(const std::string& s) const { return "\"" + s + "\""; }
  template <class T>
  std::string operator()(const std::vector<T>& a) const {
    std::string out = "[";
    for (std::size_t i = 0; i < a.size(); ++i) out += (i ? ", " : "") + (*this)(a[i]);
    return out + "]";
  }
};

// A user model's parameters, every one with its value (defaults filled in), one per line.
std::string custom_parameters_toml(const Study& s) {
  const CustomModelInfo& m = custom_model_of(s);
  std::string out;
  for (std::size_t i = 0; i < m.parameters.size(); ++i)
    out += m.parameters[i].name + " = " + toml_float(s.parameters[i]) + "\n";
  return out;
}

}  // namespace

std::string toml_text(const KeyValue& v) { return std::visit(TomlText{}, v); }

std::string to_toml(const Study& s, const RunParams<double>& rp) {
  std::string out;
  for (const std::string& section : study_sections()) {
    const std::size_t header = out.size();
    out += (out.empty() ? "[" : "\n[") + section + "]\n";
    const std::size_t body = out.size();
    const std::vector<const StudyKey*> keys = section_keys(section);
    const auto printed = [&](const StudyKey& k) { return printed_value(k, s, rp, Printout::toml); };
    const auto print = [&](const StudyKey& k) {
      if (const auto v = printed(k)) out += std::string(k.name) + " = " + toml_text(*v) + "\n";
    };
    const auto printed_after = [&](const StudyKey& k) {  // the key after which k is printed, or nullptr
      if (!k.print_after) return static_cast<const StudyKey*>(nullptr);
      for (const StudyKey* anchor : keys)
        if (std::string(anchor->name) == k.print_after && printed(*anchor)) return anchor;
      return static_cast<const StudyKey*>(nullptr);
    };
    for (const StudyKey* k : keys) {
      if (printed_after(*k)) continue;
      print(*k);
      for (const StudyKey* later : keys)
        if (printed_after(*later) == k) print(*later);
    }
    if (section == "model" && is_custom(s)) out += custom_parameters_toml(s);
    if (out.size() == body) out.resize(header);  // a section with nothing printed ([first_passage] unused)
  }
  return out;
}

nlohmann::json to_json(const Study& s, const RunParams<double>& rp) {
  nlohmann::json j;
  for (const StudyKey& k : study_keys())
    if (const auto v = printed_value(k, s, rp, Printout::json))
      std::visit([&](const auto& x) { j[k.section][k.name] = x; }, *v);
  if (is_custom(s)) {
    const CustomModelInfo& m = custom_model_of(s);
    for (std::size_t i = 0; i < m.parameters.size(); ++i) j["model"][m.parameters[i].name] = s.parameters[i];
  }
  return j;
}

namespace {

// The docs' marker of a key's table: the models that take it (none where every built-in model
// does), or the formulation it belongs to.
std::string scope_name(const StudyKey& k) {
  if (k.scope == KeyScope::baumgarte) return " baumgarte";
  if (k.scope != KeyScope::model) return "";
  std::string names;
  bool every = true;
  for (const ModelDescription* m : model_descriptions()) {
    if (m->takes(k.path())) names.append(" ").append(m->name);
    else every = every && m->kind == ModelKind::custom;
  }
  return every ? "" : names;
}

std::string markdown_row(const StudyKey& k) {
  const std::string default_text = k.doc_default ? std::string(k.doc_default)
                                                 : std::string("`").append(toml_text(k.type.value(Study{}))).append("`");
  const std::string allowed = k.type.allowed + (k.doc_allowed ? "; " + std::string(k.doc_allowed) : "");
  return "| `" + std::string(k.name) + "` | " + default_text + " | " + allowed + " | " + k.meaning + " |\n";
}

}  // namespace

std::vector<KeyTable> key_tables() {
  std::vector<KeyTable> tables;
  for (const StudyKey& k : study_keys()) {
    const std::string marker = "<!-- keys [" + std::string(k.section) + "]" + scope_name(k) + " -->";
    auto table = std::find_if(tables.begin(), tables.end(), [&](const KeyTable& t) { return t.marker == marker; });
    if (table == tables.end())
      table = tables.insert(tables.end(), {marker, "| key | default | allowed | meaning |\n| --- | --- | --- | --- |\n"});
    table->markdown += markdown_row(k);
  }
  return tables;
}

std::string key_tables_markdown() {
  std::string out;
  for (const KeyTable& t : key_tables()) out += t.marker + "\n" + t.markdown + "\n";
  return out;
}

}  // namespace chens
