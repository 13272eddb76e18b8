// Ensemble throughput of the GPU backend against the CPU backend on the same machine
// (docs/performance.md, "GPU ensemble backend"): both run the ensembles `chens run` runs,
// with the same per-instance code, statistics (accumulators and quantile histograms) at
// 11 sample times; per-instance results never leave the device. Numbers are
// instance-steps per second (accepted steps of all instances / wall time of the whole
// run_study_* call: allocation, initial data, integration, reductions, transfers) and the
// FP64 operations per second they mean (flops per step from bench/flop_counts.hpp).
//
//   BM_GpuPendulum/n, BM_CpuPendulum/n  pendulum, Hamilton-Dirac + RK4 + momentum
//       projection (tolerance 1e-6), h = 0.01, t in [0, 10] (1000 steps), closed-form
//       reference at each sample, n instances perturbed by 1e-3
//   BM_GpuChain7/n, BM_CpuChain7/n      seven-atom chain of 002 §7, Hamilton-Dirac + RK4,
//       h = 0.01, t in [0, 10], momentum projection at 1e-8, no reference
//   BM_GpuChainOnGroups<N>/n, BM_CpuChainOnGroups<N>/n  chains of N = 16, 32, 64 atoms, the
//       GPU on thread groups (issue 20; the engine's group path), Hamilton-Dirac + RK4,
//       h = 0.01, t in [0, 1] (100 steps, samples at 0 and 1), momentum projection at 1e-8,
//       no reference; skipped where the build has no group path for N
//   BM_GpuChainOnGroupsGeneral<N>/n  the same through the group path's general step kernel
//       (the lean loop off, EnsembleSpec::gpu_lean)
//   BM_GpuPendulumGeneralModel/n  BM_GpuPendulum with the unit model off (EnsembleSpec::gpu_unit)
//   BM_{Gpu,Cpu}PendulumNoReference/n, BM_{Gpu,Cpu}PlanarPendulumAd/n  the hand-written pendulum
//                                 (general model) and the same pendulum as a user model from V
//                                 and phi (docs/custom-models.md), both without a reference
//   BM_GpuPendulumFloat/n, BM_CpuPendulumFloat/n  BM_*Pendulum with integrator.precision =
//       "float" (projection tolerance 1e-5; diagnostics and reference in double)
//
// fp64_flops_per_s = (steps x flops of one instance-step (RK4 step, finiteness check and
// |psi| check) + fired projections x flops of one projection) / time, with the counts of
// bench/flop_counts.hpp (191 and 9 for the pendulum, 3979 and 141 for the chain; tested in
// tests/test_flop_counts.cpp; chain_dirac_rk4_lean_step(N) for chains on groups, whose fired
// projections are not counted); per-sample diagnostics and reductions are not counted.
// first_result_s is the time from the call to the end of the first segment (the first
// sample times' statistics on the host): the time to first result of a study.
// kernel_instance_steps_per_s (GPU) is the rate of the integration kernels alone
// (EnsembleResult::device_seconds): what the statistics, transfers and set-up around them
// cost is instance_steps_per_s against it.
// Skipped with the reason where no CUDA device is usable.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "backends/cuda_backend.hpp"
#include "flop_counts.hpp"
#include "dispatch/run_study.hpp"
#include "study/study.hpp"

namespace {

using namespace chens;

Study pendulum_study(std::int64_t n) {
  Study s;
  s.formulation = FormulationId::dirac;
  s.method = MethodId::rk4;
  s.h = 0.01;
  s.t_end = 10.0;
  s.sample_dt = 1.0;
  s.size = n;
  s.perturbation = 1e-3;
  s.momentum = true;
  s.projection_tol = 1e-6;
  return s;
}

Study chain_study(std::int64_t n) {
  Study s = pendulum_study(n);
  s.model_kind = ModelKind::chain;
  set_key(s, "model.atoms=" + std::to_string(cuda_chain_sizes().front()));
  s.projection_tol = 1e-8;
  s.reference = "none";
  return s;
}

template <class Run>
void measure(benchmark::State& state, const Study& s, Run run, bool gpu, const bench::FlopCount& per_step,
             const bench::FlopCount& per_projection, bool unit_model = true, bool lean = true) {
  if (gpu && !cuda_device_info().available) {
    state.SkipWithError(cuda_device_info().description.c_str());
    return;
  }
  if (const std::string why = gpu ? cuda_unsupported_reason(s) : std::string(); !why.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  const RunParams<double> rp = resolve(s);
  EnsembleSpec spec = ensemble_spec(s);
  spec.gpu_unit = unit_model;
  spec.gpu_lean = lean;
  EnsembleSpec warm = spec;
  warm.size = std::min<std::uint64_t>(spec.size, 256);
  // Warm-up outside the timing: CUDA context creation and module loading, or the OpenMP
  // thread pool.
  run(s, rp, warm);
  std::uint64_t steps = 0, projections = 0;
  double first = 0, device = 0, setup = 0, finish = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    bool seen = false;
    spec.progress = [&](std::int64_t, std::int64_t) {
      if (!seen) first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      seen = true;
    };
    const EnsembleResult r = run(s, rp, spec);
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    steps = r.totals.steps;
    projections = r.totals.momentum_projections;
    device = r.device_seconds;
    setup = r.setup_seconds;
    finish = r.finish_seconds;
    benchmark::DoNotOptimize(r.series.data());
  }
  state.counters["instance_steps_per_s"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsIterationInvariantRate);
  state.counters[s.precision == Precision::single_precision ? "fp32_flops_per_s" : "fp64_flops_per_s"] = benchmark::Counter(
      static_cast<double>(steps) * per_step.total() + static_cast<double>(projections) * per_projection.total(),
      benchmark::Counter::kIsIterationInvariantRate);
  state.counters["projections_per_step"] = steps ? static_cast<double>(projections) / static_cast<double>(steps) : 0.0;
  state.counters["first_result_s"] = first;
  // GPU: the integration kernels alone (EnsembleResult::device_seconds, last iteration).
  if (gpu && device > 0) {
    state.counters["kernel_instance_steps_per_s"] = static_cast<double>(steps) / device;
    state.counters["setup_s"] = setup;    // allocation and initial data
    state.counters["finish_s"] = finish;  // counter sums, kept instances (device frees follow)
  }
}

using bench::chain7_dirac_rk4_instance_step;
using bench::chain7_momentum_projection;
using bench::pendulum_dirac_rk4_instance_step;
using bench::pendulum_momentum_projection;

void BM_GpuPendulum(benchmark::State& st) {
  measure(st, pendulum_study(st.range(0)), run_study_cuda, true, pendulum_dirac_rk4_instance_step,
          pendulum_momentum_projection);
}
void BM_CpuPendulum(benchmark::State& st) {
  measure(st, pendulum_study(st.range(0)), run_study_cpu, false, pendulum_dirac_rk4_instance_step,
          pendulum_momentum_projection);
}
// The same with the unit model switched off (EnsembleSpec::gpu_unit): the lean kernel with
// run-time m, l, g, whose results are the unit model's bit for bit.
void BM_GpuPendulumGeneralModel(benchmark::State& st) {
  measure(st, pendulum_study(st.range(0)), run_study_cuda, true, pendulum_dirac_rk4_instance_step,
          pendulum_momentum_projection, false);
}
Study float_pendulum_study(std::int64_t n) {
  Study s = pendulum_study(n);
  s.precision = Precision::single_precision;
  s.projection_tol = 1e-5;
  return s;
}
void BM_GpuPendulumFloat(benchmark::State& st) {
  measure(st, float_pendulum_study(st.range(0)), run_study_cuda, true, pendulum_dirac_rk4_instance_step,
          pendulum_momentum_projection);
}
void BM_CpuPendulumFloat(benchmark::State& st) {
  measure(st, float_pendulum_study(st.range(0)), run_study_cpu, false, pendulum_dirac_rk4_instance_step,
          pendulum_momentum_projection);
}
// The planar pendulum written as a user model from V and phi (issue 19; docs/custom-models.md,
// registered in this binary by chens_add_model) against the hand-written pendulum, both
// without a reference (the user model's would be a numerical DOPRI5 run, the pendulum's the
// closed form): what the automatic differentiation and the dense solves cost.
Study no_reference(Study s) {
  s.reference = "none";
  return s;
}
Study ad_pendulum_study(std::int64_t n) {
  Study s = no_reference(pendulum_study(n));
  s.model_kind = ModelKind::custom;
  s.custom_model = "planar-pendulum";
  s.parameters = {1.0, 1.0, 1.0};  // mass, length, gravity: the pendulum's defaults
  s.initial = {1.0, 0.0, 0.0, -2.0};
  return s;
}
void BM_GpuPendulumNoReference(benchmark::State& st) {
  measure(st, no_reference(pendulum_study(st.range(0))), run_study_cuda, true, pendulum_dirac_rk4_instance_step,
          pendulum_momentum_projection, false);
}
void BM_GpuPlanarPendulumAd(benchmark::State& st) {
  measure(st, ad_pendulum_study(st.range(0)), run_study_cuda, true, pendulum_dirac_rk4_instance_step,
          pendulum_momentum_projection);
}
void BM_CpuPendulumNoReference(benchmark::State& st) {
  measure(st, no_reference(pendulum_study(st.range(0))), run_study_cpu, false, pendulum_dirac_rk4_instance_step,
          pendulum_momentum_projection);
}
void BM_CpuPlanarPendulumAd(benchmark::State& st) {
  measure(st, ad_pendulum_study(st.range(0)), run_study_cpu, false, pendulum_dirac_rk4_instance_step,
          pendulum_momentum_projection);
}
void BM_GpuChain7(benchmark::State& st) {
  measure(st, chain_study(st.range(0)), run_study_cuda, true, chain7_dirac_rk4_instance_step, chain7_momentum_projection);
}
void BM_CpuChain7(benchmark::State& st) {
  measure(st, chain_study(st.range(0)), run_study_cpu, false, chain7_dirac_rk4_instance_step, chain7_momentum_projection);
}
// Chains on thread groups (issue 20): the setting, through the same call on both backends.
Study chain_group_study(int atoms, std::int64_t n) {
  Study s = chain_study(n);
  set_key(s, "model.atoms=" + std::to_string(atoms));
  s.t_end = 1.0;
  return s;
}
template <int N>
void BM_GpuChainOnGroups(benchmark::State& st) {
  measure(st, chain_group_study(N, st.range(0)), run_study_cuda, true, bench::chain_dirac_rk4_lean_step(N),
          bench::FlopCount{});
}
template <int N>
void BM_CpuChainOnGroups(benchmark::State& st) {
  measure(st, chain_group_study(N, st.range(0)), run_study_cpu, false, bench::chain_dirac_rk4_lean_step(N),
          bench::FlopCount{});
}
// The same RK4 run by the group path's general step kernel (group_advance: instance.hpp's
// driver over the slices, which DOPRI5, the implicit methods and the position projection
// take) with the lean loop switched off (EnsembleSpec::gpu_lean): what the general path costs.
template <int N>
void BM_GpuChainOnGroupsGeneral(benchmark::State& st) {
  measure(st, chain_group_study(N, st.range(0)), run_study_cuda, true, bench::chain_dirac_rk4_lean_step(N),
          bench::FlopCount{}, true, false);
}

BENCHMARK(BM_GpuPendulum)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Arg(1000000)
    ->Arg(10000000)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GpuPendulumGeneralModel)->Arg(10000000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuPendulum)->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GpuChain7)->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuChain7)->Arg(1000)->Arg(10000)->Arg(100000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_GpuChainOnGroups, 16)
    ->Arg(10000)
    ->Arg(100000)
    ->Arg(1000000)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_GpuChainOnGroups, 32)
    ->Arg(10000)
    ->Arg(100000)
    ->Arg(1000000)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_GpuChainOnGroups, 64)
    ->Arg(10000)
    ->Arg(100000)
    ->Arg(1000000)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_GpuChainOnGroupsGeneral, 16)->Arg(100000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_GpuChainOnGroupsGeneral, 64)->Arg(100000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_CpuChainOnGroups, 16)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_CpuChainOnGroups, 32)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_CpuChainOnGroups, 64)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GpuPendulumNoReference)->Arg(1000000)->Arg(10000000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GpuPlanarPendulumAd)->Arg(1000000)->Arg(10000000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuPendulumNoReference)->Arg(100000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuPlanarPendulumAd)->Arg(100000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GpuPendulumFloat)->Arg(1000000)->Arg(10000000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuPendulumFloat)->Arg(100000)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
