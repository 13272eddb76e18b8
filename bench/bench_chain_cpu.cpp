// The CPU backend on the seven-atom chain (issue 23, docs/performance.md "CPU lanes"):
// run_ensemble<CpuBackend> on Hamilton-Dirac + RK4 with the momentum projection check, with
// each instruction set forced (CHENS_CPU_ISA): scalar is the chain's CPU path before the
// packed loop (one instance at a time: the general lanes never took chains), sse2, avx2 and
// avx512 the packed loop with 2, 4 and 8 chains per register.
//
//   chens_chain/isa:X/threads:T   512 chains, 200 steps of h = 0.005, a sample every 10
//                                 steps (the diagnostics: energy, phi, psi, momenta), no
//                                 reference solution.
//
// --one-pass=<isa|none> runs one untimed pass on one thread (for perf stat).
//
// Before timing, the binary checks that every instruction set's run has the scalar run's
// sample statistics and instance 0 bit for bit, and exits with status 1 otherwise.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/chain.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backends/cpu/cpu_engine.hpp"
#include "backends/cpu/cpu_isa.hpp"

namespace {

using Model = chens::Chain<double, 7>;
using System = chens::HamiltonDirac<Model>;
using Method = chens::ExplicitRk<chens::Rk4Tableau>;
using NoRef = chens::NoReference<double, Model::state_size>;

constexpr std::int64_t kInstances = 512;
constexpr std::int64_t kSteps = 200;
constexpr double kH = 0.005;

chens::EnsembleResult chain_pass(std::uint64_t n, chens::index_t steps, int threads, const char* isa) {
  ::setenv("CHENS_CPU_ISA", isa, 1);
  const Model c = Model::uniform(1.0, 0.1);
  chens::RunParams<double> rp;
  rp.h = kH;
  rp.last_h = kH;
  rp.t_end = static_cast<double>(steps) * kH;
  rp.fixed_step = true;
  rp.total_steps = steps;
  rp.steps_per_sample = 10;
  rp.sample_dt = 10 * kH;
  rp.samples = (steps + 9) / 10;
  rp.project_momentum = true;
  rp.projection_tol = 1e-6;
  rp.reference = false;
  chens::EnsembleSpec spec;
  spec.size = n;
  spec.seed = 1;
  spec.perturbation = 1e-4;
  spec.threads = threads;
  auto r = chens::run_ensemble<chens::CpuBackend, System, Method, NoRef>(System{c}, Method{}, rp, Model::default_initial(c),
                                                                         spec);
  ::unsetenv("CHENS_CPU_ISA");
  return r;
}

void BM_chain(benchmark::State& st, int threads, const char* isa) {
  const auto n = static_cast<std::uint64_t>(st.range(0));
  const auto steps = static_cast<chens::index_t>(st.range(1));
  std::string device;
  for (auto _ : st) {
    const auto r = chain_pass(n, steps, threads, isa);
    benchmark::DoNotOptimize(r.instance0_state.data());
    device = r.device;
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(n) * steps);
  st.counters["threads"] = benchmark::Counter(threads);
  st.SetLabel(device);
}

bool same_results(const chens::EnsembleResult& a, const chens::EnsembleResult& b) {
  if (a.series.size() != b.series.size() || a.instance0_state != b.instance0_state) return false;
  for (std::size_t k = 0; k < a.series.size(); ++k)
    if (std::memcmp(&a.series[k], &b.series[k], sizeof(chens::SampleStats)) != 0) return false;
  return std::memcmp(&a.totals, &b.totals, sizeof(chens::Counters)) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  // --one-pass=<isa|none>: one untimed run on one thread and exit (perf stat's instruction
  // counts per instance-step, docs/performance.md; none: the start-up alone).
  for (int a = 1; a < argc; ++a)
    if (std::strncmp(argv[a], "--one-pass=", 11) == 0) {
      const std::string isa = argv[a] + 11;
      if (isa != "none") benchmark::DoNotOptimize(chain_pass(kInstances, kSteps, 1, isa.c_str()).instance0_state.data());
      return 0;
    }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const auto scalar = chain_pass(kInstances, kSteps, 1, "scalar");
  bool ok = true;
  for (int i = 1; i < chens::cpu_isa_count; ++i) {
    const chens::CpuIsa isa = chens::CpuIsa(i);
    if (!chens::cpu_isa_supported(isa)) continue;
    const bool same = same_results(chain_pass(kInstances, kSteps, omp_get_max_threads(), chens::cpu_isa_name(isa)), scalar);
    std::printf("agreement check: %s run == scalar run (statistics, counters, instance 0): %s\n", chens::cpu_isa_name(isa),
                same ? "bitwise" : "MISMATCH");
    ok = ok && same;
  }
  std::fflush(stdout);
  if (!ok) return 1;
  const int all = omp_get_max_threads();
  for (int i = 0; i < chens::cpu_isa_count; ++i) {
    if (!chens::cpu_isa_supported(chens::CpuIsa(i))) continue;
    const char* isa = chens::cpu_isa_name(chens::CpuIsa(i));
    for (const int threads : {1, all}) {
      benchmark::RegisterBenchmark((std::string("chens_chain/isa:") + isa + "/threads:" + std::to_string(threads)).c_str(),
                                   [threads, isa](benchmark::State& st) { BM_chain(st, threads, isa); })
          ->Args({kInstances, kSteps})
          ->ArgNames({"instances", "steps"})
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
      if (threads == all) break;
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
