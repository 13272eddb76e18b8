#include "backends/cpu/cpu_isa.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace chens {

namespace {
std::string names_of(unsigned mask) {
  std::string names;
  for (int i = 0; i < cpu_isa_count; ++i)
    if (cpu_isa_in(mask, CpuIsa(i))) names.append(names.empty() ? "" : ", ").append(cpu_isa_name(CpuIsa(i)));
  return names;
}
}  // namespace

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::scalar: return "scalar";
    case CpuIsa::sse2: return "sse2";
    case CpuIsa::avx2: return "avx2";
    case CpuIsa::avx512: return "avx512";
  }
  return "?";
}

int cpu_isa_width(CpuIsa isa) { return isa == CpuIsa::scalar ? 1 : 1 << static_cast<int>(isa); }

unsigned cpu_isas_this_cpu_runs() {
#if defined(__GNUC__) && defined(__x86_64__)
  __builtin_cpu_init();
  return 0b0011u | (__builtin_cpu_supports("avx2") ? 0b0100u : 0u) | (__builtin_cpu_supports("avx512f") ? 0b1000u : 0u);
#else
  return 0b0001u;
#endif
}

bool cpu_isa_supported(CpuIsa isa) { return cpu_isa_in(cpu_isas_compiled_mask & cpu_isas_this_cpu_runs(), isa); }

const char* cpu_isa_unavailable(CpuIsa isa) {
  if (!cpu_isa_in(cpu_isas_this_cpu_runs(), isa)) return "this CPU cannot run it";
  if (!cpu_isa_compiled(isa)) return "this build did not compile its lanes (CHENS_CPU_ISAS)";
  return nullptr;
}

std::string cpu_isas_compiled_names() { return names_of(cpu_isas_compiled_mask); }

CpuIsa cpu_isa_widest() { return cpu_isa_widest_in(cpu_isas_compiled_mask & cpu_isas_this_cpu_runs()); }

CpuIsaChoice cpu_isa_choose(const char* value, unsigned compiled, unsigned runs) {
  compiled |= 1u;
  CpuIsaChoice c;
  if (value == nullptr || *value == '\0') {
    c.isa = cpu_isa_widest_in(compiled & runs);
    return c;
  }
  c.forced = true;
  const std::string s(value);
  for (int i = 0; i < cpu_isa_count; ++i) {
    if (s != cpu_isa_name(CpuIsa(i))) continue;
    if (!cpu_isa_in(runs, CpuIsa(i))) {
      c.error = "CHENS_CPU_ISA = \"" + s + "\": this CPU cannot run " + s + " (it supports up to " +
                cpu_isa_name(cpu_isa_widest_in(runs)) + ")";
    } else if (!cpu_isa_in(compiled, CpuIsa(i))) {
      c.error = "CHENS_CPU_ISA = \"" + s + "\": this build did not compile the lanes for " + s + " (it has " +
                names_of(compiled) + "; the CMake option CHENS_CPU_ISAS chooses them)";
    } else {
      c.isa = CpuIsa(i);
    }
    return c;
  }
  c.error = "CHENS_CPU_ISA = \"" + s + "\" is not an instruction set chens knows: scalar, sse2, avx2 or avx512";
  return c;
}

namespace {
CpuIsaChoice choose() {
  return cpu_isa_choose(std::getenv("CHENS_CPU_ISA"), cpu_isas_compiled_mask, cpu_isas_this_cpu_runs());
}
}  // namespace

CpuIsa cpu_isa_in_use() {
  const CpuIsaChoice c = choose();
  if (!c.error.empty()) throw std::invalid_argument(c.error);
  return c.isa;
}

const char* cpu_isa_chosen_by() { return choose().forced ? "CHENS_CPU_ISA" : "cpuid"; }

}  // namespace chens
