// The GPU's lean step loop (ensemble/lean_steps.hpp) against the general fixed-step driver
// (advance_fixed_to_sample, instance.hpp) on the CPU, where no compiler contracts anything:
// the same states, step indices, counters and lost steps, bit for bit, for every explicit
// method and pendulum formulation, the chain, projections that fire, the run's short last
// step, and instances that blow up mid-segment. Also the pieces it rests on: the integer
// finiteness test against all_finite, and the pendulum's written-out Hamilton-Dirac
// right-hand side (hamilton_dirac.hpp) against the generic one, the unit model included.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <chens/ensemble/instance.hpp>
#include <chens/ensemble/lean_steps.hpp>
#include <chens/formulations/baumgarte.hpp>
#include <chens/formulations/extended_hamiltonian.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/impetus_modified.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/formulations/total_hamiltonian.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/chain.hpp>
#include <chens/models/pendulum.hpp>

#include "support/fixed_step_run.hpp"
#include "support/random_states.hpp"

namespace chens {
namespace {

template <class Real, int S>
bool same_bits(const Vec<Real, S>& a, const Vec<Real, S>& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Every sample of one instance through both drivers, compared after each sample.
template <class System, class Method>
void expect_lean_matches_general(const System& sys, const RunParams<typename System::Real>& rp,
                                 const typename System::State& z0, const std::string& what) {
  using Real = typename System::Real;
  using Inst = InstanceOf<System, NoReference<Real, System::State::size>>;
  LeanPolicy policy{};
  ASSERT_TRUE(lean_policy_for<System>(rp, policy)) << what;
  Inst general{}, lean{};
  general.z = lean.z = z0;
  general.lost = lean.lost = int(LostReason::none);
  for (index_t k = 1; k <= rp.samples; ++k) {
    advance_fixed_to_sample<1>(sys, Method{}, rp, &general, k);
    if (lean.lost == int(LostReason::none)) {
      LeanStepResult<typename System::State> r;
      r.z = lean.z;
      r.step = lean.step;
      if (policy == LeanPolicy::momentum) {
        lean_advance_to_sample<LeanPolicy::momentum, false, System, Method>(sys, rp, k, r);
      } else {
        lean_advance_to_sample<LeanPolicy::none, false, System, Method>(sys, rp, k, r);
      }
      commit_lean<Method>(lean, r, rp);
    }
    ASSERT_TRUE(same_bits(lean.z, general.z)) << what << ", sample " << k;
    ASSERT_EQ(lean.step, general.step) << what << ", sample " << k;
    ASSERT_EQ(std::bit_cast<std::uint64_t>(static_cast<double>(lean.t)),
              std::bit_cast<std::uint64_t>(static_cast<double>(general.t)))
        << what << ", sample " << k;
    ASSERT_EQ(lean.lost, general.lost) << what << ", sample " << k;
    ASSERT_EQ(std::memcmp(&lean.c, &general.c, sizeof(Counters)), 0) << what << ", counters at sample " << k;
  }
}

template <class Tableau>
void pendulum_formulations(const char* method, double h) {
  using P = Pendulum<double>;
  std::mt19937_64 rng(test::default_seed + 70);
  SCOPED_TRACE("seed " + std::to_string(test::default_seed + 70));
  const P model{1.3, 0.8, 9.81};
  using M = ExplicitRk<Tableau>;
  for (int trial = 0; trial < 3; ++trial) {
    const P::State z = test::consistent_state(model, rng);
    // tol 1e-9: the projection fires now and then; momentum off for the impetus forms.
    const auto rp = test::fixed_step_run<double>(h, 1.234, 7, 1e-9, true);
    const auto rp_off = test::fixed_step_run<double>(h, 1.234, 7, 1e-9, false);
    const std::string w = std::string(method) + " trial " + std::to_string(trial);
    expect_lean_matches_general<HamiltonDirac<P>, M>(HamiltonDirac<P>{model}, rp, z, "dirac " + w);
    expect_lean_matches_general<HamiltonDirac<P>, M>(HamiltonDirac<P>{model}, rp_off, z, "dirac, no projection " + w);
    expect_lean_matches_general<Naive<P>, M>(Naive<P>{model}, rp, z, "naive " + w);
    expect_lean_matches_general<ExtendedHamiltonian<P>, M>(ExtendedHamiltonian<P>{model}, rp, z, "extended " + w);
    expect_lean_matches_general<TotalHamiltonian<P>, M>(TotalHamiltonian<P>{model}, rp, z, "total " + w);
    expect_lean_matches_general<ImpetusStriction<P>, M>(ImpetusStriction<P>{model}, rp, z, "impetus " + w);
    expect_lean_matches_general<ImpetusModified<P>, M>(ImpetusModified<P>{model}, rp, z, "impetus-modified " + w);
    Baumgarte<P> b{model};
    b.alpha = 2.0;
    b.beta = 3.0;
    expect_lean_matches_general<Baumgarte<P>, M>(b, rp, z, "baumgarte " + w);
  }
}

TEST(LeanSteps, PendulumFormulationsMatchTheGeneralDriverBitForBit) {
  pendulum_formulations<Rk4Tableau>("rk4", 0.05);
  pendulum_formulations<Rk2Tableau>("rk2", 0.02);
  pendulum_formulations<EulerTableau>("euler", 0.005);
}

TEST(LeanSteps, FloatPendulumMatchesTheGeneralDriver) {
  using P = Pendulum<float>;
  const P model{1, 1, 1};
  const auto rp = test::fixed_step_run<float>(0.05, 2.0, 9, 1e-5, true);
  expect_lean_matches_general<HamiltonDirac<P>, ExplicitRk<Rk4Tableau>>(HamiltonDirac<P>{model}, rp, {{1, 0, 0, -2}},
                                                                        "float dirac rk4");
}

TEST(LeanSteps, ChainMatchesTheGeneralDriver) {
  using C = Chain<double, 7>;
  const C c = C::uniform(1.0, 0.1);
  const auto rp = test::fixed_step_run<double>(0.02, 1.0, 10, 1e-10, true);
  expect_lean_matches_general<HamiltonDirac<C>, ExplicitRk<Rk4Tableau>>(HamiltonDirac<C>{c}, rp, C::default_initial(c),
                                                                        "chain dirac rk4");
  expect_lean_matches_general<Naive<C>, ExplicitRk<Rk2Tableau>>(Naive<C>{c}, rp, C::default_initial(c), "chain naive rk2");
}

// Instances that stop being finite mid-segment are lost at the same step, with the same
// frozen state and counters (a failed step's evaluations counted, as the general path does).
TEST(LeanSteps, BlowUpIsLostAtTheSameStep) {
  using P = Pendulum<double>;
  const P model{1, 1, 1};
  // The naive equations with a huge step leave the circle and diverge within a few steps;
  // Euler with h = 3 overflows to Inf after some dozens of steps.
  const auto rp = test::fixed_step_run<double>(3.0, 3000.0, 40, 1e-9, true);
  for (double x : {1.0, 0.3, 1e-3}) {
    const P::State z{{x, -std::sqrt(std::max(0.0, 1 - x * x)), 2.0, 1.0}};
    expect_lean_matches_general<Naive<P>, ExplicitRk<EulerTableau>>(Naive<P>{model}, rp, z,
                                                                    "naive euler h = 3, x = " + std::to_string(x));
    expect_lean_matches_general<HamiltonDirac<P>, ExplicitRk<Rk4Tableau>>(HamiltonDirac<P>{model}, rp, z,
                                                                          "dirac rk4 h = 3, x = " + std::to_string(x));
  }
  // At the origin the Gram factor m / |q|^2 is infinite at the first stage.
  expect_lean_matches_general<HamiltonDirac<P>, ExplicitRk<Rk4Tableau>>(HamiltonDirac<P>{model}, rp, {{0, 0, 1, 0}},
                                                                        "dirac at the origin");
  // And the check sees it: the general path lost these (else the test proves nothing).
  using Inst = InstanceOf<HamiltonDirac<P>, NoReference<double, 4>>;
  Inst in{};
  in.z = {{0, 0, 1, 0}};
  advance_fixed_to_sample<1>(HamiltonDirac<P>{model}, ExplicitRk<Rk4Tableau>{}, rp, &in, 1);
  EXPECT_EQ(in.lost, int(LostReason::non_finite));
}

TEST(LeanSteps, PolicyRefusesWhatItDoesNotModel) {
  using Sys = HamiltonDirac<Pendulum<double>>;
  RunParams<double> rp;
  LeanPolicy p{};
  rp.project_momentum = true;
  EXPECT_TRUE(lean_policy_for<Sys>(rp, p));
  EXPECT_EQ(p, LeanPolicy::momentum);
  rp.project_momentum = false;
  EXPECT_TRUE(lean_policy_for<Sys>(rp, p));
  EXPECT_EQ(p, LeanPolicy::none);
  rp.project_position = true;
  EXPECT_FALSE(lean_policy_for<Sys>(rp, p));
  rp.project_position = false;
  rp.projection_every = 3;
  EXPECT_FALSE(lean_policy_for<Sys>(rp, p));
  rp.projection_every = 1;
  rp.stage_projection = true;
  EXPECT_FALSE(lean_policy_for<Sys>(rp, p));
  rp.stage_projection = false;
  rp.steps_per_sample = index_t(1) << 33;
  EXPECT_FALSE(lean_policy_for<Sys>(rp, p));
  // The impetus formulations never project momenta; an impetus reset needs the general path.
  RunParams<double> ri;
  ri.project_momentum = true;
  EXPECT_TRUE(lean_policy_for<ImpetusStriction<Pendulum<double>>>(ri, p));
  EXPECT_EQ(p, LeanPolicy::none);
  ri.impetus_reset = 1e-3;
  EXPECT_FALSE(lean_policy_for<ImpetusStriction<Pendulum<double>>>(ri, p));
}

template <class Real>
void finite_bits_agree() {
  const Real specials[] = {Real(0),
                           -Real(0),
                           Real(1),
                           -Real(2.5),
                           std::numeric_limits<Real>::max(),
                           -std::numeric_limits<Real>::max(),
                           std::numeric_limits<Real>::min(),
                           std::numeric_limits<Real>::denorm_min(),
                           std::numeric_limits<Real>::infinity(),
                           -std::numeric_limits<Real>::infinity(),
                           std::numeric_limits<Real>::quiet_NaN(),
                           -std::numeric_limits<Real>::quiet_NaN(),
                           std::numeric_limits<Real>::signaling_NaN()};
  for (Real a : specials)
    for (Real b : specials) {
      const Vec<Real, 2> v{{a, b}};
      EXPECT_EQ(finite_bits(v), all_finite(v)) << a << ", " << b;
    }
}

TEST(LeanSteps, IntegerFinitenessTestIsAllFinite) {
  finite_bits_agree<double>();
  finite_bits_agree<float>();
}

// hamilton_dirac.hpp's pendulum specialisation performs the generic operations in the generic
// order: on the host (no contraction) its values are the generic ones bit for bit, for general
// parameters and for the unit model.
TEST(LeanSteps, PendulumDiracSpecialisationIsTheGenericFormula) {
  std::mt19937_64 rng(test::default_seed + 71);
  SCOPED_TRACE("seed " + std::to_string(test::default_seed + 71));
  std::uniform_real_distribution<double> par(0.3, 3.0);
  for (int trial = 0; trial < 200; ++trial) {
    const Pendulum<double> model{par(rng), par(rng), par(rng)};
    const Pendulum<double>::State z = trial % 2 ? test::consistent_state(model, rng) : test::inconsistent_state(model, rng);
    Pendulum<double>::State generic, special;
    hamilton_dirac_rhs(model, z, generic);
    HamiltonDirac<Pendulum<double>>{model}.rhs(z, special);
    ASSERT_TRUE(same_bits(generic, special)) << "trial " << trial;
    // m = l = g = 1: the unit model computes the general model's values.
    const Pendulum<double> one{1, 1, 1};
    Pendulum<double>::State general_one, unit;
    HamiltonDirac<Pendulum<double>>{one}.rhs(z, general_one);
    HamiltonDirac<Pendulum<double, true>>{one.as_unit()}.rhs(z, unit);
    ASSERT_TRUE(same_bits(general_one, unit)) << "trial " << trial;
    Pendulum<double>::State generic_one;
    hamilton_dirac_rhs(one, z, generic_one);
    ASSERT_TRUE(same_bits(generic_one, unit)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace chens
