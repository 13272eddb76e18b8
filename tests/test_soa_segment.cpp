// The GPU kernel's per-thread body (advance_segment_soa, include/chens/ensemble/
// soa_segment.hpp) run on the CPU over a host structure of arrays, segment by segment, as
// kernels/ensemble_kernels.cuh launches it: every instance's final state, counters and
// lost reason, its metrics at every sample, and the statistics reduced in the kernels'
// order (blocks of 64 in instance order, merged in block order) must equal the CPU
// backend's bit for bit. This checks the word layout, the partial loads and stores, the
// segment-local counters and the advancing reference's write-back without a GPU. Chains on
// thread groups (issue 20) run the group path's bodies (ensemble/group_segment.hpp) on groups
// of host threads, each lane holding its atoms, with the same expectations, and their
// recorded rows against the one-thread fill_recorded_row: the lean loop for RK4 under its
// settings, the per-instance driver over slices for every other method and setting, with
// passes that stop short as a checkpoint's stop points make them. The CPU backend's side is
// the study run through the dispatch (run_study_cpu), by the system units the build already
// has, so that this unit does not instantiate the CPU engine a second time; the emulated
// kernels get the same system, method and initial state, made from the same study.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include <chens/ensemble/group_segment.hpp>
#include <chens/ensemble/soa_segment.hpp>
#include <chens/formulations/constrained.hpp>
#include <chens/formulations/extended_hamiltonian.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/geometry/tangent_system.hpp>
#include <chens/integrators/midpoint_projection.hpp>
#include <chens/integrators/rattle.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/chain.hpp>
#include <chens/reference/numerical.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "backends/block_tree.hpp"
#include "backends/ensemble_spec.hpp"
#include "backends/instance_records.hpp"
#include "dispatch/all_model_traits.hpp"
#include "dispatch/chain_sizes.hpp"
#include "dispatch/run_study.hpp"
#include "study/study.hpp"
#include "support/emulated_group.hpp"

namespace chens {
namespace {

bool same_bits(const Accumulator& a, const Accumulator& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The kernels a test emulates: the general path (advance_segment); the lean path, row by
// row: lean_step_soa then measure_soa for every instance (kernels/ensemble_kernels.cuh's
// lean_step and measure_row); the group path, row by row: group_lean_step_soa then
// group_measure_soa on a group of host threads per row (kernels/group_kernels.cuh).
enum class Path { segment, lean, group };

// The study s (with its run parameters rp_study) on the CPU backend against the kernels'
// bodies emulated with sys, method and z0, which the caller makes from s as a system unit does
// (dispatch/make_engine.hpp): n instances perturbed by `perturbation`, seed 5.
template <class System, class Method, class Reference, Path path = Path::segment>
void expect_kernel_body_matches_cpu_backend(const Study& s, const System& sys, const Method& method,
                                            const RunParams<double>& rp_study, const ModelStateOf<System>& z0,
                                            std::uint64_t n, double perturbation, index_t rows_per_segment, const char* what,
                                            EnsembleResult* cpu_result = nullptr) {
  using Inst = InstanceOf<System, Reference>;
  constexpr int S = physical_state_size_v<System>;  // kept states (a tangent system's tangents: via wedge_error)
  const RunParams<typename System::Real> rp = run_params_as<typename System::Real>(rp_study);
  EnsembleSpec spec;
  spec.size = n;
  spec.seed = 5;
  spec.perturbation = perturbation;
  spec.threads = 2;
  spec.keep_instances = n;
  const EnsembleResult cpu = run_study_cpu(s, rp_study, spec);
  if (cpu_result) *cpu_result = cpu;

  // The kernels' storage and launches, emulated: init_instances, then advance_segment per
  // segment (one "thread" per instance), metrics in structure of arrays per sample.
  std::vector<std::uint64_t> soa(static_cast<std::size_t>(soa_words<Inst>) * n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const Inst in = make_instance<System, Reference>(sys, z0, typename System::Real(perturbation), spec.seed, i, rp);
    soa_store(soa.data(), n, i, in, 0, soa_words<Inst>);
  }
  const index_t samples = rp.samples;
  std::vector<std::vector<double>> metrics(static_cast<std::size_t>(samples + 1), std::vector<double>(n * metric_count));
  std::vector<std::vector<unsigned char>> valid(static_cast<std::size_t>(samples + 1), std::vector<unsigned char>(n));
  auto emit = [&](std::uint64_t i) {
    return [&, i](index_t k, bool ok, const Metrics<double>& m, const Inst&) {
      for (int c = 0; c < metric_count; ++c) metrics[static_cast<std::size_t>(k)][c * n + i] = ok ? m.v[c] : 0.0;
      valid[static_cast<std::size_t>(k)][i] = ok ? 1 : 0;
    };
  };
  for (index_t k0 = 0; k0 <= samples; k0 += rows_per_segment) {
    const index_t k1 = std::min<index_t>(samples + 1, k0 + rows_per_segment);
    if constexpr (path == Path::group) {
      using Groups = chain_group_system<System>;
      constexpr int G = Groups::lanes;
      using Slice = typename Groups::template slice<test::EmulatedGroup<G>>;
      constexpr int row_width = recorded_row_width(S);
      // The engine's choice of step kernel: the lean loop where it applies, else the
      // per-instance driver over the slices (kernels/cuda_engine.cuh, group_step_to).
      LeanPolicy policy{};
      bool lean = false;
      if constexpr (lean_capable_v<System, Method>) lean = lean_policy_for<System>(rp, policy);
      auto integrate = [&](const Slice& slice, std::uint64_t i, index_t k, const StepLimit& limit) {
        if (lean) {
          if constexpr (lean_capable_v<System, Method>) {
            LeanStepResult<typename Slice::State> work;
            if (policy == LeanPolicy::momentum) {
              group_lean_step_soa<LeanPolicy::momentum, false, Method, Inst>(slice, rp, soa.data(), n, i, k, work,
                                                                             limit.until_step);
            } else {
              group_lean_step_soa<LeanPolicy::none, false, Method, Inst>(slice, rp, soa.data(), n, i, k, work,
                                                                         limit.until_step);
            }
          }
        } else {
          group_advance_soa<Method, Inst>(slice, method, rp, soa.data(), n, i, k, limit);
        }
      };
      for (index_t k = k0; k < k1; ++k) {
        std::vector<double> rows(n * row_width, -1.0);
        test::run_group<G>([&](int) {
          using Group = test::EmulatedGroup<G>;
          const Slice slice = Groups::template slice_of<Group>(sys);
          // The reference's kernel gets the reference's system (kernels/cuda_engine.cuh).
          const auto ref_slice = chain_group_system<HamiltonDirac<decltype(sys.model)>>::template slice_of<Group>(
              HamiltonDirac<decltype(sys.model)>{sys.model});
          auto reference = [&](std::uint64_t i, index_t attempts) {
            group_reference_soa<Method::adaptive, Inst>(ref_slice, rp, soa.data(), n, i, k, attempts);
            Group::sync();  // the GPU's kernel boundary
          };
          for (std::uint64_t i = 0; i < n; ++i) {
            if (k > 0) {
              // The engine's passes and rows (group_step_to: stepping, then the references):
              // a pass that stops short (a checkpoint's stop point: two steps before the
              // sample, or three trial steps), whose reference part finds the instance short
              // of the sample; the rest of the integration; a pass that stops the reference
              // short; the rest. Between kernels the GPU's boundary: lane 0's words are in
              // memory before any lane reads them.
              integrate(slice, i, k, StepLimit{rp.sample_step(k) - 2, 3});
              Group::sync();
              reference(i, 3);
              integrate(slice, i, k, StepLimit{});
              Group::sync();
              reference(i, 3);
              reference(i, INT64_MAX);
            }
            group_measure_soa<Inst>(slice, rp, soa.data(), n, i, k,
                                    [&](index_t kk, bool ok, const Metrics<double>& m, const typename Slice::State& z,
                                        const GroupReferenceSlice<Inst, Slice>& ref) {
                                      if (Group::rank() == 0) emit(i)(kk, ok, m, Inst{});
                                      group_fill_recorded_row(slice, z, ref, ok, m, rows.data() + i * row_width);
                                    });
          }
        });
        // The group's recorded rows are the one-thread rows of the same instance and metrics.
        for (std::uint64_t i = 0; i < n; ++i) {
          Inst in;
          soa_load(soa.data(), n, i, in, 0, soa_words<Inst>);
          Metrics<double> m;
          for (int c = 0; c < metric_count; ++c) m.v[c] = metrics[static_cast<std::size_t>(k)][c * n + i];
          double row[row_width];
          fill_recorded_row(sys, rp, in, k, valid[static_cast<std::size_t>(k)][i] != 0, m, row);
          ASSERT_EQ(std::memcmp(row, rows.data() + i * row_width, sizeof row), 0)
              << what << ": recorded row of instance " << i << " at sample " << k;
        }
      }
    } else if constexpr (path == Path::lean) {
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
  s.projection_tol = 1e-9;    // fires now and then
  s.initial = {1, 0, 0, -2};  // (x, y, p_x, p_y): on the circle, swinging at speed 2
  return s;
}

// The study's pendulum (its parameters and initial state) as a system unit makes it.
template <class Real = double>
Pendulum<Real> pendulum_of(const Study& s, const RunParams<double>& rp) {
  return ModelTraits<Pendulum<Real>>::make(system_args(s, rp));
}
template <class Real = double>
typename Pendulum<Real>::State pendulum_start(const Study& s, const RunParams<double>& rp) {
  return initial_of<Pendulum<Real>>(system_args(s, rp));
}

TEST(SoaSegment, PendulumFixedStepWithProjections) {
  const Study s = pendulum_study(MethodId::rk4);
  const RunParams<double> rp = resolve(s);
  using Sys = HamiltonDirac<Pendulum<double>>;
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<Rk4Tableau>, PendulumExact<double>>(
      s, Sys{pendulum_of(s, rp)}, {}, rp, pendulum_start(s, rp), 300, 1e-3, 4, "pendulum dirac + rk4");
}

// The lean path (one step kernel and one measuring kernel per row), projections firing.
TEST(SoaSegment, PendulumLeanPath) {
  Study s = pendulum_study(MethodId::rk4);
  s.position = false;
  const RunParams<double> rp = resolve(s);
  using Sys = HamiltonDirac<Pendulum<double>>;
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<Rk4Tableau>, PendulumExact<double>, Path::lean>(
      s, Sys{pendulum_of(s, rp)}, {}, rp, pendulum_start(s, rp), 300, 1e-3, 4, "pendulum dirac + rk4, lean path");
  Study f = s;
  f.precision = Precision::single_precision;
  const RunParams<double> rpf = resolve(f);
  using SysF = HamiltonDirac<Pendulum<float>>;
  expect_kernel_body_matches_cpu_backend<SysF, ExplicitRk<Rk4Tableau>, PendulumExact<double>, Path::lean>(
      f, SysF{pendulum_of<float>(f, rpf)}, {}, rpf, pendulum_start<float>(f, rpf), 130, 1e-3, 3,
      "float pendulum dirac + rk4, lean path");
}

// Lost instances on the lean path: frozen by a residual bound at a sample (measure_soa
// writes the lost word back) and the step kernel leaving them alone afterwards.
TEST(SoaSegment, PendulumLeanPathWithLostInstances) {
  Study s = pendulum_study(MethodId::euler);
  s.formulation = FormulationId::naive;
  s.position = s.momentum = false;
  s.perturbation = 0.3;
  s.t_end = 20.0;
  s.lost_residual = 0.3;  // reached from t = 1.5 to 6.5 (2e-2: every instance at once, at t = 1)
  const RunParams<double> rp = resolve(s);
  using Sys = Naive<Pendulum<double>>;
  EnsembleResult cpu;
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<EulerTableau>, PendulumExact<double>, Path::lean>(
      s, Sys{pendulum_of(s, rp)}, {}, rp, pendulum_start(s, rp), 300, 0.3, 4, "pendulum naive + euler, lost instances",
      &cpu);
  // The case this test is for: instances lost by the bound at a sample while others go on.
  EXPECT_GT(cpu.lost[int(LostReason::residual_bound)], 0u);
  bool some_live_some_lost = false;
  for (const SampleStats& st : cpu.series) some_live_some_lost |= st.metric[0].count > 0 && st.metric[0].count < 300;
  EXPECT_TRUE(some_live_some_lost) << "no sample with both live and lost instances";
}

// output.wedge: the tangent system (12 numbers per instance) through the kernel's body; its
// tangents are checked through wedge_error, compared bit for bit like every metric.
TEST(SoaSegment, PendulumWithTangentsAndStageProjection) {
  Study s = pendulum_study(MethodId::midpoint);
  s.formulation = FormulationId::extended;
  s.projection_scheme = "midpoint";
  s.projection_tol = 1e-13;
  s.tol = 1e-14;
  s.wedge = true;
  const RunParams<double> rp = resolve(s);
  ASSERT_TRUE(rp.stage_projection);
  using Sys = TangentSystem<ExtendedHamiltonian<Pendulum<double>>>;
  using Method = TangentStepper<MidpointProjection<double>>;
  expect_kernel_body_matches_cpu_backend<Sys, Method, PendulumExact<double>>(
      s, Sys::of(ExtendedHamiltonian<Pendulum<double>>{pendulum_of(s, rp)}),
      Method{MidpointProjection<double>{rp.iteration_tol, rp.max_iterations, rp.project_position, rp.project_momentum,
                                        rp.projection_tol, rp.projection_max_iterations}},
      rp, pendulum_start(s, rp), 130, 1e-3, 3, "pendulum extended + midpoint with stage projection, tangents");
}

TEST(SoaSegment, PendulumAdaptive) {
  Study s = pendulum_study(MethodId::dopri5);
  s.rtol = s.atol = 1e-8;
  const RunParams<double> rp = resolve(s);
  using Sys = HamiltonDirac<Pendulum<double>>;
  expect_kernel_body_matches_cpu_backend<Sys, Dopri5<double>, PendulumExact<double>>(
      s, Sys{pendulum_of(s, rp)}, Dopri5<double>{rp.rtol, rp.atol}, rp, pendulum_start(s, rp), 200, 1e-3, 5,
      "pendulum dirac + dopri5");
}

TEST(SoaSegment, PendulumInFloat) {
  Study s = pendulum_study(MethodId::rk4);
  s.precision = Precision::single_precision;
  const RunParams<double> rp = resolve(s);
  using Sys = HamiltonDirac<Pendulum<float>>;
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<Rk4Tableau>, PendulumExact<double>>(
      s, Sys{pendulum_of<float>(s, rp)}, {}, rp, pendulum_start<float>(s, rp), 130, 1e-3, 3, "float pendulum dirac + rk4");
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
  const Sys sys{ModelTraits<Model>::make(system_args(s, rp))};
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<Rk4Tableau>, NumericalReference<Model>>(
      s, sys, {}, rp, initial_of<Model>(system_args(s, rp)), 70, 1e-3, 3, "chain dirac + rk4, numerical reference");
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<Rk4Tableau>, NumericalReference<Model>, Path::lean>(
      s, sys, {}, rp, initial_of<Model>(system_args(s, rp)), 70, 1e-3, 3,
      "chain dirac + rk4, numerical reference, lean path");
}

// A chain study on thread groups, without a reference unless a test turns it on.
Study chain_group_study(int atoms) {
  Study s;
  s.model_kind = ModelKind::chain;
  set_key(s, "model.atoms=" + std::to_string(atoms));
  s.h = 0.05;
  s.t_end = 1.0;
  s.sample_dt = 0.25;
  s.momentum = true;
  s.projection_tol = 1e-10;  // fires now and then
  return s;                  // output.reference: "none" by default for chains
}

// Chains on thread groups (issue 20): 16 atoms on the GPU's 8 lanes, instances stepped,
// projected, measured and recorded by the group path's bodies equal the CPU backend's
// (and the one-thread lean path's) bit for bit.
TEST(SoaSegment, ChainOnThreadGroups) {
  const Study s = chain_group_study(16);
  const RunParams<double> rp = resolve(s);
  using Model = Chain<double, 16>;
  using Sys = HamiltonDirac<Model>;
  static_assert(chain_group_system<Sys>::lanes == 8);
  const Sys sys{ModelTraits<Model>::make(system_args(s, rp))};
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<Rk4Tableau>, NumericalReference<Model>, Path::group>(
      s, sys, {}, rp, initial_of<Model>(system_args(s, rp)), 6, 1e-3, 3, "16-atom chain dirac + rk4 on 8 lanes");
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<Rk4Tableau>, NumericalReference<Model>, Path::lean>(
      s, sys, {}, rp, initial_of<Model>(system_args(s, rp)), 6, 1e-3, 3, "16-atom chain dirac + rk4, one thread");
  // No projection (LeanPolicy::none), non-uniform masses.
  Study none = s;
  none.momentum = false;
  none.masses = {1.0, 2.0, 0.5, 1.5, 1.0, 3.0, 0.25, 1.0, 1.0, 2.0, 0.5, 1.5, 1.0, 3.0, 0.25, 1.0};
  const RunParams<double> rp_none = resolve(none);
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<Rk4Tableau>, NumericalReference<Model>, Path::group>(
      none, Sys{ModelTraits<Model>::make(system_args(none, rp_none))}, {}, rp_none,
      initial_of<Model>(system_args(none, rp_none)), 4, 1e-3, 5,
      "16-atom chain dirac + rk4 on 8 lanes, no projection, non-uniform masses");
}

// A 16-atom chain study in sys's formulation, stepped by `method` on 8 host-thread lanes
// against the CPU backend (5 instances, 3 rows a segment): the CPU's result, for what each
// case asserts happened.
// With `reference`, the study's numerical reference is on (output.reference = "auto").
template <class Sys, class Method>
EnsembleResult expect_16_atoms_on_8_lanes(const Sys& sys, const Study& s, const Method& method, const char* what,
                                          bool reference = false) {
  using Model = Chain<double, 16>;
  static_assert(chain_group_system<Sys>::lanes == 8);
  RunParams<double> rp = resolve(s);
  rp.reference = reference;  // set here: GCC 12 warns falsely of Study::reference's std::optional
  EnsembleResult cpu;
  expect_kernel_body_matches_cpu_backend<Sys, Method, NumericalReference<Model>, Path::group>(
      s, sys, method, rp, initial_of<Model>(system_args(s, rp)), 5, s.perturbation, 3, what, &cpu);
  return cpu;
}

// Every other method and projection setting on groups (group_advance_soa, the engine's
// general group kernel): DOPRI5, whose error norm is summed over the lanes in the whole
// state's order (ChainSlice::ordered_state_sum) so that the group accepts and rejects the
// one-thread steps; the implicit midpoint rule and Gauss2, whose fixed-point iterations stop
// on the group's max_abs; RK4 with the position projection every second step; the midpoint
// rule with the stage projection (004 §4); and ensemble.lost_unconverged. 16 atoms on 8
// lanes against the CPU backend, bit for bit; each case asserts that what it is for happened.
TEST(SoaSegment, ChainOnThreadGroupsRunsEveryMethodLikeTheCpu) {
  using Model = Chain<double, 16>;
  using Sys = HamiltonDirac<Model>;
  auto run = [](const Study& s, const auto& method, const char* what) {
    return expect_16_atoms_on_8_lanes(Sys{ModelTraits<Model>::make(system_args(s, {}))}, s, method, what);
  };
  auto study = [] {
    Study s = chain_group_study(16);
    s.perturbation = 1e-3;
    return s;
  };
  Study s = study();
  s.method = MethodId::dopri5;
  s.h = 0.2;  // DOPRI5's first trial step: too large, rejected
  RunParams<double> rp = resolve(s);
  EnsembleResult cpu = run(s, Dopri5<double>{rp.rtol, rp.atol}, "16-atom chain dirac + dopri5 on 8 lanes");
  EXPECT_GT(cpu.totals.rejected_steps, 0u);
  EXPECT_GT(cpu.totals.momentum_projections, 0u);

  s = study();
  s.method = MethodId::midpoint;
  rp = resolve(s);
  cpu = run(s, ImplicitRk<Gauss1Tableau, double>{rp.iteration_tol, rp.max_iterations},
            "16-atom chain dirac + implicit midpoint on 8 lanes");
  EXPECT_GT(cpu.totals.iterations, 2 * cpu.totals.steps);
  s.method = MethodId::gauss2;
  rp = resolve(s);
  cpu = run(s, ImplicitRk<Gauss2Tableau, double>{rp.iteration_tol, rp.max_iterations},
            "16-atom chain dirac + gauss2 on 8 lanes");
  EXPECT_GT(cpu.totals.iterations, 2 * cpu.totals.steps);

  s = study();
  s.position = true;
  s.projection_every = 2;
  rp = resolve(s);
  cpu = run(s, ExplicitRk<Rk4Tableau>{}, "16-atom chain dirac + rk4, position projection every 2 steps, on 8 lanes");
  EXPECT_GT(cpu.totals.position_projections, 0u);
  EXPECT_GT(cpu.totals.position_newton_iterations, 0u);

  s = study();
  s.method = MethodId::midpoint;
  s.position = true;
  s.projection_scheme = "midpoint";
  rp = resolve(s);
  ASSERT_TRUE(rp.stage_projection);
  cpu = run(s,
            MidpointProjection<double>{rp.iteration_tol, rp.max_iterations, rp.project_position, rp.project_momentum,
                                       rp.projection_tol, rp.projection_max_iterations},
            "16-atom chain dirac + midpoint with stage projection on 8 lanes");
  EXPECT_GT(cpu.totals.iterations, cpu.totals.steps);

  s = study();
  s.method = MethodId::midpoint;
  s.max_iterations = 4;
  s.lost_unconverged = true;
  s.perturbation = 0.05;
  rp = resolve(s);
  cpu = run(s, ImplicitRk<Gauss1Tableau, double>{rp.iteration_tol, rp.max_iterations},
            "16-atom chain dirac + implicit midpoint, 4 iterations at most, unconverged steps lose the instance");
  EXPECT_GT(cpu.lost[int(LostReason::unconverged)], 0u);
}

// Every chain formulation on groups: the naive index reduction with RK4 and the momentum
// projection (the lean loop), impetus-striction with RK4 (the lean loop without projection,
// and with the impetus reset of 000 §8, the per-instance driver; its recorded rows hold the
// physical state, a group computation), the constrained equations with RATTLE (Newton on
// the group). 16 atoms on 8 lanes against the CPU backend, bit for bit.
TEST(SoaSegment, ChainOnThreadGroupsRunsEveryFormulationLikeTheCpu) {
  using Model = Chain<double, 16>;
  Study s = chain_group_study(16);
  s.perturbation = 1e-3;
  s.formulation = FormulationId::naive;
  EnsembleResult cpu = expect_16_atoms_on_8_lanes(Naive<Model>{ModelTraits<Model>::make(system_args(s, {}))}, s,
                                                  ExplicitRk<Rk4Tableau>{}, "16-atom chain naive + rk4 on 8 lanes");
  EXPECT_GT(cpu.totals.momentum_projections, 0u);

  s.formulation = FormulationId::impetus;
  s.momentum = false;
  expect_16_atoms_on_8_lanes(ImpetusStriction<Model>{ModelTraits<Model>::make(system_args(s, {}))}, s,
                             ExplicitRk<Rk4Tableau>{}, "16-atom chain impetus + rk4 on 8 lanes");
  s.impetus_reset = 1e-12;  // fires: the impetus drifts from the physical momenta
  cpu = expect_16_atoms_on_8_lanes(ImpetusStriction<Model>{ModelTraits<Model>::make(system_args(s, {}))}, s,
                                   ExplicitRk<Rk4Tableau>{}, "16-atom chain impetus + rk4 with impetus reset on 8 lanes");
  EXPECT_GT(cpu.totals.impetus_resets, 0u);

  s = chain_group_study(16);
  s.perturbation = 1e-3;
  s.formulation = FormulationId::constrained;
  s.method = MethodId::rattle;
  s.momentum = false;
  const RunParams<double> rp = resolve(s);
  cpu = expect_16_atoms_on_8_lanes(Constrained<Model>{ModelTraits<Model>::make(system_args(s, {}))}, s,
                                   Rattle<double>{rp.iteration_tol, rp.max_iterations},
                                   "16-atom chain constrained + rattle on 8 lanes");
  EXPECT_GT(cpu.totals.iterations, cpu.totals.steps);
}

// The numerical reference on groups (group_reference_soa: the instance's own DOPRI5 run at
// reference_tol over the slices, advanced once the instance is at the sample, in passes that
// stop it short; the integration error's sum of squares in the whole state's order; the
// reference's half of the recorded rows): RK4 on the lean loop, DOPRI5 on the per-instance
// driver, impetus-striction (whose physical state the error compares), and a reference that
// fails (integrator.max_steps bounds the reference's steps too) and loses its instance.
// 16 atoms on 8 lanes against the CPU backend, bit for bit.
TEST(SoaSegment, ChainOnThreadGroupsAdvancesTheNumericalReferenceLikeTheCpu) {
  using Model = Chain<double, 16>;
  using Sys = HamiltonDirac<Model>;
  Study s = chain_group_study(16);
  s.perturbation = 1e-3;
  auto expect_reference_work = [](const EnsembleResult& cpu, const char* what) {
    EXPECT_GT(cpu.totals.reference_steps, cpu.totals.steps / 4) << what;  // several steps a sample
    EXPECT_GT(cpu.totals.reference_rhs_evaluations, 6 * cpu.totals.reference_steps) << what;
    for (std::size_t i = 0; i < cpu.kept.lost.size(); ++i) {
      if (cpu.kept.lost[i] == int(LostReason::none)) {
        EXPECT_GT(cpu.kept.metrics[i * metric_count + int(MetricId::integration_error)], 0.0) << what << ", " << i;
      }
    }
  };
  EnsembleResult cpu = expect_16_atoms_on_8_lanes(Sys{ModelTraits<Model>::make(system_args(s, {}))}, s,
                                                  ExplicitRk<Rk4Tableau>{},
                                                  "16-atom chain dirac + rk4 with a numerical reference on 8 lanes", true);
  expect_reference_work(cpu, "rk4");
  EXPECT_EQ(cpu.lost_total(), 0u);

  Study a = s;
  a.method = MethodId::dopri5;
  a.h = 0.2;
  const RunParams<double> rp = resolve(a);
  cpu = expect_16_atoms_on_8_lanes(Sys{ModelTraits<Model>::make(system_args(a, {}))}, a, Dopri5<double>{rp.rtol, rp.atol},
                                   "16-atom chain dirac + dopri5 with a numerical reference on 8 lanes", true);
  expect_reference_work(cpu, "dopri5");

  Study imp = s;
  imp.formulation = FormulationId::impetus;
  imp.momentum = false;
  cpu = expect_16_atoms_on_8_lanes(ImpetusStriction<Model>{ModelTraits<Model>::make(system_args(imp, {}))}, imp,
                                   ExplicitRk<Rk4Tableau>{},
                                   "16-atom chain impetus + rk4 with a numerical reference on 8 lanes", true);
  expect_reference_work(cpu, "impetus");

  Study fail = s;
  fail.max_steps = 12;  // the reference's steps over the run; RK4's fixed steps are not bounded by it
  cpu = expect_16_atoms_on_8_lanes(Sys{ModelTraits<Model>::make(system_args(fail, {}))}, fail, ExplicitRk<Rk4Tableau>{},
                                   "16-atom chain dirac + rk4, reference failing at integrator.max_steps, on 8 lanes", true);
  EXPECT_GT(cpu.lost[int(LostReason::reference_failed)], 0u);
}

// 32 atoms on 16 lanes, and instances lost on the group path: by the residual bound at a
// sample (group_measure_soa's verdict and write-back) and by a non-finite step inside the
// lean loop (the group's collective finiteness test); lost instances stay frozen.
TEST(SoaSegment, ChainOnThreadGroupsLosesInstancesLikeTheCpu) {
  const std::vector<int>& built = compiled_chain_sizes();
  if (std::find(built.begin(), built.end(), 32) == built.end())
    GTEST_SKIP() << "skipped: this build has no 32-atom chains (CHENS_CHAIN_ATOMS)";
  Study s = chain_group_study(32);
  s.t_end = 0.5;
  s.momentum = false;
  s.perturbation = 0.05;
  s.lost_residual = 2e-7;  // between the instances' max |psi| over the run (3e-8 .. 9e-7)
  const RunParams<double> rp = resolve(s);
  using Model = Chain<double, 32>;
  using Sys = HamiltonDirac<Model>;
  static_assert(chain_group_system<Sys>::lanes == 16);
  const Sys sys{ModelTraits<Model>::make(system_args(s, rp))};
  EnsembleResult cpu;
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<Rk4Tableau>, NumericalReference<Model>, Path::group>(
      s, sys, {}, rp, initial_of<Model>(system_args(s, rp)), 4, 0.05, 2, "32-atom chain on 16 lanes, residual bound", &cpu);
  EXPECT_GT(cpu.lost[int(LostReason::residual_bound)], 0u);  // the case this test is for
  EXPECT_LT(cpu.lost_total(), 4u);
  Study blow = s;
  blow.lost_residual = 0.0;
  blow.lost_diverged = 0.0;  // until the state overflows
  blow.h = 0.25;
  blow.t_end = 2.0;
  blow.perturbation = 0.3;
  const RunParams<double> rp_blow = resolve(blow);
  expect_kernel_body_matches_cpu_backend<Sys, ExplicitRk<Rk4Tableau>, NumericalReference<Model>, Path::group>(
      blow, sys, {}, rp_blow, initial_of<Model>(system_args(blow, rp_blow)), 4, 0.3, 2,
      "32-atom chain on 16 lanes, large steps", &cpu);
  EXPECT_GT(cpu.lost[int(LostReason::non_finite)], 0u);
}

}  // namespace
}  // namespace chens
