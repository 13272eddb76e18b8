// The instruction set the CPU backend's packed lanes run in (ensemble/packed_steps.hpp): the
// widest this CPU supports and this build compiled, found at run time (one binary serves every
// x86-64 machine), or the one CHENS_CPU_ISA names. Results do not depend on it
// (linalg/simd_pack.hpp): forcing a width is for tests and benchmarks.
#pragma once

#include <string>

#include "backends/cpu/cpu_isas_compiled.hpp"

namespace chens {

enum class CpuIsa : int {
  scalar = 0,  // no lanes: one instance at a time
  sse2 = 1,    // 2 doubles per register (the x86-64 baseline)
  avx2 = 2,    // 4
  avx512 = 3,  // 8 (AVX-512F)
};
inline constexpr int cpu_isa_count = 4;

// The instruction sets whose lanes this build compiles, bit i for CpuIsa(i): CHENS_CPU_ISAS of
// the build (cmake/ChensCpuIsas.cmake, issue 42: a sanitizer or development build compiles
// what its machine runs; each set's lanes are a flattened copy of every step), generated
// into a header that every unit includes, those compiled on first use and against the
// installation too; scalar is always compiled. A unit compiled without optimisation (-O0: a
// Debug build, or a user's debug project compiling these headers) keeps scalar and SSE2 only:
// the AVX2 and AVX-512 copies rely on gnu::flatten inlining every call into their
// target-attributed body (cpu_lanes.hpp), which GCC does not do at -O0; the out-of-line
// callees (the model, the step, compiled for the default target) then take Pack<4> and Pack<8>
// arguments and results in memory where the AVX caller passes them in registers (x86-64
// psABI), and the run read garbage: a segmentation fault on the AVX2 lanes here
// (docs/performance.md, "CPU lanes"). SSE2 is the baseline, so its 16-byte packs pass alike.
// The engine runs the widest set its own unit compiled (CpuLaneChoice::isa), same results.
#if defined(__OPTIMIZE__)
inline constexpr unsigned cpu_isas_compiled_mask = (CHENS_CPU_ISAS_MASK) | 1u;
#else
inline constexpr unsigned cpu_isas_compiled_mask = ((CHENS_CPU_ISAS_MASK)&3u) | 1u;
#endif
// Whether a mask of sets (bit i for CpuIsa(i)) holds isa.
constexpr bool cpu_isa_in(unsigned mask, CpuIsa isa) { return ((mask >> static_cast<int>(isa)) & 1u) != 0; }
// The widest of mask's sets not wider than at_most (scalar where it holds none else).
constexpr CpuIsa cpu_isa_widest_in(unsigned mask, CpuIsa at_most = CpuIsa::avx512) {
  for (int i = static_cast<int>(at_most); i > 0; --i)
    if (cpu_isa_in(mask, CpuIsa(i))) return CpuIsa(i);
  return CpuIsa::scalar;
}
constexpr bool cpu_isa_compiled(CpuIsa isa) { return cpu_isa_in(cpu_isas_compiled_mask, isa); }
// The widest instruction set compiled that is not wider than isa.
constexpr CpuIsa cpu_isa_compiled_at_most(CpuIsa isa) { return cpu_isa_widest_in(cpu_isas_compiled_mask, isa); }

const char* cpu_isa_name(CpuIsa isa);
// Doubles per register: 1, 2, 4 or 8.
int cpu_isa_width(CpuIsa isa);
// Whether this CPU can run isa and this build compiled it.
bool cpu_isa_supported(CpuIsa isa);
// Why isa cannot run here ("this CPU cannot run it", or that the build did not compile it),
// or nullptr where it can: what a test skipping a width says.
const char* cpu_isa_unavailable(CpuIsa isa);
// The instruction sets this build compiled, as "scalar, sse2, avx2".
std::string cpu_isas_compiled_names();
// The instruction sets this CPU runs, bit i for CpuIsa(i) (scalar and sse2 on every x86-64).
unsigned cpu_isas_this_cpu_runs();
// The widest supported instruction set.
CpuIsa cpu_isa_widest();
// The instruction set CPU runs use: CHENS_CPU_ISA (scalar, sse2, avx2 or avx512) where set,
// else the widest. Throws std::invalid_argument naming the variable and its value when the
// value is not one of those, this CPU cannot run it or this build did not compile it. Read at each call (each run's engine),
// so that a test can run every width in one process.
CpuIsa cpu_isa_in_use();
// How cpu_isa_in_use() was chosen: "CHENS_CPU_ISA" or "cpuid".
const char* cpu_isa_chosen_by();

// The choice cpu_isa_in_use() makes, from its inputs: CHENS_CPU_ISA's value (nullptr or ""
// where unset), the sets compiled and those the CPU runs (masks as above; tests give their
// own). error is the refusal's text, empty where value is one the build has and the CPU runs.
struct CpuIsaChoice {
  CpuIsa isa = CpuIsa::scalar;
  bool forced = false;
  std::string error;
};
CpuIsaChoice cpu_isa_choose(const char* value, unsigned compiled, unsigned runs);

}  // namespace chens
