// The floating-point operation counts stated in bench/flop_counts.hpp, counted: chens' own
// per-instance code is instantiated with the counting scalar of
// tests/support/flop_counter.hpp (Real = test::Counted), which tallies each operation as
// written and as a distinct operation (common subexpressions and exact identities removed),
// and run once for
//   - one Hamilton-Dirac right-hand side (hamilton_dirac.hpp, 002 eq. 31),
//   - one classical RK4 step, ExplicitRk<Rk4Tableau>::step, which includes all_finite of
//     the new state (StepStatus::finite); the check is counted alone and subtracted,
//   - the momentum projection's trigger max|psi| > tol (apply_projections, 002 §11) with a
//     tolerance no residual exceeds, and with one every residual exceeds, so that the
//     projection (002 eq. 66/68) runs: the difference is what firing adds,
//   - one step of the per-instance step loop, advance_fixed_to_sample (ensemble/instance.hpp;
//     each GPU thread runs it through advance_to_sample, the CPU backend with B lanes), with
//     the projection enabled: its count is the sum of the parts above,
// for the pendulum and for the seven-atom chain, at several states (on and off the
// constraint manifold: the counts do not depend on the data). Every count must equal the
// stated one exactly, and every counted result must equal the Real = double result bit for
// bit, so that the counting type cannot have changed (or skipped) any operation. The bitwise
// comparison assumes that this file is compiled without contracting a * b + c into fused
// multiply-adds (tests/CMakeLists.txt: -ffp-contract=off), which would otherwise be free to
// fuse differently in the two instantiations.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <chens/ensemble/counters.hpp>
#include <chens/ensemble/instance.hpp>
#include <chens/ensemble/lean_steps.hpp>
#include <chens/ensemble/run_params.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/chain.hpp>
#include <chens/models/pendulum.hpp>
#include <chens/projections/momentum.hpp>
#include <chens/projections/policy.hpp>

#include "flop_counts.hpp"
#include "support/flop_counter.hpp"
#include "support/random_states.hpp"

namespace chens {
namespace {

using bench::FlopCount;
using test::Counted;
using test::count_ops;
using test::OpCounts;
using test::OpTally;
using Rk4 = ExplicitRk<Rk4Tableau>;

// ---- counting and comparing ---------------------------------------------------------------

FlopCount as_flop_count(const OpTally& t) {
  return FlopCount{static_cast<int>(t.add + t.sub), static_cast<int>(t.mul),  static_cast<int>(t.fma),
                   static_cast<int>(t.div),         static_cast<int>(t.sqrt), static_cast<int>(t.cmp)};
}

std::string describe(const FlopCount& f) {
  return "{adds " + std::to_string(f.adds) + ", muls " + std::to_string(f.muls) + ", fmas " + std::to_string(f.fmas) +
         ", divs " + std::to_string(f.divs) + ", sqrts " + std::to_string(f.sqrts) + ", compares " +
         std::to_string(f.compares) + "; total " + std::to_string(f.total()) + " flops}";
}

// Counted equals stated, field by field; fabs is not in the convention's list, so none may
// occur (sign flips are not compared: max|psi| flips signs depending on the data).
::testing::AssertionResult same_counts(const OpTally& counted, const FlopCount& stated) {
  if (counted.fabs == 0 && as_flop_count(counted) == stated) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "counted " << describe(as_flop_count(counted)) << " (fabs " << counted.fabs
                                       << "), stated " << describe(stated);
}

void print_counts(const std::string& what, const OpCounts& c) {
  std::printf("[ flops    ] %-36s distinct   %s\n", what.c_str(), describe(as_flop_count(c.distinct.per_step)).c_str());
  std::printf("[ flops    ] %-36s as written %s\n", "", describe(as_flop_count(c.as_written.per_step)).c_str());
  std::printf("[ flops    ] %-36s invariant  %s (distinct)\n", "", describe(as_flop_count(c.distinct.invariant)).c_str());
}

template <int S>
Vec<Counted, S> counted_state(const Vec<double, S>& z) {
  Vec<Counted, S> r;
  for (int i = 0; i < S; ++i) r[i] = Counted::input(z[i]);
  return r;
}

template <int S>
::testing::AssertionResult same_bits(const Vec<Counted, S>& counted, const Vec<double, S>& plain) {
  for (int i = 0; i < S; ++i) {
    if (std::bit_cast<std::uint64_t>(counted[i].v) != std::bit_cast<std::uint64_t>(plain[i])) {
      return ::testing::AssertionFailure() << "component " << i << ": counted " << counted[i].v << ", double " << plain[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// The same model over Counted. Its parameters are run-time values to the compiler (read
// from the study), so they are parameters, never literals that identities could fold.
Pendulum<Counted> counted_model(const Pendulum<double>& m) {
  return Pendulum<Counted>{Counted::parameter(m.m), Counted::parameter(m.l), Counted::parameter(m.g)};
}
template <int N>
Chain<Counted, N> counted_model(const Chain<double, N>& c) {
  Chain<Counted, N> r;
  for (int i = 0; i < N; ++i) r.w[i] = Counted::parameter(c.w[i]);
  r.L = Counted::parameter(c.L);
  r.eps = Counted::parameter(c.eps);
  return r;
}

// Run parameters for a run of exactly one step. projection_tol: 1e300, which no residual
// exceeds (only the check runs), or -1, which every residual exceeds (the projection runs
// even where psi is exactly 0 in floating point).
template <class Real>
RunParams<Real> one_step_run(Real h, Real projection_tol) {
  RunParams<Real> rp;
  rp.h = h;
  rp.last_h = h;
  rp.t_end = h;
  rp.total_steps = 1;
  rp.steps_per_sample = 1;
  rp.samples = 1;
  rp.fixed_step = true;
  rp.project_momentum = true;
  rp.projection_tol = projection_tol;
  rp.reference = false;
  return rp;
}
constexpr double kNeverExceeded = 1e300, kAlwaysExceeded = -1.0;

// One step of advance_fixed_to_sample with B = 1, as each GPU thread runs it.
template <class System>
typename System::State driver_step(const System& sys, const RunParams<typename System::Real>& rp,
                                   const typename System::State& z, Counters& c) {
  using Real = typename System::Real;
  InstanceOf<System, NoReference<Real, System::State::size>> in{};
  in.z = z;
  in.step = 0;
  in.lost = int(LostReason::none);
  advance_fixed_to_sample<1>(sys, Rk4{}, rp, &in, 1);
  EXPECT_EQ(in.step, 1);
  EXPECT_EQ(in.lost, int(LostReason::none));
  c = in.c;
  return in.z;
}

// ---- the kernels --------------------------------------------------------------------------

// One benchmarked kernel: the model, states to count at, and the stated counts.
template <class Model>
struct Kernel {
  const char* name;
  Model model;
  std::vector<typename Model::State> states;
  double h;
  FlopCount rhs, rhs_as_written;
  FlopCount rk4_step, rk4_step_as_written;
  FlopCount finite_check, finite_check_as_written;
  FlopCount psi_check, psi_check_as_written;
  FlopCount projection, projection_as_written;
  FlopCount instance_step, instance_step_as_written, instance_step_invariant;
};

#define CHENS_STATED(k, prefix)                                                      \
  do {                                                                               \
    k.rhs = bench::prefix##_dirac_rhs;                                               \
    k.rhs_as_written = bench::prefix##_dirac_rhs_as_written;                         \
    k.rk4_step = bench::prefix##_dirac_rk4_step;                                     \
    k.rk4_step_as_written = bench::prefix##_dirac_rk4_step_as_written;               \
    k.finite_check = bench::prefix##_finite_check;                                   \
    k.finite_check_as_written = bench::prefix##_finite_check_as_written;             \
    k.psi_check = bench::prefix##_psi_check;                                         \
    k.psi_check_as_written = bench::prefix##_psi_check_as_written;                   \
    k.projection = bench::prefix##_momentum_projection;                              \
    k.projection_as_written = bench::prefix##_momentum_projection_as_written;        \
    k.instance_step = bench::prefix##_dirac_rk4_instance_step;                       \
    k.instance_step_as_written = bench::prefix##_dirac_rk4_instance_step_as_written; \
    k.instance_step_invariant = bench::prefix##_dirac_rk4_instance_step_invariant;   \
  } while (false)

// bench_gpu_instances: m = l = g = 1; general values here so that no product is exact by
// accident (the counts do not depend on them). States on and off the constraint manifold.
Kernel<Pendulum<double>> pendulum_kernel() {
  Kernel<Pendulum<double>> k{};
  k.name = "pendulum";
  k.model = Pendulum<double>{3.0, 0.6, 9.81};
  std::mt19937_64 rng(test::default_seed + 40);
  k.states = {test::consistent_state(k.model, rng), test::inconsistent_state(k.model, rng),
              test::inconsistent_state(k.model, rng)};
  k.h = 0.01;
  CHENS_STATED(k, pendulum);
  return k;
}

// bench_gpu_instances: Chain<double, 7>::uniform(1, 0.1), default initial data. Here unequal
// masses, and the default data moved by up to 1e-2 per component (off the manifold).
Kernel<Chain<double, 7>> chain7_kernel() {
  using Model = Chain<double, 7>;
  Kernel<Model> k{};
  k.name = "chain N = 7";
  k.model = Model::uniform(1.0, 0.1);
  for (int i = 0; i < 7; ++i) k.model.w[i] = 1.0 / (1.0 + 0.15 * i);
  const Model::State z0 = Model::default_initial(k.model);
  k.states = {z0};
  std::mt19937_64 rng(test::default_seed + 41);
  std::uniform_real_distribution<double> u(-1e-2, 1e-2);
  for (int s = 0; s < 2; ++s) {
    Model::State z = z0;
    for (int i = 0; i < Model::state_size; ++i) z[i] += u(rng);
    k.states.push_back(z);
  }
  k.h = 0.01;
  CHENS_STATED(k, chain7);
  return k;
}
#undef CHENS_STATED

template <class Model>
void check_rhs(const Kernel<Model>& k) {
  const HamiltonDirac<Model> sys{k.model};
  const HamiltonDirac<decltype(counted_model(k.model))> sys_c{counted_model(k.model)};
  for (std::size_t s = 0; s < k.states.size(); ++s) {
    SCOPED_TRACE(std::string(k.name) + ", state " + std::to_string(s));
    typename Model::State dz;
    sys.rhs(k.states[s], dz);
    const auto zc = counted_state(k.states[s]);
    decltype(counted_state(dz)) dzc;
    const OpCounts c = count_ops([&] { sys_c.rhs(zc, dzc); });
    if (s == 0) print_counts(std::string(k.name) + ": Dirac rhs", c);
    EXPECT_TRUE(same_counts(c.distinct.per_step, k.rhs));
    EXPECT_TRUE(same_counts(c.as_written.per_step, k.rhs_as_written));
    EXPECT_TRUE(same_bits(dzc, dz));
  }
}

template <class Model>
void check_rk4_step(const Kernel<Model>& k) {
  const HamiltonDirac<Model> sys{k.model};
  const HamiltonDirac<decltype(counted_model(k.model))> sys_c{counted_model(k.model)};
  for (std::size_t s = 0; s < k.states.size(); ++s) {
    SCOPED_TRACE(std::string(k.name) + ", state " + std::to_string(s));
    typename Model::State zn;
    const StepStatus st = Rk4{}.step(sys, k.states[s], k.h, zn);
    const auto zc = counted_state(k.states[s]);
    decltype(counted_state(zn)) znc;
    StepStatus st_c;
    const OpCounts with_check = count_ops([&] { st_c = Rk4{}.step(sys_c, zc, Counted::input(k.h), znc); });
    const OpCounts check = count_ops([&] { EXPECT_TRUE(all_finite(znc)); });
    const OpCounts step = with_check - check;
    if (s == 0) {
      print_counts(std::string(k.name) + ": RK4 step", step);
      print_counts(std::string(k.name) + ": all_finite(z_new)", check);
    }
    EXPECT_TRUE(same_counts(step.distinct.per_step, k.rk4_step));
    EXPECT_TRUE(same_counts(step.as_written.per_step, k.rk4_step_as_written));
    EXPECT_TRUE(same_counts(check.distinct.per_step, k.finite_check));
    EXPECT_TRUE(same_counts(check.as_written.per_step, k.finite_check_as_written));
    // The step is four right-hand sides and the stage arithmetic: 3 stage inputs and the
    // 4-term update, each an axpy over the state (one add, one mul per component), and the
    // coefficient products h a_ij, h b_i: 7 as written, 3 distinct (h/2, h/3, h/6; h * 1 = h).
    constexpr int S = Model::state_size;
    EXPECT_EQ(k.rk4_step, (4 * k.rhs + FlopCount{7 * S, 7 * S + 3, 0, 0, 0, 0}));
    EXPECT_EQ(k.rk4_step_as_written, (4 * k.rhs_as_written + FlopCount{7 * S, 7 * S + 7, 0, 0, 0, 0}));
    // all_finite: x == x and (x - x) == (x - x) per component, x - x written twice.
    EXPECT_EQ(k.finite_check, (FlopCount{S, 0, 0, 0, 0, 2 * S}));
    EXPECT_EQ(k.finite_check_as_written, (FlopCount{2 * S, 0, 0, 0, 0, 2 * S}));
    EXPECT_TRUE(same_bits(znc, zn));
    EXPECT_EQ(st_c.finite, st.finite);
    EXPECT_EQ(st_c.rhs_evals, 4);
  }
}

template <class Model>
void check_projection(const Kernel<Model>& k) {
  const HamiltonDirac<decltype(counted_model(k.model))> sys_c{counted_model(k.model)};
  for (std::size_t s = 0; s < k.states.size(); ++s) {
    SCOPED_TRACE(std::string(k.name) + ", state " + std::to_string(s));
    // The trigger alone: apply_projections with a tolerance no residual exceeds.
    const RunParams<Counted> rp_check = one_step_run(Counted::input(k.h), Counted::parameter(kNeverExceeded));
    auto zc = counted_state(k.states[s]);
    Counters cnt_check{};
    bool changed = true;
    const OpCounts check = count_ops([&] { changed = apply_projections(sys_c, rp_check, zc, cnt_check); });
    EXPECT_FALSE(changed);
    EXPECT_EQ(cnt_check.momentum_projections, 0u);
    EXPECT_TRUE(same_bits(zc, k.states[s]));
    EXPECT_TRUE(same_counts(check.distinct.per_step, k.psi_check));
    EXPECT_TRUE(same_counts(check.as_written.per_step, k.psi_check_as_written));

    // The trigger and the projection; what firing adds is the projection, with the psi of
    // the check reused (distinct), or recomputed (as written: momentum_project alone).
    const RunParams<Counted> rp_fire = one_step_run(Counted::input(k.h), Counted::parameter(kAlwaysExceeded));
    auto zp = counted_state(k.states[s]);
    Counters cnt_fire{};
    const OpCounts fire = count_ops([&] { changed = apply_projections(sys_c, rp_fire, zp, cnt_fire); });
    EXPECT_TRUE(changed);
    EXPECT_EQ(cnt_fire.momentum_projections, 1u);
    const OpCounts projection = fire - check;
    auto zm = counted_state(k.states[s]);
    const OpCounts alone = count_ops([&] { momentum_project(sys_c.model, zm); });
    if (s == 0) {
      print_counts(std::string(k.name) + ": |psi| check", check);
      print_counts(std::string(k.name) + ": momentum projection", projection);
    }
    EXPECT_TRUE(same_counts(projection.distinct.per_step, k.projection));
    EXPECT_TRUE(same_counts(projection.as_written.per_step, k.projection_as_written));
    EXPECT_TRUE(same_counts(alone.as_written.per_step, k.projection_as_written));

    typename Model::State z = k.states[s];
    momentum_project(k.model, z);
    EXPECT_TRUE(same_bits(zp, z));
    EXPECT_TRUE(same_bits(zm, z));
  }
}

// One step of advance_fixed_to_sample, the loop each GPU thread runs: the RK4 step, its
// finiteness check and the projection trigger; when the projection fires, the projection
// and a second finiteness check (distinct: of the momenta only, the positions are unchanged).
template <class Model>
void check_instance_step(const Kernel<Model>& k) {
  const HamiltonDirac<Model> sys{k.model};
  const HamiltonDirac<decltype(counted_model(k.model))> sys_c{counted_model(k.model)};
  EXPECT_EQ(k.instance_step, k.rk4_step + k.finite_check + k.psi_check);
  EXPECT_EQ(k.instance_step_as_written, k.rk4_step_as_written + k.finite_check_as_written + k.psi_check_as_written);
  constexpr int dof = Model::dof;
  const FlopCount momenta_finite_check{dof, 0, 0, 0, 0, 2 * dof};
  for (std::size_t s = 0; s < k.states.size(); ++s) {
    SCOPED_TRACE(std::string(k.name) + ", state " + std::to_string(s));
    for (const bool fires : {false, true}) {
      SCOPED_TRACE(fires ? "projection fires" : "projection checked, not firing");
      const double tol = fires ? kAlwaysExceeded : kNeverExceeded;
      Counters cnt, cnt_c;
      const auto zn = driver_step(sys, one_step_run(k.h, tol), k.states[s], cnt);
      const RunParams<Counted> rp_c = one_step_run(Counted::input(k.h), Counted::parameter(tol));
      const auto zc = counted_state(k.states[s]);
      decltype(counted_state(zn)) znc;
      const OpCounts c = count_ops([&] { znc = driver_step(sys_c, rp_c, zc, cnt_c); });
      if (s == 0) print_counts(std::string(k.name) + (fires ? ": loop step, projecting" : ": loop step"), c);
      EXPECT_TRUE(same_counts(c.distinct.per_step,
                              fires ? k.instance_step + k.projection + momenta_finite_check : k.instance_step));
      EXPECT_TRUE(same_counts(c.as_written.per_step,
                              fires ? k.instance_step_as_written + k.projection_as_written + k.finite_check_as_written
                                    : k.instance_step_as_written));
      EXPECT_TRUE(same_counts(c.distinct.invariant, k.instance_step_invariant));
      EXPECT_EQ(cnt_c.steps, 1u);
      EXPECT_EQ(cnt_c.momentum_projections, fires ? 1u : 0u);
      EXPECT_EQ(cnt.momentum_projections, cnt_c.momentum_projections);
      EXPECT_TRUE(same_bits(znc, zn));
    }
  }
}

// ---- tests --------------------------------------------------------------------------------

TEST(FlopCounts, CountingTypeTalliesOperations) {
  const Counted a = Counted::input(1.5), b = Counted::input(2.0), m = Counted::parameter(4.0);
  Counted r;
  const OpCounts c = count_ops([&] {
    using std::sqrt;
    const Counted t = a * b;
    // b * a repeats a * b; 1 / m has invariant operands only; * 1 and - 0 change nothing.
    r = sqrt((t + b * a) / m - Counted(0.0)) * Counted(1.0) + (Counted(1) / m);
    EXPECT_TRUE(r < a);
    r = -r;
  });
  EXPECT_EQ(r.v, -(std::sqrt((1.5 * 2.0 + 2.0 * 1.5) / 4.0 - 0.0) * 1.0 + 1.0 / 4.0));
  EXPECT_TRUE(same_counts(c.as_written.per_step, FlopCount{3, 3, 0, 1, 1, 1}));
  EXPECT_TRUE(same_counts(c.distinct.per_step, FlopCount{2, 1, 0, 1, 1, 1}));
  EXPECT_TRUE(same_counts(c.distinct.invariant, FlopCount{0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(c.distinct.per_step.neg, 1);
  EXPECT_TRUE(r.per_step);
  EXPECT_FALSE((Counted(2) * m).per_step);
}

TEST(FlopCounts, PendulumDiracRhs) { check_rhs(pendulum_kernel()); }
TEST(FlopCounts, PendulumDiracRk4Step) { check_rk4_step(pendulum_kernel()); }
TEST(FlopCounts, PendulumMomentumProjection) { check_projection(pendulum_kernel()); }
TEST(FlopCounts, PendulumKernelLoopStep) { check_instance_step(pendulum_kernel()); }

TEST(FlopCounts, Chain7DiracRhs) { check_rhs(chain7_kernel()); }
TEST(FlopCounts, Chain7DiracRk4Step) { check_rk4_step(chain7_kernel()); }
TEST(FlopCounts, Chain7MomentumProjection) { check_projection(chain7_kernel()); }
TEST(FlopCounts, Chain7KernelLoopStep) { check_instance_step(chain7_kernel()); }

// Chains of any size (bench/flop_counts.hpp's chain_* formulas, the rates of the thread-group
// kernels, issue 20): the one-thread code counted for N = 7, 16, 32, 64 -- the right-hand
// side, an RK4 step's arithmetic (ExplicitRk::advance, which the lean loop runs) and the lean
// loop's projection check -- against the formulas, non-uniform masses, off the manifold.
template <int N>
void check_chain_formulas() {
  SCOPED_TRACE("N = " + std::to_string(N));
  Chain<double, N> c = Chain<double, N>::uniform(1.0, 0.1);
  for (int i = 0; i < N; ++i) c.w[i] = 1.0 / (1.0 + 0.15 * i);
  const auto z0 = Chain<double, N>::default_initial(c);
  std::mt19937_64 rng(test::default_seed + 42 + N);
  std::uniform_real_distribution<double> u(-1e-2, 1e-2);
  typename Chain<double, N>::State z = z0;
  for (int i = 0; i < 4 * N; ++i) z[i] += u(rng);
  const auto cc = counted_model(c);
  const HamiltonDirac<Chain<Counted, N>> sys_c{cc};
  const auto zc = counted_state(z);
  decltype(counted_state(z)) dzc, znc;
  const OpCounts rhs = count_ops([&] { sys_c.rhs(zc, dzc); });
  EXPECT_TRUE(same_counts(rhs.distinct.per_step, bench::chain_dirac_rhs(N)));
  const OpCounts step = count_ops([&] { Rk4::advance(sys_c, zc, Counted::input(0.01), znc); });
  EXPECT_TRUE(same_counts(step.distinct.per_step, bench::chain_dirac_rk4_step(N)));
  bool over = true;
  const OpCounts check = count_ops([&] { over = any_exceeds(cc.psi(znc), Counted::parameter(1e300)); });
  EXPECT_FALSE(over);
  // fabs is a sign operation (0 flops) here: any_exceeds compares |psi_a| once per bond.
  EXPECT_TRUE(as_flop_count(check.distinct.per_step) == bench::chain_psi_check(N))
      << "counted " << describe(as_flop_count(check.distinct.per_step)) << ", stated "
      << describe(bench::chain_psi_check(N));
  // The counted computation is the double one.
  typename Chain<double, N>::State zn;
  Rk4::advance(HamiltonDirac<Chain<double, N>>{c}, z, 0.01, zn);
  EXPECT_TRUE(same_bits(znc, zn));
}

TEST(FlopCounts, ChainsOfEverySizeFollowTheFormulas) {
  check_chain_formulas<7>();
  check_chain_formulas<16>();
  check_chain_formulas<32>();
  check_chain_formulas<64>();
}

}  // namespace
}  // namespace chens
