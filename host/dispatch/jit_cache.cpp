// The cache of objects compiled on first use (jit_cache.hpp).
#include "dispatch/jit_cache.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <system_error>
#include <vector>

#include "dispatch/jit_config.hpp"
#include "dispatch/jit_systems.hpp"
#include "study/study.hpp"

namespace chens {

namespace fs = std::filesystem;

namespace {

bool writable_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) return false;
  const fs::path probe = dir / (".probe-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  ::close(fd);
  fs::remove(probe, ec);
  return true;
}

// The compiler of the command: its first word.
std::string compiler_of(const std::string& command) { return command.substr(0, command.find(' ')); }

// The file the running chens is: the Python module (a shared object holding this code) or the
// executable.
fs::path running_binary() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&running_binary), &info) != 0 && info.dli_fname && *info.dli_fname) {
    const fs::path p(info.dli_fname);
    if (p.extension() == ".so") return p;
  }
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec);
}


// The command with each word "-I" + `from` replaced by "-I" + `to` (quoted for the shell where
// it holds anything but letters, digits and / . _ + -: an installation under "My Tools").
std::string with_include_dir(std::string command, const std::string& from, const std::string& to_path) {
  const bool plain = std::all_of(to_path.begin(), to_path.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("/._+-", c) != nullptr;
  });
  const std::string to = plain ? to_path : jit::shell_word(to_path);
  const std::string word = " -I" + from;
  std::size_t at = 0;
  while ((at = command.find(word, at)) != std::string::npos) {
    const std::size_t end = at + word.size();
    if (end < command.size() && command[end] != ' ') {  // a longer directory
      at = end;
      continue;
    }
    command.replace(at, word.size(), " -I" + to);
    at += 3 + to.size();
  }
  return command;
}

bool has_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

}  // namespace

namespace jit {

namespace {

std::string& installation_hint() {
  static std::string prefix;
  return prefix;
}

// The toolchain of an installation at `dir`, where it holds the installed headers and library.
bool installed_toolchain(const fs::path& dir, Toolchain& out) {
  const fs::path source(CHENS_JIT_SOURCE_DIR), support(CHENS_JIT_SUPPORT_LIB);
  const fs::path include = dir / CHENS_JIT_INSTALL_INCLUDEDIR, lib = dir / CHENS_JIT_INSTALL_LIBDIR / support.filename();
  if (!has_file(include / "chens/host/dispatch/make_engine.hpp") || !has_file(lib)) return false;
  std::string command = with_include_dir(CHENS_JIT_COMPILE, (source / "host").string(), (include / "chens/host").string());
  command = with_include_dir(command, CHENS_JIT_GENERATED_DIR, (include / "chens/host").string());
  out.compile = with_include_dir(command, (source / "include").string(), include.string());
  out.support_lib = lib.string();
  const fs::path cuda_lib = dir / CHENS_JIT_INSTALL_LIBDIR / fs::path(CHENS_JIT_CUDA_SUPPORT_LIB).filename();
  if (*CHENS_JIT_CUDA_COMPILE && has_file(cuda_lib)) {  // the installed kernels' headers are in include/chens/host
    std::string cuda =
        with_include_dir(CHENS_JIT_CUDA_COMPILE, (source / "host").string(), (include / "chens/host").string());
    cuda = with_include_dir(cuda, (source / "kernels").string(), (include / "chens/host").string());
    cuda = with_include_dir(cuda, CHENS_JIT_GENERATED_DIR, (include / "chens/host").string());
    out.cuda_compile = with_include_dir(cuda, (source / "include").string(), include.string());
    out.cuda_support_lib = cuda_lib.string();
  }
  out.origin = "the installation at " + dir.string();
  return true;
}

}  // namespace

bool inside(const fs::path& path, const fs::path& dir) {
  const std::string p = path.lexically_normal().string(), d = dir.lexically_normal().string();
  return p.size() > d.size() && p.compare(0, d.size(), d) == 0 && (d.back() == '/' || p[d.size()] == '/');
}

bool installation_at(const char* prefix) {
  installation_hint() = prefix ? prefix : "";
  return true;
}

const Toolchain& toolchain() {
  static const Toolchain t = [] {
    Toolchain out;
    // An executable built against an installed chens (chens_add_executable) says where it is.
    if (!installation_hint().empty() && installed_toolchain(installation_hint(), out)) return out;
    const fs::path binary = fs::weakly_canonical(running_binary());
    const fs::path source(CHENS_JIT_SOURCE_DIR), support(CHENS_JIT_SUPPORT_LIB);
    const bool build_tree = has_file(source / "host/dispatch/make_engine.hpp") && has_file(support);
    // A chens run from its build tree compiles with the build tree's files; one installed
    // elsewhere (cmake --install, moved or not) with the installation's: the prefix is the
    // nearest directory above the binary that holds the installed headers and library.
    if (!inside(binary, CHENS_JIT_BINARY_DIR) || !build_tree)
      for (fs::path dir = binary.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path())
        if (installed_toolchain(dir, out)) return out;
    if (build_tree) {
      out.compile = CHENS_JIT_COMPILE;
      out.support_lib = support.string();
      if (*CHENS_JIT_CUDA_COMPILE && has_file(CHENS_JIT_CUDA_SUPPORT_LIB)) {
        out.cuda_compile = CHENS_JIT_CUDA_COMPILE;
        out.cuda_support_lib = CHENS_JIT_CUDA_SUPPORT_LIB;
      }
      out.origin = "the build tree " + source.string();
    } else {
      out.missing = "chens's headers and " + support.filename().string() +
                    " are neither in the build tree it was built in (" + source.string() + ", " + support.string() +
                    ") nor installed around " + binary.string() + " (PREFIX/" + CHENS_JIT_INSTALL_INCLUDEDIR +
                    "/chens/host and PREFIX/" + CHENS_JIT_INSTALL_LIBDIR +
                    ", as cmake --install "
                    "lays them out)";
    }
    return out;
  }();
  return t;
}

}  // namespace jit

std::string jit_cache_dir() {
  static std::mutex m;
  static std::set<std::string> told;  // each fallback is said once per process
  std::lock_guard<std::mutex> guard(m);
  const char* env = std::getenv("CHENS_CACHE_DIR");
  fs::path dir;
  if (env && *env) {
    dir = env;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    dir = fs::path(xdg) / "chens";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    dir = fs::path(home) / ".cache" / "chens";
  }
  if (!dir.empty() && writable_dir(dir)) return dir.string();
  const fs::path fallback = fs::temp_directory_path() / ("chens-cache-" + std::to_string(::getuid()));
  if (!writable_dir(fallback)) return "";
  if (told.insert(dir.string()).second)
    std::cerr << "chens: the cache directory " << (dir.empty() ? std::string("(none: HOME is not set)") : dir.string())
              << " is not writable; compiling into " << fallback.string() << " instead\n";
  return fallback.string();
}

namespace jit {

std::string build_key(bool cuda) {
  return std::string("chens ") + CHENS_JIT_VERSION +
         "\ncompile: " + (cuda ? toolchain().cuda_compile : toolchain().compile) + "\nsources: " + CHENS_JIT_SOURCES_HASH +
         "\nsupport: " + CHENS_JIT_SUPPORT_HASH + "\n" +
         (cuda ? std::string("cuda support: ") + CHENS_JIT_CUDA_SUPPORT_HASH + "\n" : std::string());
}

std::string fnv_hex(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string file_stem(const std::string& label, const std::string& key) {
  std::string stem;
  for (char c : label) {
    if (std::isalnum(static_cast<unsigned char>(c))) stem += c;
    else if (!stem.empty() && stem.back() != '-') stem += '-';
  }
  while (!stem.empty() && stem.back() == '-') stem.pop_back();
  return stem + "-" + fnv_hex(key);
}

std::vector<std::string> command_words(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false, quoted = false;
  for (char c : command) {
    if (c == '\'') {
      quoted = !quoted;
      in_word = true;
    } else if (!quoted && std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

std::string shell_word(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

FileLock::FileLock(const fs::path& path, const std::string& label) {
  fd_ = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (fd_ < 0) throw StudyError("cannot open the lock " + path.string() + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    std::cerr << "chens: waiting for another process compiling " << label << "\n";
    if (::flock(fd_, LOCK_EX) != 0) {
      const int e = errno;
      ::close(fd_);
      throw StudyError("cannot lock " + path.string() + ": " + std::strerror(e));
    }
  }
}

FileLock::~FileLock() { ::close(fd_); }

void write_file(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary);
    f << text;
    if (!f) throw StudyError("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

std::string head_of_file(const fs::path& path, int max_lines) {
  std::ifstream f(path);
  std::string line, out;
  int n = 0;
  while (n < max_lines && std::getline(f, line)) {
    out += "  " + line + "\n";
    ++n;
  }
  if (std::getline(f, line)) out += "  ...\n";
  return out;
}

void compile_object(const std::string& label, const fs::path& dir, const std::string& stem, const std::string& unit,
                    const std::string& extra_flags, bool cuda, bool one_line) {
  const Toolchain& tools = toolchain();
  if (!tools.missing.empty())
    throw StudyError("compiling " + label + " on first use needs " + tools.missing +
                     ": run a system this build has, "
                     "or install chens with cmake --install (docs/jit.md)");
  if (cuda && tools.cuda_compile.empty())
    throw StudyError("compiling " + label +
                     " on first use needs the CUDA build's command and libchens_cuda_support.a, "
                     "which " +
                     tools.origin +
                     " lacks (a build or installation without CUDA): run it on the CPU "
                     "(--backend cpu) or a system this build has on the GPU (docs/jit.md)");
  const std::string compiler = compiler_of(cuda ? tools.cuda_compile : tools.compile);
  std::error_code ec;
  if (!fs::exists(compiler, ec))
    throw StudyError("compiling " + label + " on first use needs the " + (cuda ? "CUDA" : "C++") +
                     " compiler this chens was built with, " + compiler + ", which is not there: install it (" +
                     (cuda ? "the CUDA Toolkit" : "Debian: apt-get install g++") +
                     ") or run a system this build has (docs/jit.md)");
  const fs::path src = dir / (stem + (cuda ? ".cu" : ".cpp")), obj = dir / (stem + ".so"), log = dir / (stem + ".log");
  const fs::path tmp = obj.string() + ".tmp." + std::to_string(::getpid());
  write_file(src, unit);
  const std::string begun = "chens: compiling " + label + " ... ";
  if (!one_line) std::cerr << begun << std::flush;
  const auto t0 = std::chrono::steady_clock::now();
  // -fPIC: a build without the Python package compiles its units without it; the object
  // needs it (position-independent code changes no arithmetic). The GPU's object uses the
  // shared CUDA runtime, the one the executable loads, so both see one context and one heap.
  const std::string libs = cuda ? shell_word(tools.cuda_support_lib) + " " + shell_word(tools.support_lib)
                                : shell_word(tools.support_lib);
  const std::string command =
      (cuda ? tools.cuda_compile + " -Xcompiler=-fPIC -shared -cudart shared" : tools.compile + " -fPIC -shared") +
      extra_flags + " -o " + shell_word(tmp.string()) + " " + shell_word(src.string()) + " " + libs + " > " +
      shell_word(log.string()) + " 2>&1";
  const int rc = std::system(command.c_str());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc != 0 || !fs::exists(tmp, ec)) {
    fs::remove(tmp, ec);
    std::cerr << (one_line ? begun : std::string()) + "failed\n";
    throw StudyError("compiling " + label + " failed (" + compiler + " exited with status " + std::to_string(rc) + "):\n" +
                     head_of_file(log, 30) + "the unit: " + src.string() + "; the whole log: " + log.string());
  }
  fs::rename(tmp, obj);
  char took[32];
  std::snprintf(took, sizeof took, "%.1f s", seconds);
  std::cerr << (one_line ? begun : std::string()) + took + "; cached in " + dir.string() + "\n";
}

void* open_object(const fs::path& path, const std::string& key, std::string& why) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    why = e ? e : "dlopen failed";
    return nullptr;
  }
  const char* k = static_cast<const char*>(::dlsym(h, "chens_jit_key"));
  if (!k) {
    why = "it lacks chens's entry points";
  } else if (key != k) {
    why = "it was compiled for another build of chens";
  } else {
    return h;
  }
  ::dlclose(h);
  return nullptr;
}

}  // namespace jit
}  // namespace chens
