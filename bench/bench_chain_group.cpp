// Chains on thread groups (issue 20): throughput of the per-instance loop of
// ensemble/chain_group_steps.hpp -- Hamilton-Dirac + RK4 + the momentum projection check
// (tolerance 1e-6) -- on the GPU (kernels/chain_group.cu: one warp tile of
// chain_group_lanes(N) lanes per instance) and on the CPU (one thread per instance, every
// host core, OpenMP), in the same binary and call sequence.
//
//   BM_GpuChainGroup/N/n   the fast kernels (nvcc's FMAs), time = the kernel by CUDA events
//   BM_GpuChainGroupExact/N/n   the -fmad=false kernels (the CPU's bits)
//   BM_CpuChainGroup/N/n   the same steps on the host's cores, wall time
//
// n instances of the default initial data perturbed by 1e-3, unit masses, L = 1, eps = 0.1,
// 100 steps of h = 0.002. Counters: instance_steps_per_s, and fp64_flops_per_s from
// bench/flop_counts.hpp's chain_dirac_rk4_lean_step(N) (the one-thread work; a group also
// computes each Lennard-Jones pair on both atoms' lanes, chain_group_redundant_pairs, not
// counted). Only the kernel is timed on the GPU: transfers are the engine's business.
// GPU benchmarks skip with the reason where no CUDA device is usable.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <chens/ensemble/chain_group_steps.hpp>

#include "backends/cuda_backend.hpp"
#include "chain_group.hpp"
#include "flop_counts.hpp"

namespace {

using namespace chens;

constexpr int kSteps = 100;
constexpr double kH = 0.002, kTol = 1e-6;

template <int N>
std::vector<double> initial(std::int64_t n) {
  const auto c = Chain<double, N>::uniform(1.0, 0.1);
  const auto z0 = Chain<double, N>::default_initial(c, 0.25);
  std::mt19937_64 rng(20261127);
  std::uniform_real_distribution<double> u(-1e-3, 1e-3);
  std::vector<double> z(static_cast<std::size_t>(n) * 4 * N);
  for (std::int64_t k = 0; k < n; ++k)
    for (int i = 0; i < 4 * N; ++i) z[static_cast<std::size_t>(k * 4 * N + i)] = z0[i] + u(rng);
  return z;
}

void rates(benchmark::State& st, int atoms, std::int64_t n, double seconds_per_iteration) {
  const double steps = double(n) * kSteps;
  st.counters["instance_steps_per_s"] = steps / seconds_per_iteration;
  st.counters["fp64_flops_per_s"] = steps * bench::chain_dirac_rk4_lean_step(atoms).total() / seconds_per_iteration;
  st.counters["atoms"] = atoms;
}

template <int N>
void gpu(benchmark::State& st, bool exact) {
  const CudaDeviceInfo dev = cuda_device_info();
  if (!dev.available) {
    st.SkipWithError(("skipped: " + dev.description).c_str());
    return;
  }
  const std::int64_t n = st.range(0);
  const std::vector<double> z0 = initial<N>(n);
  const std::vector<double> w(N, 1.0);
  double total = 0;
  int lanes = 0;
  for (auto _ : st) {
    std::vector<double> z = z0;
    ChainGroupLaunch out;
    const std::string err = chain_group_dirac_rk4_gpu(N, w.data(), 1.0, 0.1, z.data(), n, kSteps, kH, kTol, exact, out);
    if (!err.empty()) {
      st.SkipWithError(err.c_str());
      return;
    }
    st.SetIterationTime(out.kernel_ms / 1e3);
    total += out.kernel_ms / 1e3;
    lanes = out.lanes;
  }
  rates(st, N, n, total / double(st.iterations()));
  st.counters["lanes"] = lanes;
  st.SetLabel(dev.description);
}

template <int N>
void cpu(benchmark::State& st) {
  const std::int64_t n = st.range(0);
  const std::vector<double> z0 = initial<N>(n);
  const auto c = Chain<double, N>::uniform(1.0, 0.1);
  double total = 0;
  for (auto _ : st) {
    std::vector<double> z = z0;
    const auto t0 = std::chrono::steady_clock::now();
    chain_group_advance_cpu(c, z.data(), n, kSteps, kH, kTol);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    st.SetIterationTime(s);
    total += s;
    benchmark::DoNotOptimize(z.data());
  }
  rates(st, N, n, total / double(st.iterations()));
}

template <int N>
void BM_GpuChainGroup(benchmark::State& st) {
  gpu<N>(st, false);
}
template <int N>
void BM_GpuChainGroupExact(benchmark::State& st) {
  gpu<N>(st, true);
}
template <int N>
void BM_CpuChainGroup(benchmark::State& st) {
  cpu<N>(st);
}

BENCHMARK(BM_GpuChainGroup<16>)->Arg(100000)->Arg(1000000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GpuChainGroup<32>)->Arg(100000)->Arg(1000000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GpuChainGroup<64>)->Arg(100000)->Arg(1000000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GpuChainGroupExact<16>)->Arg(1000000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GpuChainGroupExact<64>)->Arg(100000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuChainGroup<7>)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuChainGroup<16>)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuChainGroup<32>)->Arg(2000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuChainGroup<64>)->Arg(1000)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
