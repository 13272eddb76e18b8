// The CPU lanes at every width (issue 23): the packed loop (ensemble/packed_steps.hpp),
// compiled for SSE2, AVX2 and AVX-512 (backends/cpu/cpu_engine.hpp), against the
// per-instance driver (advance_fixed_to_sample<1>, the scalar path) instance by instance,
// and whole ensembles run with each instruction set forced (CHENS_CPU_ISA) against the same
// ensemble run one instance at a time: states, step indices, times, counters, lost steps and
// every sample statistic, bit for bit. Widths the CPU cannot run or the build did not compile
// (CHENS_CPU_ISAS) are skipped, saying so.
#include <gtest/gtest.h>

#include <bit>
#include <chens/formulations/baumgarte.hpp>
#include <chens/formulations/extended_hamiltonian.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/impetus_modified.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/formulations/penalty.hpp>
#include <chens/formulations/total_hamiltonian.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/implicit_rk_lanes.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/chain.hpp>
#include <chens/models/double_pendulum.hpp>
#include <chens/models/penalty_pendulum.hpp>
#include <chens/models/pendulum.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cpu/cpu_engine.hpp"
#include "backends/cpu/cpu_isa.hpp"
#include "dispatch/run_study.hpp"
#include "support/cli_runner.hpp"
#include "support/fixed_step_run.hpp"
#include "support/forced_isa.hpp"
#include "support/random_states.hpp"
#include "support/temp_dir.hpp"

namespace chens {
namespace {

using test::ForcedIsa;

constexpr CpuIsa isa_of_width(int w) { return w == 8 ? CpuIsa::avx512 : w == 4 ? CpuIsa::avx2 : CpuIsa::sse2; }

// The packed loop of B = P W lanes as the engine calls it for W's instruction set.
template <int P, int W, class Method, class PackedSystem, class Inst>
void packed_call(const PackedSystem* sys, const RunParams<double>& rp, bool momentum, Inst* in, index_t k, index_t until) {
  if constexpr (W == 8) {
    packed_advance_avx512<P, W, Method>(sys, rp, momentum, in, k, until);
  } else if constexpr (W == 4) {
    packed_advance_avx2<P, W, Method>(sys, rp, momentum, in, k, until);
  } else {
    packed_advance_sse2<P, W, Method>(sys, rp, momentum, in, k, until);
  }
}

// What the lanes did, so that a case can show it exercised what it claims to.
struct LaneTally {
  std::set<index_t> lost_at;            // the step indices where lanes were lost
  int lost = 0, kept = 0;               // lanes lost and lanes live at the end
  std::set<std::uint64_t> projections;  // the lanes' projection counts (several: the masks mixed)
};

// Lanes j = 0 .. P W - 1 with systems[j] (one system for all when `shared`) and initial
// states z0[j], through the packed loop and one by one through advance_fixed_to_sample<1>,
// to each sample time via a stop point inside its interval (StepLimit), compared after each.
// While every lane is live and at one step the group goes through the packed loop; once one
// is lost, each lane goes on alone, as the engine does.
template <int P, int W, class Method, class System>
LaneTally expect_packed_matches_scalar(const std::vector<System>& systems, const std::vector<typename System::State>& z0,
                                       const RunParams<double>& rp, bool shared, const std::string& what) {
  constexpr int B = P * W;
  using Inst = InstanceOf<System, NoReference<double, System::State::size>>;
  const std::string where = what + " (W = " + std::to_string(W) + ", P = " + std::to_string(P) + ")";
  LaneTally tally;
  bool momentum = false;
  EXPECT_TRUE((packed_fits<System, Inst>(rp, momentum))) << where;
  std::vector<Inst> packed(B), scalar(B);
  for (int j = 0; j < B; ++j) {
    Inst in{};
    in.z = z0[static_cast<std::size_t>(j)];
    in.lost = int(LostReason::none);
    packed[static_cast<std::size_t>(j)] = scalar[static_cast<std::size_t>(j)] = in;
  }
  PackedSystemOf<System, W> ps[P];
  for (int p = 0; p < P; ++p) {
    if (shared) {
      ps[p] = broadcast_system<W>(systems[0]);
    } else {
      if constexpr (packs_per_lane_v<System, W>) {
        const System* lanes[W];
        for (int l = 0; l < W; ++l) lanes[l] = &systems[static_cast<std::size_t>(p * W + l)];
        ps[p] = pack_systems<W>(lanes);
      } else {
        ADD_FAILURE() << where << ": this system does not pack per lane";
        return tally;
      }
    }
  }
  const Method method{};
  for (index_t k = 1; k <= rp.samples; ++k) {
    const index_t mid = rp.sample_step(k - 1) + rp.steps_per_sample / 2;
    for (const index_t until : {mid, index_t(INT64_MAX)}) {
      for (int j = 0; j < B; ++j)
        advance_fixed_to_sample<1>(systems[shared ? 0 : static_cast<std::size_t>(j)], method, rp,
                                   &scalar[static_cast<std::size_t>(j)], k, StepLimit{until});
      bool together = true;
      for (int j = 0; j < B; ++j)
        together = together && packed[static_cast<std::size_t>(j)].lost == int(LostReason::none) &&
                   packed[static_cast<std::size_t>(j)].step == packed[0].step;
      if (together) {
        packed_call<P, W, Method>(ps, rp, momentum, packed.data(), k, until);
      } else {
        for (int j = 0; j < B; ++j)
          advance_fixed_to_sample<1>(systems[shared ? 0 : static_cast<std::size_t>(j)], method, rp,
                                     &packed[static_cast<std::size_t>(j)], k, StepLimit{until});
      }
      for (int j = 0; j < B; ++j) {
        const Inst& a = packed[static_cast<std::size_t>(j)];
        const Inst& b = scalar[static_cast<std::size_t>(j)];
        const std::string at =
            where + ", lane " + std::to_string(j) + ", sample " + std::to_string(k) + (until == mid ? " (stop point)" : "");
        const bool same = std::memcmp(&a.z, &b.z, sizeof a.z) == 0 && a.step == b.step &&
                          std::bit_cast<std::uint64_t>(a.t) == std::bit_cast<std::uint64_t>(b.t) && a.lost == b.lost &&
                          std::memcmp(&a.c, &b.c, sizeof(Counters)) == 0;
        if (!same) {
          ADD_FAILURE() << at << ": state, step " << a.step << " / " << b.step << ", lost " << a.lost << " / " << b.lost
                        << ", projections " << a.c.momentum_projections << " / " << b.c.momentum_projections
                        << " (packed / scalar)";
          return tally;
        }
      }
    }
  }
  for (const Inst& in : scalar) {
    if (in.lost != int(LostReason::none)) {
      tally.lost += 1;
      tally.lost_at.insert(in.step);
    } else {
      tally.kept += 1;
    }
    tally.projections.insert(in.c.momentum_projections);
  }
  return tally;
}

#define CHENS_SKIP_UNLESS_WIDTH(W) \
  if (const char* why = cpu_isa_unavailable(isa_of_width(W))) GTEST_SKIP() << cpu_isa_name(isa_of_width(W)) << ": " << why

// Every pendulum formulation, with each lane's own m, l, g and state (as [parameters] packs
// them) and with one system in every lane, projections firing in some lanes and not others.
template <int P, int W, class Tableau>
void pendulum_formulations(const char* method, double h) {
  constexpr int B = P * W;
  using Pm = Pendulum<double>;
  using M = ExplicitRk<Tableau>;
  const std::uint64_t seed = test::default_seed + 230 + static_cast<std::uint64_t>(B);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  std::vector<Pm> models;
  std::vector<Pm::State> z0;
  for (int j = 0; j < B; ++j) {
    const Pm m{u(rng), u(rng), 9.81 * u(rng)};
    models.push_back(m);
    z0.push_back(test::consistent_state(m, rng));
  }
  // tol 1e-5: the projection fires in most lanes, a different number of times in each.
  const auto rp = test::fixed_step_run(h, 1.234, 7, 1e-5, true);
  const auto rp_off = test::fixed_step_run(h, 1.234, 7, 1e-5, false);
  auto both = [&]<template <class> class F>(const std::string& name, auto make) {
    std::vector<F<Pm>> own;
    for (const Pm& m : models) own.push_back(make(m));
    const std::string w = name + " " + method;
    const LaneTally t = expect_packed_matches_scalar<P, W, M>(own, z0, rp, false, w + ", each lane its own model");
    std::vector<F<Pm>> one(1, own[0]);
    std::vector<Pm::State> z_one;
    for (int j = 0; j < B; ++j) z_one.push_back(z0[static_cast<std::size_t>(j)]);
    expect_packed_matches_scalar<P, W, M>(one, z_one, rp, true, w + ", one model");
    expect_packed_matches_scalar<P, W, M>(own, z0, rp_off, false, w + ", no projection");
    return t;
  };
  const LaneTally dirac = both.template operator()<HamiltonDirac>("dirac", [](const Pm& m) { return HamiltonDirac<Pm>{m}; });
  // The projection fired in some lanes more often than in others: the masks were mixed.
  EXPECT_GT(dirac.projections.size(), 1u) << method << ": the projections did not differ between lanes";
  both.template operator()<Naive>("naive", [](const Pm& m) { return Naive<Pm>{m}; });
  both.template operator()<ExtendedHamiltonian>("extended", [](const Pm& m) { return ExtendedHamiltonian<Pm>{m}; });
  both.template operator()<TotalHamiltonian>("total", [](const Pm& m) { return TotalHamiltonian<Pm>{m}; });
  both.template operator()<ImpetusStriction>("impetus", [](const Pm& m) { return ImpetusStriction<Pm>{m}; });
  both.template operator()<ImpetusModified>("impetus-modified", [](const Pm& m) { return ImpetusModified<Pm>{m}; });
  both.template operator()<Baumgarte>("baumgarte", [](const Pm& m) {
    Baumgarte<Pm> b{m};
    b.alpha = 2.0;
    b.beta = 3.0;
    return b;
  });
}

template <int W>
void pendulum_widths() {
  pendulum_formulations<1, W, Rk4Tableau>("rk4", 0.05);
  pendulum_formulations<2, W, Rk4Tableau>("rk4", 0.05);
  pendulum_formulations<2, W, Rk2Tableau>("rk2", 0.02);
  pendulum_formulations<2, W, EulerTableau>("euler", 0.005);
}

// A broadcast scalar is that scalar in every lane, bit for bit: -0.0 stays -0.0 (1 / -0.0 is
// -inf on the scalar path, and must be in every lane), NaN stays NaN.
TEST(CpuLanes, BroadcastKeepsEveryBitOfTheScalar) {
  for (double x : {-0.0, 0.0, 1.0, -2.5e-310, double(INFINITY), -double(INFINITY)}) {
    const Pack<2> p2(x);
    const Pack<4> p4(x);
    const Pack<8> p8(x);
    for (int l = 0; l < 2; ++l)
      EXPECT_EQ(std::bit_cast<std::uint64_t>(p2.v[l]), std::bit_cast<std::uint64_t>(x)) << x << ", lane " << l << " of 2";
    for (int l = 0; l < 4; ++l)
      EXPECT_EQ(std::bit_cast<std::uint64_t>(p4.v[l]), std::bit_cast<std::uint64_t>(x)) << x << ", lane " << l << " of 4";
    for (int l = 0; l < 8; ++l)
      EXPECT_EQ(std::bit_cast<std::uint64_t>(p8.v[l]), std::bit_cast<std::uint64_t>(x)) << x << ", lane " << l << " of 8";
  }
  const Pack<4> nan(std::nan(""));
  for (int l = 0; l < 4; ++l) EXPECT_TRUE(std::isnan(nan.v[l])) << "lane " << l;
}

TEST(CpuLanes, PendulumFormulationsMatchTheScalarPathSse2) {
  CHENS_SKIP_UNLESS_WIDTH(2);
  pendulum_widths<2>();
}
TEST(CpuLanes, PendulumFormulationsMatchTheScalarPathAvx2) {
  CHENS_SKIP_UNLESS_WIDTH(4);
  pendulum_widths<4>();
}
TEST(CpuLanes, PendulumFormulationsMatchTheScalarPathAvx512) {
  CHENS_SKIP_UNLESS_WIDTH(8);
  pendulum_widths<8>();
}

// Lanes that blow up at different steps beside lanes that do not: each lost lane keeps its
// last finite state and counts its failed step, the others go on, inside one packed group.
template <int W>
void blow_ups() {
  constexpr int P = 2, B = P * W;
  using Pm = Pendulum<double>;
  std::vector<HamiltonDirac<Pm>> systems;
  std::vector<Pm::State> z0;
  for (int j = 0; j < B; ++j) {
    // RK4 at h = 0.5 is stable for a long pendulum (h omega < 2.8) and not for a short one:
    // omega = sqrt(g / l) from 0.7 to 45 over the lanes.
    const double l = 2.0 * std::pow(0.00025, static_cast<double>(j) / (B - 1));
    const Pm m{1.0, l, 1.0};
    systems.push_back(HamiltonDirac<Pm>{m});
    z0.push_back(Pm::State{{l * std::sin(0.3), -l * std::cos(0.3), 0.0, 0.0}});
  }
  const LaneTally t = expect_packed_matches_scalar<P, W, ExplicitRk<Rk4Tableau>>(
      systems, z0, test::fixed_step_run(0.5, 400.0, 40, 1e-9, true), false, "dirac rk4, h = 0.5");
  EXPECT_GT(t.lost, 1) << "too few lanes blew up to test the masks";
  EXPECT_GT(t.kept, 0) << "every lane blew up";
  EXPECT_GT(t.lost_at.size(), 1u) << "the lanes blew up at one step";
}

TEST(CpuLanes, LanesThatBlowUpAreLostAtTheScalarStep) {
  for (int w : {2, 4, 8})
    if (const char* why = cpu_isa_unavailable(isa_of_width(w)))
      std::cout << "[ skipped width " << w << ": " << why << " ]\n";
  if (cpu_isa_supported(CpuIsa::sse2)) blow_ups<2>();  // CHENS_CPU_ISAS = widest leaves it out
  if (cpu_isa_supported(CpuIsa::avx2)) blow_ups<4>();
  if (cpu_isa_supported(CpuIsa::avx512)) blow_ups<8>();
}

// The seven-atom chain (the packed loop's largest state), each lane its own bond length and
// well depth; and the double and penalty pendulums, one system in every lane.
template <int W>
void other_models() {
  using C = Chain<double, 7>;
  std::vector<HamiltonDirac<C>> dirac;
  std::vector<Naive<C>> naive;
  std::vector<C::State> z0;
  for (int j = 0; j < 2 * W; ++j) {
    const C c = C::uniform(1.0 + 0.01 * j, 0.1 + 0.02 * j);
    dirac.push_back(HamiltonDirac<C>{c});
    naive.push_back(Naive<C>{c});
    bool on = true;
    z0.push_back(perturbed_initial_state(c, C::default_initial(c), 1e-3, test::default_seed, static_cast<std::uint64_t>(j),
                                         &on));
  }
  expect_packed_matches_scalar<2, W, ExplicitRk<Rk4Tableau>>(dirac, z0, test::fixed_step_run(0.02, 1.0, 10, 1e-10, true),
                                                             false, "chain dirac rk4");
  expect_packed_matches_scalar<1, W, ExplicitRk<Rk2Tableau>>(naive, z0, test::fixed_step_run(0.01, 0.5, 10, 1e-10, false),
                                                             false, "chain naive rk2");

  using D = DoublePendulum<double>;
  const D d{1.0, 1.5, 1.0, 0.8, 9.81};
  std::vector<D::State> zd;
  for (int j = 0; j < 2 * W; ++j) {
    bool on = true;
    zd.push_back(perturbed_initial_state(d, D::default_initial(d), 1e-2, test::default_seed, static_cast<std::uint64_t>(j),
                                         &on));
  }
  expect_packed_matches_scalar<2, W, ExplicitRk<Rk4Tableau>>(std::vector<HamiltonDirac<D>>{HamiltonDirac<D>{d}}, zd,
                                                             test::fixed_step_run(0.01, 1.0, 10, 1e-10, true), true,
                                                             "double pendulum dirac rk4");
  using Pp = PenaltyPendulum<double>;
  for (PenaltyConstraint c : {PenaltyConstraint::g, PenaltyConstraint::g1}) {
    const Pp pp = Pp::make(1.0, 1.0, 1.0, 1000.0, c);
    std::vector<Pp::State> zp;
    for (int j = 0; j < 2 * W; ++j) {
      const double a = 0.1 * j;  // on the circle, moving along it
      zp.push_back(Pp::State{{std::sin(a), -std::cos(a), 0.3 * std::cos(a), 0.3 * std::sin(a)}});
    }
    expect_packed_matches_scalar<2, W, ExplicitRk<Rk4Tableau>>(
        std::vector<PenaltyOde<Pp>>{PenaltyOde<Pp>{pp}}, zp, test::fixed_step_run(0.002, 0.2, 10, 1e-10, false), true,
        c == PenaltyConstraint::g ? "penalty G rk4" : "penalty G1 rk4");
  }
}

TEST(CpuLanes, ChainsAndOtherModelsMatchTheScalarPath) {
  if (cpu_isa_supported(CpuIsa::sse2)) other_models<2>();
  if (cpu_isa_supported(CpuIsa::avx2)) other_models<4>();
  if (cpu_isa_supported(CpuIsa::avx512)) other_models<8>();
}

// Implicit midpoint and Gauss2 in lanes (ImplicitRkLanes through the general lane path, as
// the engine runs them): each lane iterates to its own tolerance, so iteration counts,
// unconverged steps (max_iterations low enough that some steps hit it) and lost instances
// (ensemble.lost_unconverged) differ between lanes of one register, and still every lane
// is the scalar step's.
template <int W, class Tableau>
void implicit_lanes(const char* name) {
  constexpr int B = 2 * W;
  using Pm = Pendulum<double>;
  using Sys = HamiltonDirac<Pm>;
  using Inst = InstanceOf<Sys, NoReference<double, 4>>;
  const Sys sys{Pm{1.0, 1.0, 9.81}};
  const ImplicitRk<Tableau, double> scalar_method{1e-12, 16};
  const ImplicitRkLanes<Tableau, W> lanes(scalar_method);
  for (const bool lose : {false, true}) {
    RunParams<double> rp = test::fixed_step_run(0.08, 4.0, 5, 1e-10, true);
    rp.max_iterations = scalar_method.max_iterations;
    rp.lost_unconverged = lose;
    std::vector<Inst> packed(B), scalar(B);
    for (int j = 0; j < B; ++j) {
      const double a = 0.2 + 2.8 * j / (B - 1);  // from small swings to nearly over the top
      Inst in{};
      in.z = {{std::sin(a), -std::cos(a), 0.0, 0.0}};
      in.lost = int(LostReason::none);
      packed[static_cast<std::size_t>(j)] = scalar[static_cast<std::size_t>(j)] = in;
    }
    std::set<std::uint64_t> unconverged, iterations;
    for (index_t k = 1; k <= rp.samples; ++k) {
      for (int j = 0; j < B; ++j)
        advance_fixed_to_sample<1>(sys, scalar_method, rp, &scalar[static_cast<std::size_t>(j)], k);
      if constexpr (W == 8) {
        lanes_advance_avx512<B>(sys, lanes, rp, packed.data(), k, StepLimit{});
      } else if constexpr (W == 4) {
        lanes_advance_avx2<B>(sys, lanes, rp, packed.data(), k, StepLimit{});
      } else {
        lanes_advance_sse2<B>(sys, lanes, rp, packed.data(), k, StepLimit{});
      }
      for (int j = 0; j < B; ++j) {
        const Inst& a = packed[static_cast<std::size_t>(j)];
        const Inst& b = scalar[static_cast<std::size_t>(j)];
        const std::string at = std::string(name) + " W = " + std::to_string(W) + (lose ? ", lost_unconverged" : "") +
                               ", lane " + std::to_string(j) + ", sample " + std::to_string(k);
        ASSERT_EQ(std::memcmp(&a.z, &b.z, sizeof a.z), 0) << at;
        ASSERT_EQ(a.step, b.step) << at;
        ASSERT_EQ(a.lost, b.lost) << at;
        ASSERT_EQ(std::memcmp(&a.c, &b.c, sizeof(Counters)), 0) << at << ": counters";
      }
    }
    int lost = 0;
    for (const Inst& in : scalar) {
      unconverged.insert(in.c.unconverged_steps);
      iterations.insert(in.c.iterations);
      lost += in.lost != int(LostReason::none);
    }
    // The lanes' iteration counts and unconverged steps differed (else the masks were idle).
    EXPECT_GT(iterations.size(), 1u) << name;
    EXPECT_GT(unconverged.size(), 1u) << name << ": no lane or every lane hit max_iterations equally often";
    if (lose) {
      EXPECT_GT(lost, 0) << name;
      EXPECT_LT(lost, B) << name;
    }
  }
}

TEST(CpuLanes, ImplicitMethodsIterateEachLaneToItsOwnTolerance) {
  if (cpu_isa_supported(CpuIsa::sse2)) {
    implicit_lanes<2, Gauss1Tableau>("implicit midpoint");
    implicit_lanes<2, Gauss2Tableau>("gauss2");
  }
  if (cpu_isa_supported(CpuIsa::avx2)) {
    implicit_lanes<4, Gauss1Tableau>("implicit midpoint");
    implicit_lanes<4, Gauss2Tableau>("gauss2");
  }
  if (cpu_isa_supported(CpuIsa::avx512)) {
    implicit_lanes<8, Gauss1Tableau>("implicit midpoint");
    implicit_lanes<8, Gauss2Tableau>("gauss2");
  }
}

// ---- Whole ensembles: every instruction set against the scalar run --------------------

bool same(const SampleStats& a, const SampleStats& b) { return std::memcmp(&a, &b, sizeof(SampleStats)) == 0; }

void expect_same_results(const EnsembleResult& a, const EnsembleResult& b, const std::string& what) {
  ASSERT_EQ(a.series.size(), b.series.size()) << what;
  for (std::size_t k = 0; k < a.series.size(); ++k) ASSERT_TRUE(same(a.series[k], b.series[k])) << what << ", sample " << k;
  ASSERT_EQ(a.groups.size(), b.groups.size()) << what;
  for (std::size_t g = 0; g < a.groups.size(); ++g) {
    EXPECT_EQ(a.groups[g].instances, b.groups[g].instances) << what << ", group " << g;
    EXPECT_EQ(a.groups[g].lost, b.groups[g].lost) << what << ", group " << g;
    for (std::size_t k = 0; k < a.groups[g].series.size(); ++k)
      ASSERT_TRUE(same(a.groups[g].series[k], b.groups[g].series[k])) << what << ", group " << g << ", sample " << k;
  }
  EXPECT_EQ(std::memcmp(&a.totals, &b.totals, sizeof(Counters)), 0) << what << ": counters";
  EXPECT_EQ(std::memcmp(a.lost, b.lost, sizeof a.lost), 0) << what << ": lost";
  EXPECT_EQ(a.lost_examples, b.lost_examples) << what;
  EXPECT_EQ(a.instance0_state, b.instance0_state) << what;
  ASSERT_EQ(a.kept.metrics.size(), b.kept.metrics.size()) << what;
  EXPECT_EQ(std::memcmp(a.kept.metrics.data(), b.kept.metrics.data(), a.kept.metrics.size() * sizeof(double)), 0)
      << what << ": each instance's final metrics";
}

// The study on one thread with each instruction set forced; returns the scalar run.
EnsembleResult expect_every_isa_agrees(const Study& s, const std::string& what, const std::string& packed_note) {
  EnsembleResult scalar;
  {
    const ForcedIsa f("scalar");
    scalar = run_study_cpu(s, resolve(s), ensemble_spec(s, 1));
  }
  EXPECT_NE(scalar.device.find("scalar: one instance at a time"), std::string::npos) << scalar.device;
  for (int i = 1; i < cpu_isa_count; ++i) {
    const CpuIsa isa = CpuIsa(i);
    if (const char* why = cpu_isa_unavailable(isa)) {
      std::cout << "[ " << what << ": skipped " << cpu_isa_name(isa) << ": " << why << " ]\n";
      continue;
    }
    const ForcedIsa f(cpu_isa_name(isa));
    for (int threads : {1, 2}) {
      const EnsembleResult r = run_study_cpu(s, resolve(s), ensemble_spec(s, threads));
      const std::string at = what + " on " + cpu_isa_name(isa) + ", " + std::to_string(threads) + " threads";
      EXPECT_NE(r.device.find(std::string(cpu_isa_name(isa)) + ": "), std::string::npos) << at << ": " << r.device;
      EXPECT_NE(r.device.find(packed_note), std::string::npos) << at << ": " << r.device;
      expect_same_results(r, scalar, at);
    }
  }
  return scalar;
}

Study pendulum_study() {
  Study s;
  s.formulation = FormulationId::dirac;
  s.method = MethodId::rk4;
  s.size = 1000;  // not a multiple of 16: the blocks end in instances that step alone
  s.seed = 23;
  s.perturbation = 1e-2;
  s.h = 0.05;
  s.t_end = 4.0;
  s.sample_dt = 0.5;
  s.momentum = true;
  s.projection_tol = 1e-9;  // fires in some instances
  s.states = true;          // every instance's final metrics (EnsembleResult::kept)
  return s;
}

TEST(CpuIsaEnsembles, PendulumStatisticsAreTheSameOnEveryInstructionSet) {
  const EnsembleResult r = expect_every_isa_agrees(pendulum_study(), "pendulum dirac rk4", "registers of");
  EXPECT_GT(r.totals.momentum_projections, 0u);
}

// [parameters]: lengths drawn per instance, stepped in lanes each with its own system; the
// short pendulums blow up at h = 0.4 (lost instances mid-group), grouped by length.
TEST(CpuIsaEnsembles, ParameterEnsemblesWithLossesAreTheSameOnEveryInstructionSet) {
  Study s = pendulum_study();
  s.h = 0.4;
  s.t_end = 40.0;
  s.sample_dt = 4.0;
  s.vary[static_cast<std::size_t>(ParameterId::length)] = ParameterLaw{LawKind::log_uniform, 0.01, 2.0, {}};
  s.group_by = "length";
  s.group_bins = 4;
  const EnsembleResult r = expect_every_isa_agrees(s, "pendulum lengths", "registers of");
  EXPECT_GT(r.lost_total(), 10u) << "too few instances blew up to test the lanes' losses";
  EXPECT_LT(r.lost_total(), 900u) << "nearly every instance blew up";
}

TEST(CpuIsaEnsembles, ChainsAndGeneralPathSettingsAreTheSameOnEveryInstructionSet) {
  Study c;
  c.model_kind = ModelKind::chain;
  set_key(c, "model.atoms=7");
  c.formulation = FormulationId::dirac;
  c.method = MethodId::rk4;
  c.size = 100;
  c.h = 0.01;
  c.t_end = 0.5;
  c.sample_dt = 0.1;
  c.momentum = true;
  c.projection_tol = 1e-12;
  c.states = true;
  expect_every_isa_agrees(c, "chain 7 dirac rk4", "registers of");
  // Position projection: the general lane path (SSE2 pairs) on every instruction set.
  Study p = pendulum_study();
  p.position = true;
  p.formulation = FormulationId::naive;
  expect_every_isa_agrees(p, "pendulum naive rk4 with position projection", "SSE2 pairs");
  // Implicit midpoint and Gauss2 in lanes, some steps unconverged and their instances lost.
  Study m = pendulum_study();
  m.method = MethodId::midpoint;
  m.size = 200;
  m.h = 0.1;
  m.max_iterations = 14;
  m.lost_unconverged = true;
  const EnsembleResult mid = expect_every_isa_agrees(m, "pendulum dirac midpoint", "each its own fixed-point iterations");
  EXPECT_GT(mid.totals.unconverged_steps, 0u);
  EXPECT_GT(mid.lost[int(LostReason::unconverged)], 0u);
  m.method = MethodId::gauss2;
  expect_every_isa_agrees(m, "pendulum dirac gauss2", "each its own fixed-point iterations");
  // An adaptive method has no lanes (each instance its own steps).
  Study v = pendulum_study();
  v.method = MethodId::dopri5;
  v.size = 100;
  expect_every_isa_agrees(v, "pendulum dirac dopri5", "one instance at a time");
}

TEST(CpuIsa, TheWidestSupportedIsChosenAndBadValuesAreRefused) {
  ::unsetenv("CHENS_CPU_ISA");
  EXPECT_EQ(cpu_isa_in_use(), cpu_isa_widest());
  EXPECT_STREQ(cpu_isa_chosen_by(), "cpuid");
  EXPECT_TRUE(cpu_isa_supported(CpuIsa::scalar));
  EXPECT_TRUE(cpu_isa_in(cpu_isas_this_cpu_runs(), CpuIsa::sse2));  // the x86-64 baseline
  // Supported where the build compiled it too (CHENS_CPU_ISAS = widest leaves it out).
  EXPECT_EQ(cpu_isa_supported(CpuIsa::sse2), cpu_isa_compiled(CpuIsa::sse2));
  EXPECT_EQ(cpu_isa_width(CpuIsa::avx512), 8);
  {
    const CpuIsa forced = cpu_isa_compiled(CpuIsa::sse2) ? CpuIsa::sse2 : CpuIsa::scalar;
    const ForcedIsa f(cpu_isa_name(forced));
    EXPECT_EQ(cpu_isa_in_use(), forced);
    EXPECT_STREQ(cpu_isa_chosen_by(), "CHENS_CPU_ISA");
  }
  const ForcedIsa f("avx1024");
  try {
    (void)cpu_isa_in_use();
    ADD_FAILURE() << "avx1024 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("CHENS_CPU_ISA = \"avx1024\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("scalar, sse2, avx2 or avx512"), std::string::npos) << e.what();
  }
  // chens run refuses it with exit 2 before writing anything.
  test::TempDir dir;
  const test::CliResult r =
      test::run_cli({"run", "--single", "--set", "ensemble.size=8", "--set", "integrator.t_end=1", "--out", dir.str("out")});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("CHENS_CPU_ISA = \"avx1024\""), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.str("out")));
}

// The choice among the sets compiled and those the CPU runs (cpu_isa_choose, masks bit i for
// CpuIsa(i)), worked out by hand: the widest of both, a forced set either lacks refused
// naming which, scalar always there.
TEST(CpuIsa, TheChoiceTakesTheWidestSetBothTheBuildAndTheCpuHave) {
  EXPECT_EQ(cpu_isa_choose(nullptr, 0b1111, 0b0111).isa, CpuIsa::avx2);
  EXPECT_EQ(cpu_isa_choose("", 0b0111, 0b1111).isa, CpuIsa::avx2);
  EXPECT_EQ(cpu_isa_choose(nullptr, 0b0011, 0b1111).isa, CpuIsa::sse2);
  EXPECT_EQ(cpu_isa_choose(nullptr, 0b1001, 0b0111).isa, CpuIsa::scalar);
  EXPECT_EQ(cpu_isa_choose(nullptr, 0b0101, 0b0111).isa, CpuIsa::avx2);
  EXPECT_FALSE(cpu_isa_choose(nullptr, 0b1111, 0b0111).forced);
  const CpuIsaChoice scalar = cpu_isa_choose("scalar", 0b0000, 0b0011);
  EXPECT_EQ(scalar.isa, CpuIsa::scalar);
  EXPECT_TRUE(scalar.forced);
  EXPECT_EQ(scalar.error, "");
  EXPECT_EQ(cpu_isa_choose("sse2", 0b0011, 0b0011).isa, CpuIsa::sse2);

  const CpuIsaChoice left_out = cpu_isa_choose("avx2", 0b0011, 0b0111);
  EXPECT_EQ(left_out.error,
            "CHENS_CPU_ISA = \"avx2\": this build did not compile the lanes for avx2 (it has scalar, sse2; the CMake "
            "option CHENS_CPU_ISAS chooses them)");
  const CpuIsaChoice not_here = cpu_isa_choose("avx512", 0b1111, 0b0111);
  EXPECT_EQ(not_here.error, "CHENS_CPU_ISA = \"avx512\": this CPU cannot run avx512 (it supports up to avx2)");
  // A set neither has: the CPU's lack is what is said (no build would help).
  EXPECT_NE(cpu_isa_choose("avx512", 0b0111, 0b0111).error.find("this CPU cannot run avx512"), std::string::npos);
  EXPECT_NE(cpu_isa_choose("avx", 0b1111, 0b1111).error.find("is not an instruction set chens knows"), std::string::npos);
}

// This build's sets are the ones CMake resolved CHENS_CPU_ISAS to (the definition reaches the
// units), and the set in use is the widest of those the CPU runs, read apart from chens from
// the kernel's account of the CPU (/proc/cpuinfo).
TEST(CpuIsa, TheBuildsSetsAreCHENS_CPU_ISASAndTheCpusOwnAreReadFromTheKernel) {
  EXPECT_EQ(cpu_isas_compiled_names(), CHENS_TEST_CPU_ISAS_NAMES);
  const test::CliResult version = test::run_cli({"--version"});
  EXPECT_NE(version.out.find(std::string("CPU lanes compiled for ") + CHENS_TEST_CPU_ISAS_NAMES + " (CHENS_CPU_ISAS)"),
            std::string::npos)
      << version.out;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  bool flags_read = false, avx2 = false, avx512f = false;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0) {
      flags_read = true;
      std::istringstream words(line);
      for (std::string w; words >> w;) {
        avx2 = avx2 || w == "avx2";
        avx512f = avx512f || w == "avx512f";
      }
      break;
    }
  if (!flags_read) GTEST_SKIP() << "no /proc/cpuinfo flags line to read the CPU's sets from";
  const unsigned runs = 0b0011u | (avx2 ? 0b0100u : 0u) | (avx512f ? 0b1000u : 0u);
  EXPECT_EQ(cpu_isas_this_cpu_runs(), runs);
  ::unsetenv("CHENS_CPU_ISA");
  CpuIsa widest = CpuIsa::scalar;
  for (int i = 0; i < cpu_isa_count; ++i)
    if (((runs >> i) & 1u) && cpu_isa_compiled(CpuIsa(i))) widest = CpuIsa(i);
  EXPECT_EQ(cpu_isa_in_use(), widest) << "compiled: " << cpu_isas_compiled_names();
  for (int i = 0; i < cpu_isa_count; ++i) {
    const CpuIsa isa = CpuIsa(i);
    EXPECT_EQ(cpu_isa_supported(isa), ((runs >> i) & 1u) && cpu_isa_compiled(isa)) << cpu_isa_name(isa);
    EXPECT_EQ(cpu_isa_unavailable(isa) == nullptr, cpu_isa_supported(isa)) << cpu_isa_name(isa);
  }
}

}  // namespace
}  // namespace chens
