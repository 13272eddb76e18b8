// What the tests of systems compiled on first use share, CPU (test_jit_systems.cpp) and GPU
// (gpu/test_cpu_vs_gpu.cpp's JitOnTheGpu).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

#include "study/study.hpp"

namespace chens::test {

// CHENS_SYSTEMS (dispatch/jit_systems.hpp's jit_forced) set for one scope and restored after it.
class SystemsSetting {
 public:
  explicit SystemsSetting(const char* value) {
    if (const char* old = std::getenv("CHENS_SYSTEMS")) old_ = old;
    ::setenv("CHENS_SYSTEMS", value, 1);
  }
  ~SystemsSetting() {
    if (old_.empty()) {
      ::unsetenv("CHENS_SYSTEMS");
    } else {
      ::setenv("CHENS_SYSTEMS", old_.c_str(), 1);
    }
  }
  SystemsSetting(const SystemsSetting&) = delete;
  SystemsSetting& operator=(const SystemsSetting&) = delete;

 private:
  std::string old_;
};

// The first system the tests compile: the pendulum's Hamilton-Dirac equations under RK4 with
// the momentum projection (a unit of every build), with kept states and recorded instances.
inline Study jit_pendulum_study(std::int64_t size) {
  Study s;
  s.formulation = FormulationId::dirac;
  s.method = MethodId::rk4;
  s.momentum = true;
  s.h = 0.05;
  s.t_end = 5;
  s.sample_dt = 0.5;
  s.size = size;
  s.states = true;
  s.record = {0, 7};
  return s;
}

}  // namespace chens::test
