// The CPU engine instantiated in a unit compiled without optimisation (tests/CMakeLists.txt
// compiles this file with -O0, as a Debug build or a user's debug project compiles chens's
// headers). The AVX2 and AVX-512 lanes rely on gnu::flatten inlining every call into their
// target-attributed copies (backends/cpu/cpu_lanes.hpp); at -O0 GCC inlines nothing, the
// model's and the step's out-of-line functions take Pack<4> and Pack<8> in another calling
// convention, and the AVX2 run of this very test crashed (a segmentation fault, 2026-12-02).
// Such a unit now compiles scalar and SSE2 only (backends/cpu/cpu_isa.hpp) and runs the
// widest of those whatever set the run asks for, with the scalar run's results bit for bit.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/pendulum.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "backends/cpu/cpu_engine.hpp"
#include "backends/cpu/cpu_isa.hpp"
#include "backends/engine_adapter.hpp"
#include "support/forced_isa.hpp"

#if defined(__OPTIMIZE__)
#error "tests/CMakeLists.txt compiles this unit with -O0: what it tests is an unoptimised unit"
#endif

namespace chens {
namespace {

using test::ForcedIsa;

// The closed-form reference under a name of this unit's own, so that the engine's and the
// instances' templates are instantiated here, at -O0, and not taken from the library's units.
struct ThisUnitsExact : PendulumExact<double> {
  ThisUnitsExact() = default;
  ThisUnitsExact(const PendulumExact<double>& e) : PendulumExact<double>(e) {}  // NOLINT: what make() returns
};

TEST(UnoptimisedLanes, AUnitCompiledWithoutOptimisationRunsItsScalarResultsOnEverySetTheRunAsksFor) {
  EXPECT_FALSE(cpu_isa_compiled(CpuIsa::avx2));
  EXPECT_FALSE(cpu_isa_compiled(CpuIsa::avx512));
  EXPECT_EQ(cpu_isa_compiled(CpuIsa::sse2), cpu_isa_in(CHENS_CPU_ISAS_MASK, CpuIsa::sse2));

  using Model = Pendulum<double>;
  using System = HamiltonDirac<Model>;
  using Method = ExplicitRk<Rk4Tableau>;
  const System sys{Model{1, 1, 1}};
  const Model::State z0{{1, 0, 0, -2}};
  RunParams<double> rp;
  rp.h = rp.last_h = 0.05;
  rp.t_end = 4.0;
  rp.total_steps = 80;
  rp.steps_per_sample = 10;
  rp.samples = 8;
  rp.sample_dt = 0.5;
  rp.project_momentum = true;  // the momentum projection (psi and its Gram solve) after each step
  rp.projection_tol = 1e-9;    // fires in some instances
  EnsembleSpec spec;
  spec.size = 1000;  // not a multiple of the lane groups: the blocks end in instances that step alone
  spec.seed = 23;
  spec.perturbation = 1e-2;
  spec.threads = 1;
  spec.keep_instances = spec.size;
  auto run = [&] { return run_ensemble<CpuBackend, System, Method, ThisUnitsExact>(sys, Method{}, rp, z0, spec); };
  EnsembleResult scalar;
  {
    const ForcedIsa f("scalar");
    scalar = run();
  }
  ASSERT_EQ(scalar.kept.metrics.size(), spec.size * metric_count);
  for (int i = 1; i < cpu_isa_count; ++i) {
    const CpuIsa isa = CpuIsa(i);
    if (const char* why = cpu_isa_unavailable(isa)) {
      std::printf("[ skipped %s: %s ]\n", cpu_isa_name(isa), why);
      continue;
    }
    const ForcedIsa f(cpu_isa_name(isa));
    const EnsembleResult r = run();
    const std::string at = std::string("CHENS_CPU_ISA=") + cpu_isa_name(isa);
    // The widest set this unit compiled that is not wider than the one asked for.
    const CpuIsa ran = cpu_isa_compiled_at_most(isa);
    EXPECT_NE(r.device.find(std::string(cpu_isa_name(ran)) + ": "), std::string::npos) << at << ": " << r.device;
    ASSERT_EQ(r.series.size(), scalar.series.size()) << at;
    for (std::size_t k = 0; k < r.series.size(); ++k)
      EXPECT_EQ(std::memcmp(&r.series[k], &scalar.series[k], sizeof(SampleStats)), 0) << at << ", sample " << k;
    EXPECT_EQ(std::memcmp(&r.totals, &scalar.totals, sizeof(Counters)), 0) << at << ": counters";
    ASSERT_EQ(r.kept.metrics.size(), scalar.kept.metrics.size()) << at;
    EXPECT_EQ(std::memcmp(r.kept.metrics.data(), scalar.kept.metrics.data(), r.kept.metrics.size() * sizeof(double)), 0)
        << at << ": each instance's final metrics";
  }
}

}  // namespace
}  // namespace chens
