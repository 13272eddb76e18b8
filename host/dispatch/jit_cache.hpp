// The cache of objects compiled on first use (docs/jit.md): where it is, how an object is
// named, compiled, locked and loaded. Its two users: systems (dispatch/jit_systems.cpp, an
// engine per object) and user models from a header (dispatch/source_models.cpp, a model's
// description per object). An object carries the key it was compiled for (`chens_jit_key`)
// and is loaded only if the key matches, so a foreign, stale or corrupt object is compiled
// again; it is written aside and renamed, so none is ever loaded half-written.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace chens::jit {

// What an object is compiled with: the CPU system units' command and the engine-support
// library: from the installation an executable built against an installed chens names
// (installation_at), from the build tree for a chens run in it, else from the installation
// around the running binary (the executable, or the Python module): PREFIX/include/chens/host,
// PREFIX/include and PREFIX/lib (cmake/ChensInstall.cmake's layout; the prefix may have moved).
struct Toolchain {
  std::string compile;      // the command, without its output, input and the library
  std::string support_lib;  // libchens_engine_support.a
  // The GPU's (a build with CUDA; empty otherwise): a CUDA system unit's command and the GPU
  // engines' support library (libchens_cuda_support.a), linked before support_lib.
  std::string cuda_compile;
  std::string cuda_support_lib;
  std::string origin;   // "the build tree DIR" or "the installation at PREFIX"
  std::string missing;  // non-empty where neither has the files: what is missing
};
const Toolchain& toolchain();
// Says where the installation an executable was built against is (chens_add_executable's
// generated unit, at start-up, before any toolchain() call): toolchain() then takes its files
// first. Returns true (for the static initialiser that calls it).
bool installation_at(const char* prefix);

// What decides every object's machine code: chens's version, the compile command (the CPU's,
// or the GPU's where `cuda`), the hash of every source a unit can include and of the support
// libraries.
std::string build_key(bool cuda = false);

// 64-bit FNV-1a in hex: the object's file name (the key itself is checked inside the object).
std::string fnv_hex(const std::string& text);

// Letters, digits and '-' of the label, then the key's hash: "chain-N-12-dirac-rk4-cpu-<hash>".
std::string file_stem(const std::string& label, const std::string& key);

// Whether `path` lies below the directory `dir` (both taken lexically: "a/b/../c" is "a/c").
bool inside(const std::filesystem::path& path, const std::filesystem::path& dir);

// The text as one word of a /bin/sh command line.
std::string shell_word(const std::string& text);
// The words of a command as /bin/sh splits it where only single quotes quote (the compile
// command's form: its paths are plain or shell_word-quoted).
std::vector<std::string> command_words(const std::string& command);

// An exclusive lock on `path` (flock: released when the process ends, however it ends); says
// "waiting for another process compiling LABEL" when another holds it.
class FileLock {
 public:
  FileLock(const std::filesystem::path& path, const std::string& label);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

// Writes the file under a temporary name and renames it.
void write_file(const std::filesystem::path& path, const std::string& text);

// The first `max_lines` lines of a file, indented, "  ..." after them if there are more.
std::string head_of_file(const std::filesystem::path& path, int max_lines);

// Compiles `unit` (written to DIR/STEM.cpp) into DIR/STEM.so with the CPU system units'
// command, `extra_flags` after it, and the engine-support library; where `cuda`, the unit is
// DIR/STEM.cu, compiled by the CUDA units' command (nvcc) against the shared CUDA runtime the
// executable loads, and linked with the GPU's support library too. The compiler's output goes
// to DIR/STEM.log. Says "chens: compiling LABEL ... 14.2 s; cached in DIR" on stderr, its
// beginning before the compile and the rest after it, or (one_line: compiles in parallel,
// chens check --compile) the whole line after it. Throws StudyError where the compiler is
// missing (naming it and how to install it) or fails (its first 30 lines of output, the unit's
// path and the log's). The caller holds DIR/STEM.lock.
void compile_object(const std::string& label, const std::filesystem::path& dir, const std::string& stem,
                    const std::string& unit, const std::string& extra_flags, bool cuda = false, bool one_line = false);

// The object at `path` (dlopen, never closed: engines' code and models' functions live in
// it), if it loads and carries `key`; else nullptr, and `why` says why not.
void* open_object(const std::filesystem::path& path, const std::string& key, std::string& why);

}  // namespace chens::jit
