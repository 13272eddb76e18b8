// The instruction set the CPU backend's packed lanes run in (ensemble/packed_steps.hpp): the
// widest this CPU supports, found at run time (one binary serves every x86-64 machine), or
// the one CHENS_CPU_ISA names. Results do not depend on it (linalg/simd_pack.hpp): forcing a
// width is for tests and benchmarks.
#pragma once

#include <string>

namespace chens {

enum class CpuIsa : int {
  scalar = 0,  // no lanes: one instance at a time
  sse2 = 1,    // 2 doubles per register (the x86-64 baseline)
  avx2 = 2,    // 4
  avx512 = 3,  // 8 (AVX-512F)
};
inline constexpr int cpu_isa_count = 4;

const char* cpu_isa_name(CpuIsa isa);
// Doubles per register: 1, 2, 4 or 8.
int cpu_isa_width(CpuIsa isa);
// Whether this CPU (and this build) can run isa.
bool cpu_isa_supported(CpuIsa isa);
// The widest supported instruction set.
CpuIsa cpu_isa_widest();
// The instruction set CPU runs use: CHENS_CPU_ISA (scalar, sse2, avx2 or avx512) where set,
// else the widest. Throws std::invalid_argument naming the variable and its value when the
// value is not one of those or this CPU cannot run it. Read at each call (each run's engine),
// so that a test can run every width in one process.
CpuIsa cpu_isa_in_use();
// How cpu_isa_in_use() was chosen: "CHENS_CPU_ISA" or "cpuid".
const char* cpu_isa_chosen_by();

}  // namespace chens
