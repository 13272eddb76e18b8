// Systems compiled on first use (issue 42): a system the build did not instantiate (a chain
// of any N from 2 to 256), or any system when CHENS_SYSTEMS=jit, is compiled from the same
// template as the systems list's units (dispatch/make_engine.hpp) with the same command
// (cmake/ChensJitConfig.cmake), for the run's formulation and method only, into a shared
// object in a cache, loaded, and run through the same engine interface. The cache
// (CHENS_CACHE_DIR, else $XDG_CACHE_HOME/chens, else ~/.cache/chens) is keyed by chens's
// version, the compile command, a hash of every source a unit can include and the unit's
// own text; a lock per object keeps concurrent processes (MPI ranks, a study's runs in
// parallel) from compiling it twice, and an object is written aside and renamed, so none is
// ever loaded half-written. The cache's mechanics: dispatch/jit_cache.hpp. On the CPU, and
// on the GPU in a build with CUDA (nvcc, the CUDA units' command; docs/jit.md).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "backends/engine.hpp"
#include "backends/ensemble_spec.hpp"
#include "dispatch/system_args.hpp"

namespace chens {

struct Study;

// The largest chain a unit compiled on first use is made for (model.atoms; the per-instance
// state of 256 atoms is 8 KiB, its numerical reference's as much again).
inline constexpr int max_jit_chain_atoms = 256;

// One system as a unit compiled on first use instantiates it.
struct JitSystem {
  std::string model_type;           // the model's C++ type in namespace chens, e.g. "Chain<double, 12>"
  std::string traits;               // a built-in model's traits header (models/<model>_traits.hpp)
  std::string header;               // a user model from a header (model.source): its absolute path
  std::string header_hash;          // and the SHA-256 of it and of every file it includes (source_models.hpp)
  std::string formulation;          // FormulationId's enumerator, e.g. "dirac"
  bool tangents = false;            // output.wedge, output.lyapunov or output.lyapunov_spectrum
  bool spectrum = false;            // output.lyapunov_spectrum: 2(n - m) tangents (geometry/tangent_system.hpp)
  MethodId method = MethodId::rk4;  // the one method the unit instantiates
  // output.reference_method: the numerical reference's pair (DOPRI5 as the systems list's units)
  MethodId reference_method = MethodId::dopri5;
  bool cuda = false;  // the GPU's engine (CudaBackend, compiled by nvcc), else the CPU's
  std::string label;  // for messages: "chain N = 12, dirac, rk4, cpu"
};

// Whether this build can compile systems on first use for the GPU: it was built with CUDA, so
// it knows the CUDA units' command (cmake/ChensJitConfig.cmake).
bool jit_gpu_built();

// CHENS_SYSTEMS: "jit" compiles every system on first use, even those the build has (tests
// show that both give the same bits); "" or "built-in" uses the build's units where they
// exist. Any other value is refused (std::invalid_argument naming it).
bool jit_forced();

// Whether a unit compiled on first use can run the study: dispatch/system_dispatch.hpp's
// jit_possible<Backend> (it asks the systems list).

// Whether the model has the study's tangents (output.wedge, output.lyapunov: its description
// says) in the study's precision (double), as resolve() rules: what a tangent system compiled
// on first use may be made for.
bool model_has_tangents(const Study& s);

// The study's system as a unit compiled on first use instantiates it, for the CPU or (cuda)
// the GPU.
JitSystem jit_system(const Study& s, bool cuda = false);

// The cache directory (created if missing); "" where none can be made writable.
std::string jit_cache_dir();

// Whether the system's object is in the cache already (chens check, --dry-run).
bool jit_cached(const JitSystem& sys);

// Where the system's object is (or would be) in the cache: "<system>-<hash>.so". Objects of
// other builds of chens stay beside it until the cache is cleared (any time: it holds
// nothing but objects chens can compile again).
std::string jit_object_path(const JitSystem& sys);

// The engine of the system, compiled and cached first where needed; says what it does on
// stderr ("chens: compiling chain N = 12, dirac, rk4, cpu ... 14.2 s; cached in DIR").
// Throws StudyError where the compiler is missing or fails (its message included).
std::unique_ptr<Engine> jit_make_engine(const JitSystem& sys, const SystemArgs& args, const EnsembleSpec& spec);

// Compiles the system's object into the cache where it is missing (and loads it, which
// checks it), as jit_make_engine would, without making an engine. Safe to call from several
// threads at once for different systems: each compile runs beside the others (the object's
// lock keeps two of one system apart), and says so in one line on stderr (chens check
// --compile). Throws StudyError as jit_make_engine does.
void jit_compile(const JitSystem& sys);

// The bytes one instance of the system takes at most (ModelTraits::bytes_per_instance), from
// its object where it is cached, else 0.
std::size_t jit_cached_bytes_per_instance(const JitSystem& sys);

}  // namespace chens
