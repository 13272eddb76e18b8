// User models from a header, compiled on first use (source_models.hpp).
#include "dispatch/source_models.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <system_error>

#include "dispatch/custom_models.hpp"
#include "dispatch/jit_cache.hpp"
#include "dispatch/jit_config.hpp"
#include "dispatch/jit_systems.hpp"
#include "dispatch/sha256.hpp"
#include "study/study.hpp"

namespace chens {

namespace fs = std::filesystem;

namespace {

// The tokens of C++ text that matter to spec_candidates: identifiers, "::", single
// punctuation characters, and "\"" for a string or character literal; comments and
// preprocessor lines dropped.
std::vector<std::string> tokens_of(const std::string& t) {
  std::vector<std::string> out;
  std::size_t i = 0;
  bool line_start = true;
  const std::size_t n = t.size();
  while (i < n) {
    const char c = t[i];
    if (c == '\n') {
      line_start = true;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (line_start && c == '#') {  // to the end of the line, with its continuations
      while (i < n && t[i] != '\n') i += (t[i] == '\\' && i + 1 < n) ? 2 : 1;
    } else if (t.compare(i, 2, "//") == 0) {
      while (i < n && t[i] != '\n') ++i;
    } else if (t.compare(i, 2, "/*") == 0) {
      const std::size_t end = t.find("*/", i + 2);
      i = end == std::string::npos ? n : end + 2;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      line_start = false;
      std::size_t j = i;
      while (j < n && (std::isalnum(static_cast<unsigned char>(t[j])) || t[j] == '_')) ++j;
      const std::string word = t.substr(i, j - i);
      i = j;
      // A raw string: R"delim( ... )delim" (with any encoding prefix).
      if (i < n && t[i] == '"' && !word.empty() && word.back() == 'R') {
        const std::size_t open = t.find('(', i);
        if (open == std::string::npos) break;
        const std::string close = ")" + t.substr(i + 1, open - i - 1) + "\"";
        const std::size_t end = t.find(close, open);
        i = end == std::string::npos ? n : end + close.size();
        out.emplace_back("\"");
      } else {
        out.push_back(word);
      }
    } else if (c == '"' || c == '\'') {
      line_start = false;
      std::size_t j = i + 1;
      while (j < n && t[j] != c && t[j] != '\n') j += t[j] == '\\' ? 2 : 1;
      i = j + 1;
      out.emplace_back("\"");
    } else if (t.compare(i, 2, "::") == 0) {
      line_start = false;
      out.emplace_back("::");
      i += 2;
    } else {
      line_start = false;
      out.emplace_back(1, c);
      ++i;
    }
  }
  return out;
}

bool identifier(const std::string& tok) {
  return !tok.empty() && (std::isalpha(static_cast<unsigned char>(tok[0])) || tok[0] == '_');
}

}  // namespace

std::vector<std::string> spec_candidates(const std::string& text) {
  const std::vector<std::string> tok = tokens_of(text);
  // One entry per open brace: a namespace's name ("" for an anonymous or extern "C" block,
  // which names nothing), or nullopt-like "{" for a class, function or initialiser body.
  std::vector<std::string> scopes;
  const std::string body = "{";
  std::vector<std::string> out;
  auto at_namespace_scope = [&] {
    return std::none_of(scopes.begin(), scopes.end(), [&](const std::string& s) { return s == body; });
  };
  for (std::size_t i = 0; i < tok.size(); ++i) {
    const std::string& t = tok[i];
    if (t == "{") {
      // namespace A::B {, inline namespace A {, namespace {, extern "C" {
      std::size_t j = i;
      std::string name;
      while (j > 0 && (identifier(tok[j - 1]) || tok[j - 1] == "::") && tok[j - 1] != "namespace") {
        name = tok[j - 1] + name;
        --j;
      }
      if (j > 0 && tok[j - 1] == "namespace") scopes.push_back(name);
      else if (i >= 2 && tok[i - 1] == "\"" && tok[i - 2] == "extern") scopes.emplace_back();
      else scopes.push_back(body);
    } else if (t == "}") {
      if (!scopes.empty()) scopes.pop_back();
    } else if ((t == "struct" || t == "class") && i + 1 < tok.size() && identifier(tok[i + 1]) && at_namespace_scope()) {
      const std::string before = i > 0 ? tok[i - 1] : "";
      if (before == "enum" || before == ">" || before == "friend" || before == "<" || before == ",") continue;
      std::size_t j = i + 2;
      if (j < tok.size() && tok[j] == "final") ++j;
      if (j >= tok.size() || (tok[j] != "{" && tok[j] != ":")) continue;  // a declaration or a use, not a definition
      std::string qualified;
      for (const std::string& s : scopes)
        if (!s.empty()) qualified += "::" + s;
      out.push_back(qualified + "::" + tok[i + 1]);
    }
  }
  return out;
}

namespace {

using SourceModelsFn = void (*)(std::vector<CustomModelInfo>*);

std::string read_text(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The directories the compile command names with -I or -isystem: chens's own and its
// dependencies', whose files every object's key covers already.
std::vector<std::string> include_dirs() {
  std::vector<std::string> dirs;
  const std::vector<std::string> words = jit::command_words(jit::toolchain().compile);
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i].rfind("-I", 0) == 0 && words[i].size() > 2) dirs.push_back(words[i].substr(2));
    if (words[i] == "-isystem" && i + 1 < words.size()) dirs.push_back(words[++i]);
  }
  return dirs;
}

// The files of a make rule (the compiler's -MF output) after its target; "\ " is a space in
// a name, a backslash before a line end continues the line.
std::vector<std::string> dependencies(const std::string& rule) {
  std::vector<std::string> words;
  std::string cur;
  for (std::size_t i = 0; i < rule.size(); ++i) {
    char c = rule[i];
    if (c == '\\' && i + 1 < rule.size() && rule[i + 1] == ' ') {
      cur += ' ';
      ++i;
      continue;
    }
    if (c == '\\' && i + 1 < rule.size() && rule[i + 1] == '\n') {
      ++i;
      c = ' ';
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) words.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) words.push_back(cur);
  const auto target = std::find_if(words.begin(), words.end(), [](const std::string& w) { return w.back() == ':'; });
  if (target != words.end()) words.erase(words.begin(), target + 1);
  return words;
}

// "<sha256>  <path>" per user file the unit included: the header, and what it includes
// outside chens's and its dependencies' include directories (whose files every key covers);
// sorted.
std::string sources_text(const std::vector<std::string>& files, const fs::path& unit, const fs::path& header) {
  const std::vector<std::string> dirs = include_dirs();
  std::error_code ec;
  const fs::path unit_path = fs::weakly_canonical(unit, ec), header_path = fs::weakly_canonical(header, ec);
  std::vector<std::string> lines = {sha256_hex(read_text(header_path)) + "  " + header_path.string()};
  for (const std::string& f : files) {
    const fs::path p = fs::weakly_canonical(fs::absolute(f), ec);
    if (ec || p == unit_path || p == header_path) continue;
    const std::string ps = p.string();
    if (std::any_of(dirs.begin(), dirs.end(), [&](const std::string& d) { return jit::inside(ps, d); })) continue;
    lines.push_back(sha256_hex(read_text(p)) + "  " + ps);
  }
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  return text;
}

// Whether every file of a sources text still has its recorded hash.
bool sources_unchanged(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t gap = line.find("  ");
    if (gap == std::string::npos) return false;
    const fs::path p = line.substr(gap + 2);
    std::error_code ec;
    if (!fs::is_regular_file(p, ec) || sha256_hex(read_text(p)) != line.substr(0, gap)) return false;
  }
  return true;
}

std::string unit_text(const std::string& header, const std::vector<std::string>& candidates, const std::string& key) {
  std::string adds;
  for (const std::string& c : candidates) adds += "  chens_source_models::add<" + c + ">(out, \"" + c + "\");\n";
  return "// Generated by chens on first use (host/dispatch/source_models.cpp): the user models of\n// " + header +
         "\n#include \"" + header +
         "\"\n\n#include <string>\n#include <type_traits>\n#include <vector>\n\n"
         "#include \"dispatch/auto_model_registration.hpp\"\n\n"
         "namespace chens_source_models {\n"
         "// A spec (docs/custom-models.md, section 1): the members chens reads by name.\n"
         "template <class S>\n"
         "concept spec = requires {\n"
         "  { S::name } -> std::convertible_to<const char*>;\n"
         "  typename std::integral_constant<int, S::dof>;\n"
         "  typename std::integral_constant<int, S::constraints>;\n"
         "  S::coordinates;\n"
         "};\n"
         "template <class S>\n"
         "void add(std::vector<chens::CustomModelInfo>* out, const char* type) {\n"
         "  if constexpr (spec<S>) {\n"
         "    out->push_back(chens::auto_model_info<S>(R\"chens(" +
         header +
         ")chens\", {}));\n"
         "    out->back().spec_type = type;\n"
         "  }\n"
         "}\n"
         "}  // namespace chens_source_models\n\n"
         "extern \"C\" {\n"
         "// The key this object was compiled for: a loader compares it with its own.\n"
         "extern const char chens_jit_key[] = R\"chens(" +
         key +
         ")chens\";\n"
         "void chens_jit_source_models(std::vector<chens::CustomModelInfo>* out) {\n" +
         adds + "}\n}\n";
}

// The names of the files the text includes in quotes (#include "name"), in order; lines in
// comments are not read.
std::vector<std::string> quoted_includes(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream lines(text);
  std::string line;
  bool in_comment = false;
  while (std::getline(lines, line)) {
    std::size_t i = 0;
    if (in_comment) {
      const std::size_t end = line.find("*/");
      if (end == std::string::npos) continue;
      in_comment = false;
      i = end + 2;
    }
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (line.compare(i, 1, "#") == 0) {
      ++i;
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      if (line.compare(i, 7, "include") == 0) {
        i += 7;
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        const std::size_t close = line.find('"', i + 1);
        if (line.compare(i, 1, "\"") == 0 && close != std::string::npos) out.push_back(line.substr(i + 1, close - i - 1));
      }
      continue;
    }
    // A block comment this line opens and leaves open (strings are not told apart: good enough
    // for the lines that matter here, which are preprocessor lines).
    while (i < line.size()) {
      const std::size_t open = line.find("/*", i);
      if (open == std::string::npos || line.find("//", i) < open) break;
      const std::size_t end = line.find("*/", open + 2);
      if (end == std::string::npos) {
        in_comment = true;
        break;
      }
      i = end + 2;
    }
  }
  return out;
}

// The header and the files it includes in quotes, directly or through others, each once: a
// quoted name is looked up beside the file that names it, as the compiler first does; files
// in chens's include directories and those not found are left to the compiler.
std::vector<fs::path> header_files(const fs::path& header) {
  std::vector<fs::path> files = {fs::weakly_canonical(header)};
  const std::vector<std::string> chens_dirs = include_dirs();
  constexpr std::size_t max_files = 256;
  for (std::size_t k = 0; k < files.size() && files.size() < max_files; ++k)
    for (const std::string& name : quoted_includes(read_text(files[k]))) {
      std::error_code ec;
      const fs::path p = fs::weakly_canonical(files[k].parent_path() / name, ec);
      if (ec || !fs::is_regular_file(p, ec) || std::find(files.begin(), files.end(), p) != files.end()) continue;
      if (std::any_of(chens_dirs.begin(), chens_dirs.end(), [&](const std::string& d) { return jit::inside(p, d); }))
        continue;
      files.push_back(p);
    }
  return files;
}

struct Description {
  SourceModelsFn models = nullptr;
  std::string sources;                  // sources_text at its compile
  std::vector<std::string> candidates;  // spec_candidates of the header's text
};

// The header's description object, from the cache where its sidecar's files are unchanged,
// else compiled now; under the object's lock either way.
Description description(const std::string& header) {
  static std::mutex m;
  std::lock_guard<std::mutex> guard(m);
  const std::string text = read_text(header);
  // The header's structs, then those of the files it includes in quotes (a spec may live in
  // one of them).
  std::vector<std::string> candidates;
  for (const fs::path& file : header_files(header))
    for (const std::string& c : spec_candidates(read_text(file)))
      if (std::find(candidates.begin(), candidates.end(), c) == candidates.end()) candidates.push_back(c);
  if (candidates.empty())
    throw StudyError("model.source = \"" + header +
                     "\" defines no struct at namespace scope, nor do the files it "
                     "includes in quotes; a user model is a struct with name, dof, constraints, parameters, "
                     "coordinates, mass, potential and constraint (docs/custom-models.md, section 1)");
  const std::string key = jit::build_key() + "model header: " + header + "\nits text: " + sha256_hex(text) + "\n";
  const std::string dir_text = jit_cache_dir();
  if (dir_text.empty())
    throw StudyError("no writable cache directory for user models compiled on first use (CHENS_CACHE_DIR)");
  const fs::path dir(dir_text);
  const std::string label = "the user models of " + header;
  const std::string stem = jit::file_stem("models " + fs::path(header).filename().string(), key);
  const fs::path sidecar = dir / (stem + ".sources");
  jit::FileLock lock(dir / (stem + ".lock"), label);
  std::string why;
  std::error_code ec;
  // The sidecar: "object NAME" and the sources text of NAME's compile.
  if (fs::exists(sidecar, ec)) {
    const std::string side = read_text(sidecar);
    const std::size_t eol = side.find('\n');
    if (side.rfind("object ", 0) == 0 && eol != std::string::npos) {
      const std::string sources = side.substr(eol + 1);
      const fs::path obj = dir / side.substr(7, eol - 7);
      if (sources_unchanged(sources) && fs::exists(obj, ec)) {
        if (void* h = jit::open_object(obj, key, why)) {
          if (auto fn = reinterpret_cast<SourceModelsFn>(::dlsym(h, "chens_jit_source_models")))
            return {fn, sources, candidates};
          why = "it lacks chens's entry points";
        }
        std::cerr << "chens: the cached object " << obj.string() << " does not load (" << why << "); compiling it again\n";
      }
    }
  }
  const fs::path deps = dir / (stem + ".d");
  jit::compile_object(label, dir, stem, unit_text(header, candidates, key), " -MMD -MF " + jit::shell_word(deps.string()));
  const std::string sources = sources_text(dependencies(read_text(deps)), dir / (stem + ".cpp"), header);
  // Each compile of the header's files gets an object of its own name: a process that loaded
  // the one before (Python) loads the new one, not its own copy of the old.
  const std::string object = stem + "-" + sha256_hex(sources).substr(0, 16) + ".so";
  fs::rename(dir / (stem + ".so"), dir / object);
  jit::write_file(sidecar, "object " + object + "\n" + sources);
  void* h = jit::open_object(dir / object, key, why);
  auto fn = h ? reinterpret_cast<SourceModelsFn>(::dlsym(h, "chens_jit_source_models")) : nullptr;
  if (!fn) throw StudyError("the object just compiled for " + label + " does not load: " + (h ? "no entry point" : why));
  return {fn, sources, candidates};
}

}  // namespace

std::vector<std::string> load_source_models(const std::string& header) {
  // The generated units include it by its path, in quotes.
  if (header.find_first_of("\"\n\r") != std::string::npos)
    throw StudyError("model.source = \"" + header +
                     "\": a header's path may not contain a double quote or a line "
                     "break (the units compiled on first use #include it by its path); rename or move it");
  std::error_code ec;
  if (!fs::is_regular_file(header, ec))
    throw StudyError("model.source = \"" + header +
                     "\": " + (fs::exists(header, ec) ? "not a regular file" : "no such file") +
                     "; give the path of the header that defines your model (relative to the study file; to the "
                     "current directory with --set)");
  const Description d = description(header);
  std::vector<CustomModelInfo> models;
  d.models(&models);
  if (models.empty()) {
    std::string structs;
    for (const std::string& c : d.candidates) structs += (structs.empty() ? "" : ", ") + c.substr(2);
    throw StudyError("model.source = \"" + header + "\" defines no user model: none of its structs (" + structs +
                     ") has the members name, dof, constraints and coordinates of a spec (docs/custom-models.md, "
                     "section 1)");
  }
  const std::string hash = sha256_hex(d.sources);
  std::vector<std::string> names;
  for (CustomModelInfo& m : models) {
    m.from_header = true;
    m.source_hash = hash;
    // What it runs: the CPU, chens_add_model's default FORMULATIONS and every method
    // (cmake/ChensAddModel.cmake), each system compiled on first use.
    for (FormulationId f : {FormulationId::naive, FormulationId::dirac, FormulationId::impetus, FormulationId::baumgarte,
                            FormulationId::constrained})
      m.entries.push_back({"cpu", f, nullptr, all_methods});
    names.push_back(m.name);
    register_header_model(std::move(m));
  }
  return names;
}

}  // namespace chens
