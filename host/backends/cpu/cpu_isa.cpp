#include "backends/cpu/cpu_isa.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace chens {

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

bool cpu_isa_supported(CpuIsa isa) {
#if defined(__GNUC__) && defined(__x86_64__)
  __builtin_cpu_init();
  switch (isa) {
    case CpuIsa::scalar:
    case CpuIsa::sse2: return true;
    case CpuIsa::avx2: return __builtin_cpu_supports("avx2");
    case CpuIsa::avx512: return __builtin_cpu_supports("avx512f");
  }
  return false;
#else
  return isa == CpuIsa::scalar;
#endif
}

CpuIsa cpu_isa_widest() {
  for (int i = cpu_isa_count - 1; i > 0; --i)
    if (cpu_isa_supported(CpuIsa(i))) return CpuIsa(i);
  return CpuIsa::scalar;
}

namespace {
struct Choice {
  CpuIsa isa = CpuIsa::scalar;
  bool forced = false;
  std::string error;
};
Choice choose() {
  Choice c;
  const char* v = std::getenv("CHENS_CPU_ISA");
  if (v == nullptr || *v == '\0') {
    c.isa = cpu_isa_widest();
    return c;
  }
  c.forced = true;
  const std::string s(v);
  for (int i = 0; i < cpu_isa_count; ++i) {
    if (s != cpu_isa_name(CpuIsa(i))) continue;
    if (!cpu_isa_supported(CpuIsa(i))) {
      c.error = "CHENS_CPU_ISA = \"" + s + "\": this CPU cannot run " + s + " (it supports up to " +
                cpu_isa_name(cpu_isa_widest()) + ")";
      return c;
    }
    c.isa = CpuIsa(i);
    return c;
  }
  c.error = "CHENS_CPU_ISA = \"" + s + "\" is not an instruction set chens knows: scalar, sse2, avx2 or avx512";
  return c;
}
}  // namespace

CpuIsa cpu_isa_in_use() {
  const Choice c = choose();
  if (!c.error.empty()) throw std::invalid_argument(c.error);
  return c.isa;
}

const char* cpu_isa_chosen_by() { return choose().forced ? "CHENS_CPU_ISA" : "cpuid"; }

}  // namespace chens
