// CPU-vs-GPU comparison, instance by instance, for every (formulation, method) pair of
// the pendulum: the CUDA kernel and the CPU twin run the same per-instance function
// (run_instance_to_end). Skipped, with the reason, where no CUDA device is usable.
//
// Tolerance: nvcc contracts a*b+c into fused multiply-adds, g++ on x86-64 without -mfma
// does not, so results differ by rounding from the first step on; over 200 steps of a
// non-chaotic orbit the states agree to ~1e-12 relative. Counters must agree exactly
// except where a projection or step-size decision sits on a rounding knife edge, so we
// compare them in total over the ensemble with a small allowance.
#include <gtest/gtest.h>

#include <cmath>

#include "pendulum_kernels.hpp"
#include "study/study.hpp"

namespace chens {
namespace {

class CpuVsGpu : public ::testing::TestWithParam<std::tuple<FormulationId, MethodId>> {
 protected:
  void SetUp() override {
    const CudaDeviceInfo dev = cuda_device_info();
    if (!dev.available) GTEST_SKIP() << "skipped: " << dev.description;
  }
};

TEST_P(CpuVsGpu, SameInstancesGiveTheSameResults) {
  const auto [formulation, method] = GetParam();
  Study s;
  s.formulation = formulation;
  s.method = method;
  s.t_end = 20.0;
  s.h = 0.05;
  s.size = 4096;
  s.perturbation = 1e-3;
  s.momentum = formulation != FormulationId::impetus && formulation != FormulationId::impetus_modified;
  s.projection_tol = 1e-6;
  s.rtol = s.atol = 1e-9;
  const RunParams<double> rp = resolve(s);
  const std::uint64_t n = static_cast<std::uint64_t>(s.size);
  const PerInstanceResult cpu = cpu_run_pendulum_instances(s, rp, n);
  const PerInstanceResult gpu = cuda_run_pendulum_instances(s, rp, n);
  double worst = 0;
  std::uint64_t cpu_steps = 0, gpu_steps = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(cpu.lost[i], gpu.lost[i]) << "instance " << i;
    for (int c = 0; c < 4; ++c) {
      const double a = cpu.final_state[i * 4 + c], b = gpu.final_state[i * 4 + c];
      worst = std::max(worst, std::abs(a - b) / (1 + std::abs(a)));
    }
    cpu_steps += cpu.counters[i].steps;
    gpu_steps += gpu.counters[i].steps;
  }
  EXPECT_LT(worst, 1e-9) << formulation_name(formulation) << " + " << method_name(method);
  EXPECT_NEAR(static_cast<double>(gpu_steps), static_cast<double>(cpu_steps), 1e-3 * static_cast<double>(cpu_steps));
}

INSTANTIATE_TEST_SUITE_P(
    AllPairs, CpuVsGpu,
    ::testing::Combine(::testing::Values(FormulationId::naive, FormulationId::total, FormulationId::extended,
                                         FormulationId::dirac, FormulationId::impetus, FormulationId::impetus_modified),
                       ::testing::Values(MethodId::euler, MethodId::rk2, MethodId::rk4, MethodId::dopri5,
                                         MethodId::midpoint, MethodId::gauss2)),
    [](const auto& info) {
      std::string name = std::string(formulation_name(std::get<0>(info.param))) + "_" + method_name(std::get<1>(info.param));
      for (char& ch : name)
        if (ch == '-') ch = '_';
      return name;
    });

}  // namespace
}  // namespace chens
