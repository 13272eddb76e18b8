// The GPU kernel's per-thread body (advance_segment_soa, include/chens/ensemble/
// soa_segment.hpp) run on the CPU over a host structure of arrays, segment by segment, as
// kernels/ensemble_kernels.cuh launches it: every instance's final state, counters and
// lost reason, its metrics at every sample, and the statistics reduced in the kernels'
// order (blocks of 64 in instance order, merged in block order) must equal the CPU
// backend's bit for bit. This checks the word layout, the partial loads and stores, the
// segment-local counters and the advancing reference's write-back without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include <chens/ensemble/soa_segment.hpp>
#include <chens/formulations/extended_hamiltonian.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/geometry/wedge.hpp>
#include <chens/integrators/midpoint_projection.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/chain.hpp>
#include <chens/reference/numerical.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "backends/cpu/cpu_engine.hpp"
#include "dispatch/model_traits.hpp"
#include "study/study.hpp"

namespace chens {
namespace {

bool same_bits(const Accumulator& a, const Accumulator& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Split = true: the lean path instead, row by row: lean_step_soa then measure_soa for every
// instance (kernels/ensemble_kernels.cuh's lean_step and measure_row).
template <class System, class Method, class Reference, bool Split = false>
void expect_kernel_body_matches_cpu_backend(const System& sys, const Method& method,
                                            const RunParams<typename System::Real>& rp,
                                            const ModelStateOf<System>& z0, std::uint64_t n, double perturbation,
                                            index_t rows_per_segment, const char* what) {
  using Inst = InstanceOf<System, Reference>;
  constexpr int S = physical_state_size_v<System>;  // kept states (a tangent system's tangents: via wedge_error)
  EnsembleSpec spec;
  spec.size = n;
  spec.seed = 5;
  spec.perturbation = perturbation;
  spec.threads = 2;
  spec.keep_instances = n;
  const EnsembleResult cpu = run_ensemble<CpuBackend, System, Method, Reference>(sys, method, rp, z0, spec);

  // The kernels' storage and launches, emulated: init_instances, then advance_segment per
  // segment (one "thread" per instance), metrics in structure of arrays per sample.
  std::vector<std::uint64_t> soa(static_cast<std::size_t>(soa_words<Inst>) * n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const Inst in = make_instance<System, Reference>(sys, z0, typename System::Real(perturbation), spec.seed, i, rp);
    soa_store(soa.data(), n, i, in, 0, soa_words<Inst>);
  }
  const index_t samples = rp.samples;
  std::vector<std::vector<double>> metrics(static_cast<std::size_t>(samples + 1),
                                           std::vector<double>(n * metric_count));
  std::vector<std::vector<unsigned char>> valid(static_cast<std::size_t>(samples + 1), std::vector<unsigned char>(n));
  auto emit = [&](std::uint64_t i) {
    return [&, i](index_t k, bool ok, const Metrics<double>& m, const Inst&) {
      for (int c = 0; c < metric_count; ++c) metrics[static_cast<std::size_t>(k)][c * n + i] = ok ? m.v[c] : 0.0;
      valid[static_cast<std::size_t>(k)][i] = ok ? 1 : 0;
    };
  };
  for (index_t k0 = 0; k0 <= samples; k0 += rows_per_segment) {
    const index_t k1 = std::min<index_t>(samples + 1, k0 + rows_per_segment);
    if constexpr (Split) {
      LeanPolicy policy{};
      ASSERT_TRUE(lean_policy_for<System>(rp, policy)) << what;
      for (index_t k = k0; k < k1; ++k) {
        for (std::uint64_t i = 0; i < n && k > 0; ++i) {
          LeanStepResult<typename System::State> work;
          if (policy == LeanPolicy::momentum) {
            lean_step_soa<LeanPolicy::momentum, true, System, Method, Inst>(sys, rp, soa.data(), n, i, k, work);
          } else {
            lean_step_soa<LeanPolicy::none, true, System, Method, Inst>(sys, rp, soa.data(), n, i, k, work);
          }
        }
        for (std::uint64_t i = 0; i < n; ++i) measure_soa<System, Inst>(sys, rp, soa.data(), n, i, k, emit(i));
      }
    } else {
      for (std::uint64_t i = 0; i < n; ++i)
        advance_segment_soa<System, Method, Inst>(sys, method, rp, soa.data(), n, i, k0, k1, emit(i));
    }
  }

  for (std::uint64_t i = 0; i < n; ++i) {
    Inst in;
    soa_load(soa.data(), n, i, in, 0, soa_words<Inst>);
    for (int c = 0; c < S; ++c)
      ASSERT_EQ(static_cast<double>(in.z[c]), cpu.kept.final_state[i * S + c]) << what << ": instance " << i;
    ASSERT_EQ(in.lost, cpu.kept.lost[i]) << what << ": instance " << i;
    ASSERT_EQ(std::memcmp(&in.c, &cpu.kept.counters[i], sizeof(Counters)), 0) << what << ": counters of instance " << i;
    for (int c = 0; c < metric_count; ++c)
      ASSERT_EQ(metrics[static_cast<std::size_t>(samples)][c * n + i], cpu.kept.metrics[i * metric_count + c])
          << what << ": instance " << i;
  }
  for (index_t k = 0; k <= samples; ++k) {
    SampleStats st;
    std::vector<Accumulator> leaves;  // the blocks' accumulators, merged along the block tree
    for (std::uint64_t lo = 0; lo < n; lo += cpu_block_size) {
      Accumulator a[metric_count];
      for (std::uint64_t i = lo; i < std::min<std::uint64_t>(n, lo + cpu_block_size); ++i)
        if (valid[static_cast<std::size_t>(k)][i])
          for (int c = 0; c < metric_count; ++c) a[c].add(metrics[static_cast<std::size_t>(k)][c * n + i]);
      leaves.insert(leaves.end(), a, a + metric_count);
    }
    tree_merge(leaves.data(), leaves.size() / metric_count, st.metric);
    for (int c = 0; c < metric_count; ++c)
      EXPECT_TRUE(same_bits(st.metric[c], cpu.series[static_cast<std::size_t>(k)].metric[c]))
          << what << ": sample " << k << ", " << metric_name(c);
  }
}

Study pendulum_study(MethodId method) {
  Study s;
  s.method = method;
  s.h = 0.05;
  s.t_end = 6.0;
  s.sample_dt = 0.5;
  s.momentum = true;
  s.position = true;
  s.projection_tol = 1e-9;  // fires now and then
  return s;
}

TEST(SoaSegment, PendulumFixedStepWithProjections) {
  const Study s = pendulum_study(MethodId::rk4);
  const RunParams<double> rp = resolve(s);
  using Sys = HamiltonDirac<Pendulum<double>>;
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<Rk4Tableau>, PendulumExact<double>>(
      Sys{Pendulum<double>{1, 1, 1}}, {}, rp, {{1, 0, 0, -2}}, 300, 1e-3, 4, "pendulum dirac + rk4");
}

// The lean path (one step kernel and one measuring kernel per row), projections firing.
TEST(SoaSegment, PendulumLeanPath) {
  Study s = pendulum_study(MethodId::rk4);
  s.position = false;
  const RunParams<double> rp = resolve(s);
  using Sys = HamiltonDirac<Pendulum<double>>;
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<Rk4Tableau>, PendulumExact<double>, true>(
      Sys{Pendulum<double>{1, 1, 1}}, {}, rp, {{1, 0, 0, -2}}, 300, 1e-3, 4, "pendulum dirac + rk4, lean path");
  const RunParams<float> rpf = run_params_as<float>(resolve(s));
  using SysF = HamiltonDirac<Pendulum<float>>;
  expect_kernel_body_matches_cpu_backend<SysF, ExplicitRk<Rk4Tableau>, PendulumExact<double>, true>(
      SysF{Pendulum<float>{1, 1, 1}}, {}, rpf, {{1, 0, 0, -2}}, 130, 1e-3, 3, "float pendulum dirac + rk4, lean path");
}

// Lost instances on the lean path: frozen by a residual bound at a sample (measure_soa
// writes the lost word back) and the step kernel leaving them alone afterwards.
TEST(SoaSegment, PendulumLeanPathWithLostInstances) {
  Study s = pendulum_study(MethodId::euler);
  s.formulation = FormulationId::naive;
  s.position = s.momentum = false;
  s.perturbation = 0.3;
  s.t_end = 20.0;
  s.lost_residual = 2e-2;
  const RunParams<double> rp = resolve(s);
  using Sys = Naive<Pendulum<double>>;
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<EulerTableau>, PendulumExact<double>, true>(
      Sys{Pendulum<double>{1, 1, 1}}, {}, rp, {{1, 0, 0, -2}}, 300, 0.3, 4, "pendulum naive + euler, lost instances");
}

// output.wedge: the tangent system (12 numbers per instance) through the kernel's body; its
// tangents are checked through wedge_error, compared bit for bit like every metric.
TEST(SoaSegment, PendulumWithTangentsAndStageProjection) {
  Study s = pendulum_study(MethodId::midpoint);
  s.projection_scheme = "midpoint";
  s.projection_tol = 1e-13;
  s.wedge = true;
  const RunParams<double> rp = resolve(s);
  using Sys = TangentSystem<ExtendedHamiltonian<Pendulum<double>>>;
  using Method = TangentStepper<MidpointProjection<double>>;
  expect_kernel_body_matches_cpu_backend<Sys, Method, PendulumExact<double>>(
      Sys::of(ExtendedHamiltonian<Pendulum<double>>{Pendulum<double>{1, 1, 1}}),
      Method{MidpointProjection<double>{1e-14, 100, true, true, 1e-13, 50}}, rp, {{1, 0, 0, -2}}, 130, 1e-3, 3,
      "pendulum extended + midpoint with stage projection, tangents");
}

TEST(SoaSegment, PendulumAdaptive) {
  const Study s = pendulum_study(MethodId::dopri5);
  const RunParams<double> rp = resolve(s);
  using Sys = HamiltonDirac<Pendulum<double>>;
  expect_kernel_body_matches_cpu_backend<Sys, Dopri5<double>, PendulumExact<double>>(
      Sys{Pendulum<double>{1, 1, 1}}, Dopri5<double>{1e-8, 1e-8}, rp, {{1, 0, 0, -2}}, 200, 1e-3, 5,
      "pendulum dirac + dopri5");
}

TEST(SoaSegment, PendulumInFloat) {
  const Study s = pendulum_study(MethodId::rk4);
  const RunParams<float> rp = run_params_as<float>(resolve(s));
  using Sys = HamiltonDirac<Pendulum<float>>;
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<Rk4Tableau>, PendulumExact<double>>(
      Sys{Pendulum<float>{1, 1, 1}}, {}, rp, {{1, 0, 0, -2}}, 130, 1e-3, 3, "float pendulum dirac + rk4");
}

TEST(SoaSegment, ChainWithAdvancingNumericalReference) {
  Study s;
  s.model_kind = ModelKind::chain;
  s.h = 0.05;
  s.t_end = 2.0;
  s.sample_dt = 0.25;
  s.momentum = true;
  s.projection_tol = 1e-10;
  RunParams<double> rp = resolve(s);
  rp.reference = true;  // output.reference = "auto" (set on the Study, GCC 12 warns falsely of its std::optional)
  using Model = Chain<double, 7>;
  using Sys = HamiltonDirac<Model>;
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<Rk4Tableau>, NumericalReference<Model>>(
      Sys{ModelTraits<Chain<double, 7>>::make(s)}, {}, rp, initial_of<Chain<double, 7>>(s), 70, 1e-3, 3, "chain dirac + rk4, numerical reference");
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<Rk4Tableau>, NumericalReference<Model>, true>(
      Sys{ModelTraits<Chain<double, 7>>::make(s)}, {}, rp, initial_of<Chain<double, 7>>(s), 70, 1e-3, 3,
      "chain dirac + rk4, numerical reference, lean path");
}

}  // namespace
}  // namespace chens
