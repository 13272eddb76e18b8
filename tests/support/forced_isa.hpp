// CHENS_CPU_ISA (backends/cpu/cpu_isa.hpp) set for one scope and unset after it: a test runs
// each instruction set's lanes in one process (cpu_isa_in_use() reads it at each run).
#pragma once

#include <cstdlib>
#include <string>

namespace chens::test {

struct ForcedIsa {
  explicit ForcedIsa(const std::string& v) { ::setenv("CHENS_CPU_ISA", v.c_str(), 1); }
  ~ForcedIsa() { ::unsetenv("CHENS_CPU_ISA"); }
  ForcedIsa(const ForcedIsa&) = delete;
  ForcedIsa& operator=(const ForcedIsa&) = delete;
};

}  // namespace chens::test
