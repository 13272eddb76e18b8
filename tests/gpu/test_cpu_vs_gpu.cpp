// CPU-vs-GPU comparison, instance by instance, for every (formulation, method) pair of
// the pendulum and the chain: both ensemble backends run the same per-instance driver
// (include/chens/ensemble/instance.hpp) and hand back every instance's final state,
// metrics and counters (EnsembleSpec::keep_instances). Skipped, with the reason, where no
// CUDA device is usable.
//
// Tolerance: nvcc contracts a*b+c into fused multiply-adds, g++ on x86-64 without -mfma
// does not, so results differ by rounding from the first step on; over 200 steps of a
// non-chaotic orbit the states agree to ~1e-12 relative. Counters must agree exactly
// except where a projection or step-size decision sits on a rounding knife edge, so we
// compare them in total over the ensemble with a small allowance.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>

#include <chens/diagnostics/metrics.hpp>

#include "backends/cuda_backend.hpp"
#include "chain_group.hpp"
#include "cli/cli.hpp"
#include "dispatch/jit_systems.hpp"
#include "dispatch/run_study.hpp"
#include "dispatch/system_dispatch.hpp"
#include "study/study.hpp"
#include "support/checkpoint_resume.hpp"
#include "support/only_instances.hpp"
#include "support/first_use.hpp"
#include "support/source_dir.hpp"

namespace chens {
namespace {

// Tests that need a CUDA device: skipped, with the reason, where there is none.
template <class Base>
class NeedsGpu : public Base {
 protected:
  void SetUp() override {
    const CudaDeviceInfo dev = cuda_device_info();
    if (!dev.available) GTEST_SKIP() << "skipped: " << dev.description;
  }
};

class CpuVsGpu : public NeedsGpu<::testing::TestWithParam<std::tuple<FormulationId, MethodId>>> {};

// Final states of every instance agree to `tol` (relative), lost flags exactly, step
// counts in total; the CPU run must lose nothing (these are bounded orbits).
void expect_same(const PerInstanceResult& cpu, const PerInstanceResult& gpu, std::uint64_t n, int S, double tol,
                 const std::string& what) {
  ASSERT_EQ(cpu.lost.size(), n) << what;
  ASSERT_EQ(gpu.lost.size(), n) << what;
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

// Every instance of the study, one by one, from the CPU or the GPU ensemble backend.
PerInstanceResult kept_on(const Study& s, bool gpu) {
  const RunParams<double> rp = resolve(s);
  EnsembleSpec spec = ensemble_spec(s);
  spec.keep_instances = spec.size;
  return (gpu ? run_study_cuda(s, rp, spec) : run_study_cpu(s, rp, spec)).kept;
}

// A (formulation, method) case's name: "impetus_modified_rk4".
std::string pair_name(const ::testing::TestParamInfo<std::tuple<FormulationId, MethodId>>& info) {
  std::string name = std::string(formulation_name(std::get<0>(info.param))) + "_" + method_name(std::get<1>(info.param));
  for (char& ch : name)
    if (ch == '-') ch = '_';
  return name;
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
  expect_same(kept_on(s, false), kept_on(s, true), static_cast<std::uint64_t>(s.size), 4, 1e-9,
              std::string("pendulum ") + formulation_name(formulation) + " + " + method_name(method));
}

INSTANTIATE_TEST_SUITE_P(
    AllPairs, CpuVsGpu,
    ::testing::Combine(::testing::Values(FormulationId::naive, FormulationId::total, FormulationId::extended,
                                         FormulationId::dirac, FormulationId::impetus, FormulationId::impetus_modified,
                                         FormulationId::baumgarte),
                       ::testing::Values(MethodId::euler, MethodId::rk2, MethodId::rk4, MethodId::dopri5, MethodId::midpoint,
                                         MethodId::gauss2)),
    pair_name);

INSTANTIATE_TEST_SUITE_P(Rattle, CpuVsGpu,
                         ::testing::Values(std::make_tuple(FormulationId::constrained, MethodId::rattle),
                                           std::make_tuple(FormulationId::constrained, MethodId::rattle4),
                                           std::make_tuple(FormulationId::constrained, MethodId::rattle4_suzuki),
                                           std::make_tuple(FormulationId::constrained, MethodId::rattle6),
                                           std::make_tuple(FormulationId::constrained, MethodId::rattle8),
                                           // compiled on first use, for the CPU and the GPU alike
                                           std::make_tuple(FormulationId::constrained, MethodId::lobatto3)),
                         pair_name);

// The methods no unit of the list instantiates (first_use_methods, docs/jit.md): compiled on
// first use for the CPU and the GPU alike, and compared as the listed ones are. Rodas5P runs
// one thread per instance, its Jacobian, W and LU in the thread's local memory.
INSTANTIATE_TEST_SUITE_P(FirstUse, CpuVsGpu,
                         ::testing::Values(std::make_tuple(FormulationId::naive, MethodId::dop853),
                                           std::make_tuple(FormulationId::dirac, MethodId::vern9),
                                           std::make_tuple(FormulationId::naive, MethodId::rodas5p),
                                           std::make_tuple(FormulationId::dirac, MethodId::rodas5p)),
                         pair_name);

// Issue 8: the penalty pendulum of 003 (C = G1, non-tangential data) with Stormer-Verlet
// and the ODE methods, and the implicit midpoint rule with midpoint (stage) projection;
// Rodas5P, the stiff penalty's method (issue 44), compiled on first use.
class PenaltyCpuVsGpu : public NeedsGpu<::testing::TestWithParam<MethodId>> {};

TEST_P(PenaltyCpuVsGpu, SameInstancesGiveTheSameResults) {
  const MethodId method = GetParam();
  Study s;
  s.model_kind = ModelKind::penalty_pendulum;
  s.formulation = FormulationId::penalty;
  set_key(s, "model.penalty=100.0");
  set_key(s, "model.constraint=G1");
  s.initial = {1.0, 0.0, 0.5, -2.0};
  s.method = method;
  s.t_end = 5.0;
  s.sample_dt = 0.1;
  s.size = 4096;
  s.perturbation = 1e-3;
  s.rtol = s.atol = 1e-9;
  s.h = 1e-3;
  if (method != MethodId::verlet) s.given.insert("integrator.h");  // verlet: h from the fast frequency
  expect_same(kept_on(s, false), kept_on(s, true), static_cast<std::uint64_t>(s.size), 4, 1e-9,
              std::string("penalty pendulum + ") + method_name(method));
}

INSTANTIATE_TEST_SUITE_P(Methods, PenaltyCpuVsGpu,
                         ::testing::Values(MethodId::verlet, MethodId::rk4, MethodId::dopri5, MethodId::midpoint,
                                           MethodId::rodas5p),
                         [](const auto& info) { return std::string(method_name(info.param)); });

class StageProjectionCpuVsGpu : public NeedsGpu<::testing::Test> {};

TEST_F(StageProjectionCpuVsGpu, SameInstancesGiveTheSameResults) {
  Study s;
  s.formulation = FormulationId::extended;
  s.method = MethodId::midpoint;
  s.projection_scheme = "midpoint";
  s.position = s.momentum = true;
  s.projection_tol = 1e-13;
  s.tol = 1e-14;
  s.t_end = 10.0;
  s.h = 0.01;
  s.size = 4096;
  s.perturbation = 1e-3;
  expect_same(kept_on(s, false), kept_on(s, true), static_cast<std::uint64_t>(s.size), 4, 1e-9,
              "extended + midpoint with stage projection");
}

// output.wedge and output.lyapunov on the GPU: tangent systems (geometry/tangent_system.hpp) as
// plain states of 14 numbers; wedge_error and lyapunov are compared with the other metrics.
struct WedgeCase {
  const char* name;
  FormulationId formulation;
  MethodId method;
  bool projections;
  const char* scheme;
};
class WedgeCpuVsGpu : public NeedsGpu<::testing::TestWithParam<WedgeCase>> {};

TEST_P(WedgeCpuVsGpu, SameInstancesGiveTheSameResults) {
  const WedgeCase c = GetParam();
  Study s;
  s.formulation = c.formulation;
  s.method = c.method;
  s.position = s.momentum = c.projections;
  s.projection_scheme = c.scheme;
  s.projection_tol = 1e-12;
  s.tol = 1e-14;
  s.wedge = true;
  s.lyapunov = true;
  s.t_end = 10.0;
  s.h = 0.01;
  s.size = 4096;
  s.perturbation = 1e-3;
  expect_same(kept_on(s, false), kept_on(s, true), static_cast<std::uint64_t>(s.size), 4, 1e-9,
              std::string("wedge: ") + c.name);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, WedgeCpuVsGpu,
    ::testing::Values(
        WedgeCase{"extended_midpoint", FormulationId::extended, MethodId::midpoint, false, "endpoint"},
        WedgeCase{"extended_midpoint_endpoint_projection", FormulationId::extended, MethodId::midpoint, true, "endpoint"},
        WedgeCase{"extended_midpoint_stage_projection", FormulationId::extended, MethodId::midpoint, true, "midpoint"},
        WedgeCase{"dirac_rk4", FormulationId::dirac, MethodId::rk4, false, "endpoint"},
        WedgeCase{"constrained_rattle", FormulationId::constrained, MethodId::rattle, false, "endpoint"},
        WedgeCase{"constrained_rattle8", FormulationId::constrained, MethodId::rattle8, false, "endpoint"}),
    [](const auto& info) { return std::string(info.param.name); });

// The seven-atom chain of 002 §7, perturbed, with the numerical reference on: every chain
// formulation and method, per-thread tridiagonal solves on the GPU against the CPU.
class ChainCpuVsGpu : public CpuVsGpu {};

TEST_P(ChainCpuVsGpu, SameInstancesGiveTheSameResults) {
  const auto [formulation, method] = GetParam();
  Study s;
  s.model_kind = ModelKind::chain;
  set_key(s, "model.atoms=" + std::to_string(cuda_chain_sizes().front()));
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
  expect_same(kept_on(s, false), kept_on(s, true), static_cast<std::uint64_t>(s.size), 4 * model_key(s).atoms, 1e-9,
              std::string("chain ") + formulation_name(formulation) + " + " + method_name(method));
}

INSTANTIATE_TEST_SUITE_P(
    Formulations, ChainCpuVsGpu,
    ::testing::Values(
        std::make_tuple(FormulationId::dirac, MethodId::rk4), std::make_tuple(FormulationId::dirac, MethodId::dopri5),
        std::make_tuple(FormulationId::dirac, MethodId::midpoint), std::make_tuple(FormulationId::dirac, MethodId::gauss2),
        std::make_tuple(FormulationId::naive, MethodId::rk4), std::make_tuple(FormulationId::naive, MethodId::dopri5),
        std::make_tuple(FormulationId::impetus, MethodId::rk4),
        std::make_tuple(FormulationId::constrained, MethodId::rattle),
        std::make_tuple(FormulationId::constrained, MethodId::rattle4),
        // compiled on first use; one thread per instance (seven atoms: no thread groups)
        std::make_tuple(FormulationId::dirac, MethodId::rodas5p)),
    pair_name);

// Chains on thread groups (issue 20): every size the build runs on groups (16, 32, 64 by
// default) with Hamilton-Dirac + RK4 + the momentum projection, and every other formulation,
// method and projection setting on the smallest, without a reference, through `chens run`'s
// entry (run_study_cuda:
// the engine's group path, kernels/group_kernels.cuh) against the CPU backend: every
// instance's final state and metrics to a relative bound (nvcc's FMAs; tests/gpu/
// test_chain_group.cpp bounds the difference per RK4 step), lost flags exactly, the work
// exactly for fixed-step explicit methods (within a few counts where an iteration count or an
// accepted step size depends on the last bits), the recorded rows, and the statistics run to
// run bit for bit.
std::vector<int> group_chain_sizes() {
  std::vector<int> sizes;
  for (int n : chain_group_sizes()) {
    Study s;
    s.model_kind = ModelKind::chain;
    set_key(s, "model.atoms=" + std::to_string(n));
    if (cuda_unsupported_reason(s).empty()) sizes.push_back(n);
  }
  return sizes;
}

Study group_chain_study(int n) {
  Study s;
  s.model_kind = ModelKind::chain;
  set_key(s, "model.atoms=" + std::to_string(n));
  s.t_end = 2.0;
  s.h = 1.0 / 64;  // sample_dt a multiple of h (0.02 was refused by resolve on the first GPU run)
  s.sample_dt = 0.25;
  s.size = 1001;  // the last block has idle tiles
  s.perturbation = 1e-3;
  s.momentum = true;
  s.projection_tol = 1e-10;
  s.record = {0, 7, 1000};
  return s;
}

void expect_group_run_like_cpu(const Study& s, double bound, bool exact_work, const std::string& what) {
  const RunParams<double> rp = resolve(s);
  EnsembleSpec spec = ensemble_spec(s);
  spec.keep_instances = spec.size;
  const EnsembleResult cpu = run_study_cpu(s, rp, spec);
  const EnsembleResult gpu = run_study_cuda(s, rp, spec);
  const EnsembleResult again = run_study_cuda(s, rp, spec);
  expect_same(cpu.kept, gpu.kept, spec.size, 4 * model_key(s).atoms, bound, what);
  auto expect_work = [&](std::uint64_t c, std::uint64_t g, const char* counter) {
    const double slack = exact_work ? 0.0 : 1e-3 * static_cast<double>(c) + 2;
    EXPECT_NEAR(static_cast<double>(g), static_cast<double>(c), slack) << what << ", " << counter;
  };
  expect_work(cpu.totals.steps, gpu.totals.steps, "steps");
  expect_work(cpu.totals.rhs_evaluations, gpu.totals.rhs_evaluations, "rhs evaluations");
  expect_work(cpu.totals.iterations, gpu.totals.iterations, "iterations");
  expect_work(cpu.totals.rejected_steps, gpu.totals.rejected_steps, "rejected steps");
  expect_work(cpu.totals.position_projections, gpu.totals.position_projections, "position projections");
  EXPECT_NEAR(static_cast<double>(gpu.totals.momentum_projections), static_cast<double>(cpu.totals.momentum_projections),
              1e-3 * static_cast<double>(cpu.totals.momentum_projections) + 2)
      << what;
  for (int r = 0; r < lost_reason_count; ++r) EXPECT_EQ(gpu.lost[r], cpu.lost[r]) << what << ", lost reason " << r;
  ASSERT_EQ(gpu.series.size(), cpu.series.size()) << what;
  for (std::size_t k = 0; k < gpu.series.size(); ++k)
    for (int m = 0; m < metric_count; ++m) {
      EXPECT_EQ(gpu.series[k].metric[m].count, cpu.series[k].metric[m].count) << what << ", sample " << k;
      EXPECT_EQ(gpu.series[k].metric[m].mean, again.series[k].metric[m].mean) << what << ", sample " << k;
      EXPECT_EQ(gpu.series[k].metric[m].max, again.series[k].metric[m].max) << what << ", sample " << k;
    }
  ASSERT_EQ(gpu.recorded.instances, cpu.recorded.instances) << what;
  for (std::size_t k = 0; k < cpu.recorded.samples(); ++k)
    for (std::size_t r = 0; r < cpu.recorded.instances.size(); ++r) {
      const std::vector<double> a = cpu.recorded.row(k, r), b = gpu.recorded.row(k, r);
      ASSERT_EQ(a.size(), b.size()) << what;
      for (std::size_t c = 0; c < a.size(); ++c)
        EXPECT_NEAR(b[c], a[c], bound * (1 + std::abs(a[c]))) << what << ", recorded " << r << ", sample " << k;
    }
}

TEST(ChainGroupsOnTheGpu, TheEngineRunsEveryGroupSizeLikeTheCpu) {
  const CudaDeviceInfo dev = cuda_device_info();
  if (!dev.available) GTEST_SKIP() << "skipped: " << dev.description;
  ASSERT_FALSE(group_chain_sizes().empty());
  for (int n : group_chain_sizes())
    expect_group_run_like_cpu(group_chain_study(n), 1e-9, true, std::to_string(n) + "-atom chain on thread groups");
}

// Every other method, projection setting and formulation on groups (the general step kernel,
// group_advance_soa, where the lean loop does not apply), on the smallest group size: DOPRI5 (its error norm an ordered group
// sum), the implicit midpoint rule and Gauss2 (fixed-point iterations), RK4 with the position
// projection and projection.every = 2 (settings the lean loop does not take), the midpoint
// rule with the stage projection; naive and impetus-striction with RK4, the constrained
// equations with RATTLE. Implicit
// and adaptive runs may take a different iteration or step where nvcc's FMAs move the last
// bits across a tolerance: their bound is looser and their counts within a few.
TEST(ChainGroupsOnTheGpu, EveryMethodAndProjectionRunsOnGroupsLikeTheCpu) {
  const CudaDeviceInfo dev = cuda_device_info();
  if (!dev.available) GTEST_SKIP() << "skipped: " << dev.description;
  ASSERT_FALSE(group_chain_sizes().empty());
  const int n = group_chain_sizes().front();
  const std::string at = " on " + std::to_string(n) + "-atom chains";
  Study s = group_chain_study(n);
  s.method = MethodId::dopri5;
  s.rtol = s.atol = 1e-9;
  expect_group_run_like_cpu(s, 1e-7, false, "dopri5" + at);
  s = group_chain_study(n);
  s.method = MethodId::midpoint;
  expect_group_run_like_cpu(s, 1e-8, false, "midpoint" + at);
  s.method = MethodId::gauss2;
  expect_group_run_like_cpu(s, 1e-8, false, "gauss2" + at);
  s.method = MethodId::midpoint;
  s.position = true;
  s.projection_scheme = "midpoint";
  expect_group_run_like_cpu(s, 1e-8, false, "midpoint with stage projection" + at);
  s = group_chain_study(n);
  s.position = true;
  s.projection_every = 2;
  expect_group_run_like_cpu(s, 1e-9, false, "rk4 with position projection every 2 steps" + at);
  // The other formulations: the naive index reduction and impetus-striction with RK4, the
  // constrained equations with RATTLE (Newton on the group, momentum projection each step).
  s = group_chain_study(n);
  s.formulation = FormulationId::naive;
  expect_group_run_like_cpu(s, 1e-9, true, "naive + rk4" + at);
  s.formulation = FormulationId::impetus;
  s.momentum = false;
  expect_group_run_like_cpu(s, 1e-9, true, "impetus + rk4" + at);
  s = group_chain_study(n);
  s.formulation = FormulationId::constrained;
  s.method = MethodId::rattle;
  s.momentum = false;
  expect_group_run_like_cpu(s, 1e-8, false, "constrained + rattle" + at);
  s.method = MethodId::rattle4;
  expect_group_run_like_cpu(s, 1e-8, false, "constrained + rattle4" + at);
  // The numerical reference (group_reference_soa: a DOPRI5 run at rtol = atol = 1e-12 per
  // instance over the slices), with RK4 on the lean loop and with DOPRI5: the integration
  // error, and the reference's half of the recorded rows.
  s = group_chain_study(n);
  s.reference = "auto";
  expect_group_run_like_cpu(s, 1e-8, false, "rk4 with a numerical reference" + at);
  s.method = MethodId::dopri5;
  s.rtol = s.atol = 1e-9;
  expect_group_run_like_cpu(s, 1e-7, false, "dopri5 with a numerical reference" + at);
}

// Needs no device: every formulation, method, projection setting and the numerical reference
// is accepted on groups; a size the build lacks is refused naming the sizes it has, so that
// --backend auto picks the CPU for it.
TEST(ChainGroupsOnTheGpu, EverySettingRunsOnGroupsAndAMissingSizeIsRefused) {
  if (chain_group_sizes().empty()) GTEST_SKIP() << "skipped: this build has no chain size on thread groups";
  ASSERT_FALSE(group_chain_sizes().empty());  // the default settings run there
  for (int n : group_chain_sizes()) {
    // The studies of the device tests above resolve (checked here, where no device is needed:
    // the first GPU run found their sample_dt refused).
    EXPECT_NO_THROW(resolve(group_chain_study(n))) << n;
    Study s;
    s.model_kind = ModelKind::chain;
    set_key(s, "model.atoms=" + std::to_string(n));
    for (MethodId m : {MethodId::euler, MethodId::rk2, MethodId::dopri5, MethodId::midpoint, MethodId::gauss2}) {
      Study other = s;
      other.method = m;
      EXPECT_EQ(cuda_unsupported_reason(other), "") << method_name(m);
    }
    Study other = s;
    other.position = true;
    other.projection_every = 3;
    EXPECT_EQ(cuda_unsupported_reason(other), "");
    other = s;
    other.reference = "auto";
    EXPECT_EQ(cuda_unsupported_reason(other), "");
    for (FormulationId f : {FormulationId::naive, FormulationId::impetus}) {
      other = s;
      other.formulation = f;
      EXPECT_EQ(cuda_unsupported_reason(other), "") << formulation_name(f);
    }
    other = s;
    other.formulation = FormulationId::constrained;
    other.method = MethodId::rattle;
    EXPECT_EQ(cuda_unsupported_reason(other), "");
  }
  Study missing;
  missing.model_kind = ModelKind::chain;
  // A float chain of a size the build lacks: double chains of any size are compiled on first
  // use (docs/jit.md, JitOnTheGpu below), float chains keep the build's size.
  missing.precision = Precision::single_precision;
  set_key(missing, "model.atoms=10");
  const std::string why = cuda_unsupported_reason(missing);
  EXPECT_NE(why.find("model.atoms = "), std::string::npos) << why;
  EXPECT_NE(why.find(std::to_string(group_chain_sizes().front()) + ", "), std::string::npos) << why;
  EXPECT_NE(why.find(" on thread groups)"), std::string::npos) << why;
  if (jit_gpu_built()) EXPECT_NE(why.find("in double precision on first use"), std::string::npos) << why;
}

// Systems compiled on first use for the GPU (issue 42, docs/jit.md): nvcc with the CUDA
// units' own command, into the cache, loaded and run through the same engine interface.
using test::SystemsSetting;

// What the GPU compiles on first use, decided without a device: a chain of a size the build
// lacks (on thread groups where its size divides: 12 atoms on groups of 4 lanes), not its
// tangent system (the GPU's are the pendulums' units), nor a chain beyond the largest size.
TEST(JitOnTheGpu, TheGpuCompilesAChainOfASizeTheBuildLacks) {
  if (!jit_gpu_built()) GTEST_SKIP() << "skipped: this build has no CUDA units to compile like";
  Study s = group_chain_study(12);
  ASSERT_NO_THROW(resolve(s));
  EXPECT_FALSE(has_built_in_system<CudaBackend>(s));
  EXPECT_TRUE(compiles_on_first_use<CudaBackend>(s));
  EXPECT_TRUE(runs_compiled_on_first_use(s, BackendId::cuda)) << "what keeps --backend auto on the CPU";
  EXPECT_EQ(cuda_unsupported_reason(s), "");
  EXPECT_EQ(first_use_label(s, BackendId::cuda), "chain N = 12, dirac, rk4, cuda");
  EXPECT_NE(jit_object_path(jit_system(s, true)), jit_object_path(jit_system(s, false)));
  Study tangents = s;
  tangents.lyapunov = true;
  EXPECT_FALSE(has_system<CudaBackend>(tangents));
  EXPECT_NE(cuda_unsupported_reason(tangents).find("--backend cpu"), std::string::npos) << cuda_unsupported_reason(tangents);
  EXPECT_TRUE(has_system<CpuBackend>(tangents));
  Study pendulum;
  pendulum.formulation = FormulationId::dirac;
  EXPECT_FALSE(compiles_on_first_use<CudaBackend>(pendulum)) << "a unit of the build runs it";
  EXPECT_FALSE(runs_compiled_on_first_use(pendulum, BackendId::cuda));
  SystemsSetting jit("jit");
  EXPECT_TRUE(compiles_on_first_use<CudaBackend>(pendulum));
  EXPECT_EQ(first_use_label(pendulum, BackendId::cuda), "pendulum, dirac, rk4, cuda");
}

// Rodas5P on the GPU (issue 44), decided without a device: one thread per instance, compiled on
// first use (so --backend auto keeps it on the CPU until asked), for states of at most 32
// components; not the chains the GPU runs on thread groups, whose lanes each hold a slice of
// the state while Rodas5P's W couples all of it (refused naming the lanes), nor larger states
// (refused naming the bound: each thread's Jacobian, W and LU are in local memory).
TEST(JitOnTheGpu, Rodas5PRunsOneThreadPerInstanceAndNotOnThreadGroups) {
  if (!jit_gpu_built()) GTEST_SKIP() << "skipped: this build has no CUDA units to compile like";
  Study pendulum;
  pendulum.formulation = FormulationId::naive;
  pendulum.method = MethodId::rodas5p;
  Study penalty;
  penalty.model_kind = ModelKind::penalty_pendulum;
  penalty.formulation = FormulationId::penalty;
  penalty.method = MethodId::rodas5p;
  Study odd_chain;
  odd_chain.model_kind = ModelKind::chain;
  set_key(odd_chain, "model.atoms=7");
  odd_chain.method = MethodId::rodas5p;
  for (const Study* s : {&pendulum, &penalty, &odd_chain}) {
    ASSERT_NO_THROW(resolve(*s)) << model_name(*s);
    EXPECT_EQ(cuda_unsupported_reason(*s), "") << model_name(*s);
    EXPECT_FALSE(has_built_in_system<CudaBackend>(*s)) << "rodas5p is compiled on first use only";
    EXPECT_TRUE(compiles_on_first_use<CudaBackend>(*s)) << model_name(*s);
    EXPECT_TRUE(runs_compiled_on_first_use(*s, BackendId::cuda)) << "what keeps --backend auto on the CPU";
  }
  EXPECT_EQ(first_use_label(pendulum, BackendId::cuda), "pendulum, naive, rodas5p, cuda");
  Study grouped = odd_chain;
  set_key(grouped, "model.atoms=16");
  ASSERT_NO_THROW(resolve(grouped)) << "the CPU runs it";
  const std::string why = cuda_unsupported_reason(grouped);
  EXPECT_NE(why.find("integrator.method = \"rodas5p\""), std::string::npos) << why;
  EXPECT_NE(why.find("a chain of 16 atoms on thread groups of 8 lanes"), std::string::npos) << why;
  Study rk4 = grouped;
  rk4.method = MethodId::rk4;
  EXPECT_EQ(cuda_unsupported_reason(rk4), "") << "the refusal is Rodas5P's alone";
  Study large = odd_chain;
  set_key(large, "model.atoms=9");  // 36 components, one thread per instance
  ASSERT_NO_THROW(resolve(large)) << "the CPU runs it";
  const std::string too_large = cuda_unsupported_reason(large);
  EXPECT_NE(too_large.find("states of at most 32 components"), std::string::npos) << too_large;
  EXPECT_NE(too_large.find("this one has 36"), std::string::npos) << too_large;
  rk4 = large;
  rk4.method = MethodId::rk4;
  EXPECT_EQ(cuda_unsupported_reason(rk4), "") << "the refusal is Rodas5P's alone";
}

// A unit of the list compiled on first use by nvcc gives the built-in GPU unit's results bit
// for bit: the same template, command and device code.
TEST(JitOnTheGpu, ASystemOfTheListCompiledOnDemandEqualsTheBuiltInUnitBitForBit) {
  const CudaDeviceInfo dev = cuda_device_info();
  if (!dev.available) GTEST_SKIP() << "skipped: " << dev.description;
  const Study s = test::jit_pendulum_study(3000);
  const RunParams<double> rp = resolve(s);
  const EnsembleSpec spec = ensemble_spec(s);
  const EnsembleResult built_in = run_study_cuda(s, rp, spec);
  SystemsSetting jit("jit");
  ASSERT_TRUE(compiles_on_first_use<CudaBackend>(s));
  const EnsembleResult compiled = run_study_cuda(s, rp, spec);
  EXPECT_EQ(first_use_compile(s, BackendId::cuda), FirstUseCompile::cached);
  test::expect_bitwise_equal(built_in, compiled,
                             "pendulum dirac + rk4 + momentum projection on the GPU, compiled on demand");
  EXPECT_GT(compiled.totals.steps, 0u);
}

// A chain of 12 atoms, which the build lacks, compiled on first use for both backends: the
// GPU's (thread groups of 4 lanes) against the CPU's as every built size is compared above.
TEST(JitOnTheGpu, AChainOfASizeTheBuildLacksRunsOnGroupsLikeTheCpu) {
  const CudaDeviceInfo dev = cuda_device_info();
  if (!dev.available) GTEST_SKIP() << "skipped: " << dev.description;
  const Study s = group_chain_study(12);
  ASSERT_TRUE(compiles_on_first_use<CudaBackend>(s));
  expect_group_run_like_cpu(s, 1e-9, true, "12-atom chain compiled on first use, on thread groups");
  EXPECT_EQ(first_use_compile(s, BackendId::cuda), FirstUseCompile::cached);
}

// The run of the double pendulum's and the user models' comparisons: 1024 perturbed instances
// to t = 5, h = 0.005, with the numerical reference and the momentum projection where the
// formulation has it.
void set_run(Study& s, FormulationId formulation, MethodId method) {
  s.formulation = formulation;
  s.method = method;
  s.t_end = 5.0;
  s.h = 0.005;
  s.size = 1024;
  s.perturbation = 1e-4;
  s.momentum = formulation == FormulationId::dirac || formulation == FormulationId::naive;
  s.projection_tol = 1e-8;
  s.rtol = s.atol = 1e-9;
  s.reference = "auto";
}

// The planar double pendulum (docs/adding-a-model.md), unequal masses and lengths, with the
// numerical reference: the systems list's GPU units of a model added through the list alone.
class DoublePendulumCpuVsGpu : public CpuVsGpu {};

TEST_P(DoublePendulumCpuVsGpu, SameInstancesGiveTheSameResults) {
  const auto [formulation, method] = GetParam();
  Study s;
  s.model_kind = ModelKind::double_pendulum;
  s.masses = {1.3, 0.7};
  s.model_values["model.lengths"] = std::vector<double>{1.1, 0.8};  // its own key (double_pendulum.cpp)
  s.gravity = 9.81;
  set_run(s, formulation, method);
  expect_same(kept_on(s, false), kept_on(s, true), static_cast<std::uint64_t>(s.size), 8, 1e-9,
              std::string("double pendulum ") + formulation_name(formulation) + " + " + method_name(method));
}

INSTANTIATE_TEST_SUITE_P(Formulations, DoublePendulumCpuVsGpu,
                         ::testing::Values(std::make_tuple(FormulationId::dirac, MethodId::rk4),
                                           std::make_tuple(FormulationId::dirac, MethodId::dopri5),
                                           std::make_tuple(FormulationId::naive, MethodId::gauss2),
                                           std::make_tuple(FormulationId::impetus, MethodId::rk4),
                                           std::make_tuple(FormulationId::baumgarte, MethodId::rk4),
                                           std::make_tuple(FormulationId::constrained, MethodId::rattle),
                                           std::make_tuple(FormulationId::dirac, MethodId::rodas5p)),
                         pair_name);

// User models from V and phi (issue 19; docs/custom-models.md), with the numerical reference,
// every formulation a user model has and RATTLE, the two ways a user builds one: the planar
// pendulum built into this binary by chens_add_model for both backends (tests/CMakeLists.txt),
// the spherical pendulum, the triatomic molecule and the rigid tetrahedron (n = 12, m = 6) from
// their headers (`model.source`), each system compiled on first use for the CPU and the GPU
// alike: ahead of time, their units were a tenth of the release build's time in CI, where
// no test runs them (no device). scripts/gpu-run.sh compiles them before the tests
// (tests/gpu/first_use_*.toml).
class CustomModelCpuVsGpu : public NeedsGpu<::testing::TestWithParam<std::tuple<std::string, FormulationId, MethodId>>> {};

// The header a model of CustomModelCpuVsGpu is compiled from on first use; none for the one
// built in. By the source tree's path as configured, which scripts/gpu-run.sh's compiles name
// too (the cache's key holds the header's path).
std::string model_source(const std::string& model) {
  const std::string models = test::source_dir() + "/examples/custom_model/models/";
  if (model == "spherical-pendulum") return models + "spherical_pendulum.hpp";
  if (model == "triatomic") return models + "triatomic.hpp";
  if (model == "rigid-tetrahedron") return test::source_dir() + "/tests/support/rigid_tetrahedron.hpp";
  return {};
}

// The study of one of those models, from its header where it has one.
Study custom_model_study(const std::string& model) {
  const std::string source = model_source(model);
  const std::string text = "[model]\nkind = \"" + model + "\"\n" + (source.empty() ? "" : "source = \"" + source + "\"\n");
  return load_runs_text(text, "test", {}).at(0).study;
}

TEST_P(CustomModelCpuVsGpu, SameInstancesGiveTheSameResults) {
  const auto [model, formulation, method] = GetParam();
  Study s = custom_model_study(model);
  set_run(s, formulation, method);
  const int S = static_cast<int>(initial_state(s).size());
  expect_same(kept_on(s, false), kept_on(s, true), static_cast<std::uint64_t>(s.size), S, 1e-9,
              model + " " + formulation_name(formulation) + " + " + method_name(method));
}

INSTANTIATE_TEST_SUITE_P(
    Models, CustomModelCpuVsGpu,
    ::testing::Values(std::make_tuple("planar-pendulum", FormulationId::dirac, MethodId::rk4),
                      // Rodas5P's Jacobian by dual numbers over the model's own forward-mode V and phi
                      std::make_tuple("planar-pendulum", FormulationId::dirac, MethodId::rodas5p),
                      std::make_tuple("planar-pendulum", FormulationId::constrained, MethodId::rattle),
                      std::make_tuple("spherical-pendulum", FormulationId::dirac, MethodId::rk4),
                      std::make_tuple("spherical-pendulum", FormulationId::naive, MethodId::gauss2),
                      std::make_tuple("spherical-pendulum", FormulationId::constrained, MethodId::rattle),
                      std::make_tuple("triatomic", FormulationId::dirac, MethodId::dopri5),
                      std::make_tuple("triatomic", FormulationId::impetus, MethodId::rk4),
                      std::make_tuple("triatomic", FormulationId::baumgarte, MethodId::rk4),
                      std::make_tuple("triatomic", FormulationId::constrained, MethodId::rattle),
                      std::make_tuple("rigid-tetrahedron", FormulationId::dirac, MethodId::rk4),
                      std::make_tuple("rigid-tetrahedron", FormulationId::constrained, MethodId::rattle)),
    [](const auto& info) {
      std::string name = std::get<0>(info.param) + "_" + formulation_name(std::get<1>(info.param)) + "_" +
                         method_name(std::get<2>(info.param));
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

// Without a device (CI): the comparison's models from their headers load from the paths the test
// names, and their systems are compiled on first use on both backends, none built in, and are
// the GPU's to run: what CustomModelCpuVsGpu, skipped here, needs where a GPU is lent.
TEST(CustomModelSources, TheComparedModelsLoadFromTheirHeadersAndCompileOnFirstUse) {
  if (!jit_gpu_built()) GTEST_SKIP() << "skipped: this build has no CUDA units to compile like";
  for (const std::string model : {"spherical-pendulum", "triatomic", "rigid-tetrahedron"}) {
    const std::string source = model_source(model);
    ASSERT_FALSE(source.empty()) << model;
    Study s = custom_model_study(model);
    EXPECT_EQ(s.model_source, source) << model;
    set_run(s, FormulationId::constrained, MethodId::rattle);
    ASSERT_NO_THROW(resolve(s)) << model;
    EXPECT_EQ(cuda_unsupported_reason(s), "") << model;
    EXPECT_FALSE(has_built_in_system<CpuBackend>(s)) << model;
    EXPECT_FALSE(has_built_in_system<CudaBackend>(s)) << model;
    EXPECT_TRUE(compiles_on_first_use<CpuBackend>(s)) << model;
    EXPECT_TRUE(compiles_on_first_use<CudaBackend>(s)) << model;
    const std::string file = source.substr(source.rfind('/') + 1);
    EXPECT_EQ(first_use_label(s, BackendId::cuda), model + " (" + file + "), constrained, rattle, cuda");
  }
  EXPECT_EQ(model_source("planar-pendulum"), "") << "built in by chens_add_model (tests/CMakeLists.txt)";
}

}  // namespace
}  // namespace chens

namespace chens {
namespace {

// The GPU ensemble backend (device reductions) against the CPU backend: the same
// statistics up to the per-instance FMA differences, the same live counts, lost
// instances and work, and bitwise the same statistics from one GPU run to the next.
class EnsembleCpuVsGpu : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const CudaDeviceInfo dev = cuda_device_info();
    if (!dev.available) GTEST_SKIP() << "skipped: " << dev.description;
  }
};

Study ensemble_study(const std::string& model) {
  Study s;
  s.formulation = FormulationId::dirac;
  s.method = MethodId::rk4;
  s.h = 0.05;
  s.t_end = 10.0;
  s.sample_dt = 0.5;
  s.perturbation = 1e-3;
  s.momentum = true;
  s.projection_tol = 1e-8;
  s.size = 3000;  // not a multiple of the block size
  if (model == "chain") {
    s.model_kind = ModelKind::chain;
    set_key(s, "model.atoms=" + std::to_string(cuda_chain_sizes().front()));
    s.reference = "auto";
    s.size = 700;
  }
  return s;
}

EnsembleSpec spec_of(const Study& s) {
  EnsembleSpec e = ensemble_spec(s);
  e.record = {0, 5, 63, 64, 699};  // instance 0, inside and at the edges of statistics blocks, the last
  e.keep_instances = 130;
  return e;
}

TEST_P(EnsembleCpuVsGpu, StatisticsAgreeAndAreReproducible) {
  const Study s = ensemble_study(GetParam());
  const RunParams<double> rp = resolve(s);
  const EnsembleResult cpu = run_study_cpu(s, rp, spec_of(s));
  const EnsembleResult gpu = run_study_cuda(s, rp, spec_of(s));
  const EnsembleResult again = run_study_cuda(s, rp, spec_of(s));
  ASSERT_EQ(cpu.series.size(), gpu.series.size());
  EXPECT_EQ(gpu.backend, "cuda");
  EXPECT_EQ(cpu.lost_total(), 0u);
  EXPECT_EQ(gpu.lost_total(), 0u);
  EXPECT_EQ(cpu.totals.steps, gpu.totals.steps);
  EXPECT_EQ(cpu.totals.rhs_evaluations, gpu.totals.rhs_evaluations);
  EXPECT_NEAR(static_cast<double>(gpu.totals.momentum_projections), static_cast<double>(cpu.totals.momentum_projections),
              1e-3 * static_cast<double>(cpu.totals.momentum_projections) + 2);
  double worst = 0, worst_abs = 0;
  for (std::size_t k = 0; k < cpu.series.size(); ++k)
    for (int m = 0; m < metric_count; ++m) {
      if (!cpu.metric_reported(m)) continue;
      const Accumulator &a = cpu.series[k].metric[m], &b = gpu.series[k].metric[m], &c = again.series[k].metric[m];
      ASSERT_EQ(a.count, b.count) << "sample " << k << ", metric " << metric_name(m);
      // Run to run on the GPU: bitwise (no floating-point atomics).
      EXPECT_EQ(b.mean, c.mean);
      EXPECT_EQ(b.max, c.max);
      EXPECT_EQ(b.rms(), c.rms());
      for (int q = 0; q < quantile_count; ++q) {
        const double qa = cpu.series[k].quantile[m][q], qb = gpu.series[k].quantile[m][q];
        EXPECT_EQ(qb, again.series[k].quantile[m][q]) << "sample " << k << ", " << metric_name(m) << " " << quantile_name[q];
        // The same histogram bin on both backends, or the neighbouring one where an FMA
        // moved a value across an edge: within two bins, ratio 2^(1/4) (or both at rounding level).
        if (std::abs(qa - qb) > 1e-13)
          EXPECT_LE(std::max(qa, qb), LogBins::step(2) * std::min(qa, qb) * (1 + 1e-12))
              << "sample " << k << ", " << metric_name(m) << " " << quantile_name[q];
      }
      for (const auto& [x, y] : {std::pair{a.mean, b.mean}, std::pair{a.rms(), b.rms()}, std::pair{a.max, b.max}}) {
        worst_abs = std::max(worst_abs, std::abs(x - y));
        if (std::abs(x - y) <= 1e-13) continue;  // rounding-level quantities (psi ~ 1e-16)
        worst = std::max(worst, std::abs(x - y) / std::max(std::abs(x), std::abs(y)));
      }
    }
  EXPECT_LT(worst, 1e-9) << GetParam();
  std::printf("[ compare  ] ensemble %s: statistics differ by at most %.3g (absolute), %.3g relative where above 1e-13\n",
              GetParam().c_str(), worst_abs, worst);
  // The recorded trajectories, from the device snapshots, at every sample.
  ASSERT_EQ(gpu.recorded.instances, cpu.recorded.instances);
  ASSERT_EQ(gpu.recorded.samples(), cpu.recorded.samples());
  for (std::size_t k = 0; k < cpu.recorded.samples(); ++k)
    for (std::size_t r = 0; r < cpu.recorded.instances.size(); ++r) {
      const std::vector<double> a = cpu.recorded.row(k, r), b = gpu.recorded.row(k, r);
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t c = 0; c < a.size(); ++c)
        EXPECT_NEAR(b[c], a[c], 1e-9 * (1 + std::abs(a[c]))) << "instance " << cpu.recorded.instances[r] << ", sample " << k;
      for (int m = 0; m < metric_count; ++m)
        if (cpu.metric_reported(m)) {
          const double x = cpu.recorded.metrics[(k * cpu.recorded.instances.size() + r) * metric_count + m];
          const double y = gpu.recorded.metrics[(k * cpu.recorded.instances.size() + r) * metric_count + m];
          EXPECT_NEAR(y, x, 1e-9 * (1 + std::abs(x)) + 1e-13) << metric_name(m) << ", sample " << k;
        }
    }
  // A recorded instance's metrics are the ones the statistics saw: at the last sample, bitwise
  // its kept metrics (the device's own measurement, not a second one on the host).
  for (const EnsembleResult* r : {&cpu, &gpu}) {
    const std::size_t R = r->recorded.instances.size(), K = r->recorded.samples();
    for (std::size_t q = 0; q < R; ++q) {
      const std::uint64_t i = r->recorded.instances[q];
      if (i >= r->kept.lost.size()) continue;
      for (int m = 0; m < metric_count; ++m)
        EXPECT_EQ(r->recorded.metrics[((K - 1) * R + q) * metric_count + m], r->kept.metrics[i * metric_count + m])
            << r->backend << ": instance " << i << ", " << metric_name(m);
    }
  }
  // The kept instances' initial states: the same perturbed data on both backends, bit for bit
  // but for FMA contractions in the projection onto the manifold.
  ASSERT_EQ(gpu.kept.initial_state.size(), cpu.kept.initial_state.size());
  for (std::size_t c = 0; c < cpu.kept.initial_state.size(); ++c) {
    EXPECT_NEAR(gpu.kept.initial_state[c], cpu.kept.initial_state[c], 1e-14 * (1 + std::abs(cpu.kept.initial_state[c])));
    EXPECT_NEAR(gpu.kept.initial_physical[c], cpu.kept.initial_physical[c],
                1e-14 * (1 + std::abs(cpu.kept.initial_physical[c])));
  }
}

INSTANTIATE_TEST_SUITE_P(Models, EnsembleCpuVsGpu, ::testing::Values(std::string("pendulum"), std::string("chain")),
                         [](const auto& info) { return info.param; });

// Float runs (integrator.precision = "float"): the same kernels with Real = float. The
// backends differ by float rounding of fused multiply-adds (1.2e-7 per operation) growing
// over the 200 steps; the GPU is bitwise reproducible from run to run.
TEST_P(EnsembleCpuVsGpu, FloatRunsAgreeToFloatRounding) {
  Study s = ensemble_study(GetParam());
  s.precision = Precision::single_precision;
  s.projection_tol = 1e-5;
  if (GetParam() == "chain") s.reference = "none";
  const RunParams<double> rp = resolve(s);
  EnsembleSpec spec = ensemble_spec(s);
  spec.keep_instances = spec.size;
  const EnsembleResult cpu = run_study_cpu(s, rp, spec), gpu = run_study_cuda(s, rp, spec),
                       again = run_study_cuda(s, rp, spec);
  EXPECT_EQ(cpu.lost_total(), 0u);
  EXPECT_EQ(gpu.lost_total(), 0u);
  EXPECT_EQ(gpu.kept.final_state, again.kept.final_state);
  double worst = 0;
  for (std::size_t i = 0; i < cpu.kept.final_state.size(); ++i)
    worst = std::max(worst,
                     std::abs(cpu.kept.final_state[i] - gpu.kept.final_state[i]) / (1 + std::abs(cpu.kept.final_state[i])));
  EXPECT_LT(worst, 1e-4) << GetParam();
  for (std::size_t k = 0; k < cpu.series.size(); ++k)
    for (int m = 0; m < metric_count; ++m) {
      EXPECT_EQ(gpu.series[k].metric[m].mean, again.series[k].metric[m].mean);
      EXPECT_EQ(cpu.series[k].metric[m].count, gpu.series[k].metric[m].count);
    }
  std::printf("[ compare  ] float ensemble %s: final states differ by at most %.3g (relative)\n", GetParam().c_str(), worst);
}

// Lost-instance isolation on the device (ensemble.lost_residual): the naive equations'
// |phi| grows like t^2 (002 §6), and with energies spread by a 0.3 perturbation the
// instances pass the bound at different samples. The device's lost words must name the same
// instances, reasons and first examples as the CPU, and the statistics count the same live
// instances at every sample.
TEST(EnsembleCpuVsGpuLost, TheSameInstancesAreLostForTheSameReason) {
  const CudaDeviceInfo dev = cuda_device_info();
  if (!dev.available) GTEST_SKIP() << "skipped: " << dev.description;
  Study s = test::diverging_ensemble();
  s.size = 3000;
  const RunParams<double> rp = resolve(s);
  EnsembleSpec spec = ensemble_spec(s);
  spec.keep_instances = spec.size;
  const EnsembleResult cpu = run_study_cpu(s, rp, spec), gpu = run_study_cuda(s, rp, spec);
  ASSERT_GT(cpu.lost_total(), 100u) << "seed " << s.seed;  // a mixed ensemble, or the test tests nothing
  ASSERT_LT(cpu.lost_total(), 2900u) << "seed " << s.seed;
  for (int q = 0; q < lost_reason_count; ++q) EXPECT_EQ(gpu.lost[q], cpu.lost[q]) << lost_reason_name(q);
  std::uint64_t differ = 0;
  for (std::uint64_t i = 0; i < spec.size; ++i) differ += cpu.kept.lost[i] != gpu.kept.lost[i];
  EXPECT_EQ(differ, 0u);
  EXPECT_EQ(gpu.lost_examples, cpu.lost_examples);
  EXPECT_EQ(gpu.lost_example_reasons, cpu.lost_example_reasons);
  for (std::size_t k = 0; k < cpu.series.size(); ++k)
    EXPECT_EQ(gpu.series[k].metric[int(MetricId::phi)].count, cpu.series[k].metric[int(MetricId::phi)].count)
        << "sample " << k;
  std::printf("[ compare  ] lost instances: %llu of %llu on both backends, %llu differ\n",
              static_cast<unsigned long long>(cpu.lost_total()), static_cast<unsigned long long>(spec.size),
              static_cast<unsigned long long>(differ));
}

// A shard of the ensemble (one MPI rank's part, host/mpi/mpi_runtime.cpp) on the device:
// instances keep their global indices, so the shard's instances are bitwise those of the
// whole run on the same device, and equal the CPU's to FMA rounding.
TEST_P(EnsembleCpuVsGpu, AShardIntegratesTheWholeRunsInstances) {
  const Study s = ensemble_study(GetParam());
  const RunParams<double> rp = resolve(s);
  EnsembleSpec whole = ensemble_spec(s);
  whole.keep_instances = whole.size;
  EnsembleSpec shard = whole;
  shard.first_instance = 5 * cpu_block_size;
  shard.size = GetParam() == "chain" ? 200 : 1000;
  shard.total_instances = whole.size;
  shard.keep_instances = shard.size;
  shard.record = {shard.first_instance + 1};
  const EnsembleResult all = run_study_cuda(s, rp, whole), part = run_study_cuda(s, rp, shard);
  const EnsembleResult cpu_part = run_study_cpu(s, rp, shard);
  const int S = static_cast<int>(all.kept.final_state.size() / whole.size);
  ASSERT_EQ(part.kept.final_state.size(), shard.size * S);
  for (std::uint64_t j = 0; j < shard.size; ++j)
    for (int c = 0; c < S; ++c) {
      const double a = all.kept.final_state[(shard.first_instance + j) * S + c], b = part.kept.final_state[j * S + c];
      ASSERT_EQ(a, b) << "shard instance " << j << " (global " << shard.first_instance + j << "), component " << c;
      ASSERT_NEAR(cpu_part.kept.final_state[j * S + c], b, 1e-9 * (1 + std::abs(b)))
          << "instance " << shard.first_instance + j;
    }
  ASSERT_EQ(part.recorded.instances, shard.record);
  ASSERT_EQ(part.recorded.samples(), cpu_part.recorded.samples());
  for (std::size_t k = 0; k < part.recorded.samples(); ++k) {
    const std::vector<double> a = cpu_part.recorded.row(k, 0), b = part.recorded.row(k, 0);
    for (std::size_t c = 0; c < a.size(); ++c) EXPECT_NEAR(b[c], a[c], 1e-9 * (1 + std::abs(a[c]))) << "sample " << k;
  }
  for (std::size_t k = 0; k < cpu_part.series.size(); ++k)
    EXPECT_EQ(part.series[k].metric[int(MetricId::phi)].count, shard.size) << "sample " << k;
}

// ensemble.only on the device: the CPU's test body (tests/support/only_instances.hpp).
TEST(EnsembleCpuVsGpuLost, OnlyRunsTheListedInstancesAsTheWholeEnsembleDoes) {
  const CudaDeviceInfo dev = cuda_device_info();
  if (!dev.available) GTEST_SKIP() << "skipped: " << dev.description;
  test::check_only_matches_whole(run_study_cuda, "cuda");
}

// Checkpoint and resume on the device: the CPU's test body (tests/support/checkpoint_resume.hpp)
// with the CUDA backend; the checkpoint holds the device's structure of arrays.
class CheckpointGpu : public ::testing::TestWithParam<std::size_t> {
 protected:
  void SetUp() override {
    const CudaDeviceInfo dev = cuda_device_info();
    if (!dev.available) GTEST_SKIP() << "skipped: " << dev.description;
  }
};

// The CPU's resume studies as the GPU runs them (test::on_the_gpu).
TEST_P(CheckpointGpu, AResumedRunEndsBitwiseWhereTheUninterruptedOneEnds) {
  const auto [name, with_levels] = test::resume_studies()[GetParam()];
  const Study study = test::on_the_gpu(with_levels);
  const std::int64_t K = resolve(study).samples + 1;
  test::check_resume_is_bitwise(run_study_cuda, study, {2, K / 2, K - 1 - segment_rows(K - 1, std::int64_t(1) << 40)}, name);
}

// Issue 17 on the GPU: passes (the lean step kernel up to a step index, then
// advance_partial) and stops inside sample intervals change nothing.
TEST_P(CheckpointGpu, StopPointsInsideSampleIntervalsChangeNothing) {
  const auto [name, with_levels] = test::resume_studies()[GetParam()];
  const Study study = test::on_the_gpu(with_levels);
  test::check_stop_points_are_bitwise(run_study_cuda, study, 4, 7, {3, 9, 10}, name);
}

INSTANTIATE_TEST_SUITE_P(Studies, CheckpointGpu, ::testing::Range<std::size_t>(0, test::resume_studies().size()),
                         [](const auto& p) { return test::resume_studies()[p.param].first; });

TEST_P(EnsembleCpuVsGpu, EnsemblesBeyondDeviceMemoryAreRefusedBeforeLaunch) {
  Study s = ensemble_study(GetParam());
  s.size = std::int64_t(1) << 36;
  const RunParams<double> rp = resolve(s);
  EXPECT_THROW(run_study_cuda(s, rp, spec_of(s)), DeviceMemoryError);
}

TEST_P(EnsembleCpuVsGpu, ValidateAgreesOnTheStudy) {
  const Study s = ensemble_study(GetParam());
  std::vector<std::string> args = {"chens", "validate", "--set", "ensemble.size=500", "--set", "integrator.t_end=5"};
  if (GetParam() == "chain") {
    args.insert(args.end(), {"--set", "model.kind=chain", "--set", "output.reference=auto"});
  }
  std::ostringstream out, err;
  const int code = cli_main(args, out, err);
  EXPECT_EQ(code, exit_ok) << out.str() << err.str();
  std::printf("%s", out.str().c_str());
}

}  // namespace
}  // namespace chens
