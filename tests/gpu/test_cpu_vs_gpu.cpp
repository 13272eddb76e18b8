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
#include <cstdio>
#include <string>

#include <chens/diagnostics/metrics.hpp>

#include "chain_kernels.hpp"
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

// Final states of every instance agree to `tol` (relative), lost flags exactly, step
// counts in total; the CPU run must lose nothing (these are bounded orbits).
void expect_same(const PerInstanceResult& cpu, const PerInstanceResult& gpu, std::uint64_t n, int S, double tol,
                 const std::string& what) {
  double worst = 0, worst_metric = 0;
  std::uint64_t cpu_steps = 0, gpu_steps = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(cpu.lost[i], 0) << what << ": instance " << i << " lost on the CPU";
    ASSERT_EQ(cpu.lost[i], gpu.lost[i]) << what << ": instance " << i;
    for (int c = 0; c < S; ++c) {
      const double a = cpu.final_state[i * S + c], b = gpu.final_state[i * S + c];
      worst = std::max(worst, std::abs(a - b) / (1 + std::abs(a)));
    }
    for (int m = 0; m < metric_count; ++m)
      worst_metric = std::max(worst_metric, std::abs(cpu.metrics[i * metric_count + m] - gpu.metrics[i * metric_count + m]));
    cpu_steps += cpu.counters[i].steps;
    gpu_steps += gpu.counters[i].steps;
  }
  EXPECT_LT(worst, tol) << what;
  EXPECT_LT(worst_metric, tol) << what;
  EXPECT_NEAR(static_cast<double>(gpu_steps), static_cast<double>(cpu_steps), 1e-3 * static_cast<double>(cpu_steps)) << what;
  std::printf("[ compare  ] %s: largest relative state difference %.3g, metric difference %.3g\n", what.c_str(), worst,
              worst_metric);
}

TEST_P(CpuVsGpu, SameInstancesGiveTheSameResults) {
  const auto [formulation, method] = GetParam();
  Study s;
  s.formulation = formulation;
  s.method = method;
  // Two pairs blow up, on both backends, at a time that rounding decides: the total
  // Hamiltonian's constraint residual grows exponentially under the implicit midpoint rule
  // (|phi| 0.07 at t = 10, overflow between t = 10 and 20), and explicit Euler on the
  // modified impetus Hamiltonian gains energy superexponentially (energy error 4.1 at
  // t = 2, overflow before t = 3). Compare them while their orbits are bounded.
  s.t_end = 20.0;
  if (formulation == FormulationId::total && method == MethodId::midpoint) s.t_end = 10.0;
  if (formulation == FormulationId::impetus_modified && method == MethodId::euler) s.t_end = 2.0;
  s.h = 0.05;
  s.size = 4096;
  s.perturbation = 1e-3;
  s.momentum = formulation != FormulationId::impetus && formulation != FormulationId::impetus_modified;
  s.projection_tol = 1e-6;
  s.rtol = s.atol = 1e-9;
  const RunParams<double> rp = resolve(s);
  const std::uint64_t n = static_cast<std::uint64_t>(s.size);
  expect_same(cpu_run_pendulum_instances(s, rp, n), cuda_run_pendulum_instances(s, rp, n), n, 4, 1e-9,
              std::string("pendulum ") + formulation_name(formulation) + " + " + method_name(method));
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

INSTANTIATE_TEST_SUITE_P(Rattle, CpuVsGpu,
                         ::testing::Values(std::make_tuple(FormulationId::constrained, MethodId::rattle)),
                         [](const auto&) { return std::string("constrained_rattle"); });

// The seven-atom chain of 002 §7, perturbed, with the numerical reference on: every chain
// formulation and method, per-thread tridiagonal solves on the GPU against the CPU.
class ChainCpuVsGpu : public CpuVsGpu {};

TEST_P(ChainCpuVsGpu, SameInstancesGiveTheSameResults) {
  const auto [formulation, method] = GetParam();
  Study s;
  s.model_kind = "chain";
  s.atoms = cuda_chain_atoms;
  s.formulation = formulation;
  s.method = method;
  s.t_end = 10.0;
  s.h = 0.05;
  s.size = 1024;
  s.perturbation = 1e-3;
  s.momentum = formulation != FormulationId::impetus;
  s.projection_tol = 1e-8;
  s.rtol = s.atol = 1e-9;
  s.reference = "auto";
  const RunParams<double> rp = resolve(s);
  const std::uint64_t n = static_cast<std::uint64_t>(s.size);
  expect_same(cpu_run_chain_instances(s, rp, n), cuda_run_chain_instances(s, rp, n), n, 4 * cuda_chain_atoms, 1e-9,
              std::string("chain ") + formulation_name(formulation) + " + " + method_name(method));
}

INSTANTIATE_TEST_SUITE_P(
    Formulations, ChainCpuVsGpu,
    ::testing::Values(std::make_tuple(FormulationId::dirac, MethodId::rk4),
                      std::make_tuple(FormulationId::dirac, MethodId::dopri5),
                      std::make_tuple(FormulationId::dirac, MethodId::midpoint),
                      std::make_tuple(FormulationId::dirac, MethodId::gauss2),
                      std::make_tuple(FormulationId::naive, MethodId::rk4),
                      std::make_tuple(FormulationId::naive, MethodId::dopri5),
                      std::make_tuple(FormulationId::impetus, MethodId::rk4),
                      std::make_tuple(FormulationId::constrained, MethodId::rattle)),
    [](const auto& info) {
      std::string name = std::string(formulation_name(std::get<0>(info.param))) + "_" + method_name(std::get<1>(info.param));
      for (char& ch : name)
        if (ch == '-') ch = '_';
      return name;
    });

}  // namespace
}  // namespace chens
