// GPU throughput of the per-instance kernel (kernels/instance_kernel.cuh: one thread per
// instance running run_instance_to_end) against its CPU twin on the same machine
// (docs/performance.md, "GPU"). Both integrate the same instances with the same code; the
// numbers are instance-steps per second (accepted steps of all instances / wall time,
// including the device transfers of the final states and the host allocation).
//
//   BM_GpuPendulum/n       pendulum, Hamilton-Dirac + RK4, h = 0.01, t in [0, 10] (1000 steps),
//                          closed-form reference at the end, n instances perturbed by 1e-3
//   BM_CpuPendulum/n       the same on the CPU twin (OpenMP over all cores)
//   BM_GpuChain7/n         seven-atom chain of 002 §7, Hamilton-Dirac + RK4, h = 0.01,
//                          t in [0, 10], no reference, momentum projection at 1e-8
//   BM_CpuChain7/n         the same on the CPU twin
//
//   BM_GpuEnsemblePendulum/n, BM_GpuEnsembleChain7/n, BM_CpuEnsemblePendulum/n,
//   BM_CpuEnsembleChain7/n: the same problems through the ensemble backends that
//                          `chens run` uses (statistics at 11 sample times reduced on the
//                          device, resp. the CPU backend with its SSE2 lanes), per-instance
//                          results never leave the device
//
// Skipped with the reason where no CUDA device is usable.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "backends/cuda_backend.hpp"
#include "backends/per_instance.hpp"
#include "dispatch/run_study.hpp"
#include "chain_kernels.hpp"
#include "pendulum_kernels.hpp"
#include "study/study.hpp"

namespace {

using namespace chens;

Study pendulum_study(std::int64_t n) {
  Study s;
  s.formulation = FormulationId::dirac;
  s.method = MethodId::rk4;
  s.h = 0.01;
  s.t_end = 10.0;
  s.size = n;
  s.perturbation = 1e-3;
  return s;
}

Study chain_study(std::int64_t n) {
  Study s = pendulum_study(n);
  s.model_kind = "chain";
  s.atoms = cuda_chain_atoms;
  s.momentum = true;
  s.projection_tol = 1e-8;
  s.reference = "none";
  return s;
}

template <class Run>
void measure(benchmark::State& state, const Study& s, Run run, bool gpu) {
  if (gpu && !cuda_device_info().available) {
    state.SkipWithError(cuda_device_info().description.c_str());
    return;
  }
  const RunParams<double> rp = resolve(s);
  const std::uint64_t n = static_cast<std::uint64_t>(s.size);
  // Warm-up outside the timing: CUDA context creation (~0.1 s) and module loading, or the
  // OpenMP thread pool.
  run(s, rp, std::min<std::uint64_t>(n, 256));
  std::uint64_t steps = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const PerInstanceResult r = run(s, rp, n);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(dt);
    steps = 0;
    for (const auto& c : r.counters) steps += c.steps;
    benchmark::DoNotOptimize(r.final_state.data());
  }
  state.counters["instance_steps_per_s"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsIterationInvariantRate);
}

template <class Run>
void measure_ensemble(benchmark::State& state, Study s, Run run, bool gpu) {
  if (gpu && !cuda_device_info().available) {
    state.SkipWithError(cuda_device_info().description.c_str());
    return;
  }
  s.sample_dt = 1.0;
  const RunParams<double> rp = resolve(s);
  const EnsembleSpec spec = ensemble_spec(s);
  EnsembleSpec warm = spec;
  warm.size = std::min<std::uint64_t>(spec.size, 256);
  run(s, rp, warm);
  std::uint64_t steps = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const EnsembleResult r = run(s, rp, spec);
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    steps = r.totals.steps;
    benchmark::DoNotOptimize(r.series.data());
  }
  state.counters["instance_steps_per_s"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_GpuEnsemblePendulum(benchmark::State& st) { measure_ensemble(st, pendulum_study(st.range(0)), run_study_cuda, true); }
void BM_CpuEnsemblePendulum(benchmark::State& st) { measure_ensemble(st, pendulum_study(st.range(0)), run_study_cpu, false); }
void BM_GpuEnsembleChain7(benchmark::State& st) { measure_ensemble(st, chain_study(st.range(0)), run_study_cuda, true); }
void BM_CpuEnsembleChain7(benchmark::State& st) { measure_ensemble(st, chain_study(st.range(0)), run_study_cpu, false); }

BENCHMARK(BM_GpuEnsemblePendulum)->Arg(1 << 16)->Arg(1 << 20)->Arg(1 << 22)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuEnsemblePendulum)->Arg(1 << 16)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GpuEnsembleChain7)->Arg(1 << 16)->Arg(1 << 18)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuEnsembleChain7)->Arg(1 << 14)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_GpuPendulum(benchmark::State& st) { measure(st, pendulum_study(st.range(0)), cuda_run_pendulum_instances, true); }
void BM_CpuPendulum(benchmark::State& st) { measure(st, pendulum_study(st.range(0)), cpu_run_pendulum_instances, false); }
void BM_GpuChain7(benchmark::State& st) { measure(st, chain_study(st.range(0)), cuda_run_chain_instances, true); }
void BM_CpuChain7(benchmark::State& st) { measure(st, chain_study(st.range(0)), cpu_run_chain_instances, false); }

BENCHMARK(BM_GpuPendulum)->Arg(1 << 16)->Arg(1 << 20)->Arg(1 << 22)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuPendulum)->Arg(1 << 16)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GpuChain7)->Arg(1 << 14)->Arg(1 << 16)->Arg(1 << 18)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuChain7)->Arg(1 << 14)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
