// Chain molecules (002 §7) beyond the right-hand side (test_chain_formulations.cpp):
// the exact motion of a two-atom chain (a free rigid rotor) against every formulation and
// method, convergence orders on the seven-atom chain, RATTLE's properties, the numerical
// reference, perturbed initial data and ensemble runs through `chens run`.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <chens/ensemble/instance.hpp>
#include <chens/ensemble/perturbation.hpp>
#include <chens/formulations/constrained.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/rattle.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/chain.hpp>
#include <chens/reference/numerical.hpp>

#include "cli/cli.hpp"
#include "support/cli_runner.hpp"
#include "dispatch/run_study.hpp"
#include "study/study.hpp"
#include "support/integrate.hpp"
#include "support/temp_dir.hpp"

namespace chens {
namespace {

using Rotor = Chain<double, 2>;
using Hexagon = Chain<double, 7>;

// Two atoms of masses m0, m1 at distance L: the bond force and the Lennard-Jones force
// between them are both central, so the centre of mass moves uniformly and the bond
// turns at the constant rate omega = L_z / (mu L^2), mu = m0 m1 / (m0 + m1).
struct ExactRotor {
  double m0 = 1.0, m1 = 3.0, L = 1.5;
  double cx0 = 0.3, cy0 = -0.2, ux = 0.05, uy = -0.02;  // centre of mass and its velocity
  double angle0 = 0.7, omega = 0.9;

  Rotor model() const {
    Rotor c = Rotor::uniform(L, 0.1);
    c.w[0] = 1.0 / m0;
    c.w[1] = 1.0 / m1;
    return c;
  }
  Rotor::State at(double t) const {
    const double M = m0 + m1, a = angle0 + omega * t;
    const double rx = L * std::cos(a), ry = L * std::sin(a);  // q1 - q0
    const double vx = -omega * ry, vy = omega * rx;           // its rate
    const double cx = cx0 + ux * t, cy = cy0 + uy * t;
    return Rotor::State{{cx - m1 / M * rx, cy - m1 / M * ry, cx + m0 / M * rx, cy + m0 / M * ry, m0 * (ux - m1 / M * vx),
                         m0 * (uy - m1 / M * vy), m1 * (ux + m0 / M * vx), m1 * (uy + m0 / M * vy)}};
  }
};

template <class System>
double error_at(const System& sys, const Rotor::State& z, const ExactRotor& ex, double T) {
  const auto d = sys.physical(z) - ex.at(T);
  return std::sqrt(dot(d, d));
}

// Errors against the exact rotor at T = 3 for h = T/n; returns the fitted order.
template <class System, class Method>
double rotor_order(const System& sys, const Method& method, double* finest_error = nullptr) {
  const ExactRotor ex;
  const double T = 3.0;
  std::vector<double> hs, errs;
  for (int n : {30, 60, 120, 240}) {
    const auto z = test::integrate_fixed(sys, method, ex.at(0), T, n);
    hs.push_back(T / n);
    errs.push_back(error_at(sys, z, ex, T));
  }
  if (finest_error) *finest_error = errs.back();
  return test::loglog_slope(hs, errs);
}

TEST(ChainRotor, InitialDataAreConsistent) {
  const ExactRotor ex;
  const Rotor m = ex.model();
  const auto z = ex.at(0.4);
  EXPECT_NEAR(m.phi(Rotor::q_of(z))[0], 0.0, 1e-15);
  EXPECT_NEAR(m.psi(z)[0], 0.0, 1e-15);
  const auto I = m.momentum_integrals(z);
  EXPECT_NEAR(I[0], (ex.m0 + ex.m1) * ex.ux, 1e-15);
  const double mu = ex.m0 * ex.m1 / (ex.m0 + ex.m1);
  // L_z = M (c x u) + mu L^2 omega.
  const double c_cross_u = (ex.cx0 + ex.ux * 0.4) * ex.uy - (ex.cy0 + ex.uy * 0.4) * ex.ux;
  EXPECT_NEAR(I[2], (ex.m0 + ex.m1) * c_cross_u + mu * ex.L * ex.L * ex.omega, 1e-14);
}

TEST(ChainRotor, ExplicitMethodsConvergeToTheExactMotionAtTheirOrder) {
  const Rotor m = ExactRotor{}.model();
  double e = 0;
  EXPECT_NEAR(rotor_order(HamiltonDirac<Rotor>{m}, ExplicitRk<Rk4Tableau>{}, &e), 4.0, 0.2);
  EXPECT_LT(e, 1e-8);
  EXPECT_NEAR(rotor_order(Naive<Rotor>{m}, ExplicitRk<Rk4Tableau>{}, &e), 4.0, 0.2);
  EXPECT_LT(e, 1e-8);
  EXPECT_NEAR(rotor_order(ImpetusStriction<Rotor>{m}, ExplicitRk<Rk4Tableau>{}, &e), 4.0, 0.2);
  EXPECT_LT(e, 1e-8);
  EXPECT_NEAR(rotor_order(HamiltonDirac<Rotor>{m}, ExplicitRk<Rk2Tableau>{}), 2.0, 0.2);
  EXPECT_NEAR(rotor_order(HamiltonDirac<Rotor>{m}, ExplicitRk<EulerTableau>{}), 1.0, 0.2);
}

TEST(ChainRotor, ImplicitMethodsAndRattleConvergeAtTheirOrder) {
  const Rotor m = ExactRotor{}.model();
  EXPECT_NEAR(rotor_order(HamiltonDirac<Rotor>{m}, ImplicitRk<Gauss1Tableau, double>{1e-15, 200}), 2.0, 0.2);
  EXPECT_NEAR(rotor_order(HamiltonDirac<Rotor>{m}, ImplicitRk<Gauss2Tableau, double>{1e-15, 200}), 4.0, 0.2);
  double e = 0;
  EXPECT_NEAR(rotor_order(Constrained<Rotor>{m}, Rattle<double>{1e-14, 50}, &e), 2.0, 0.2);
  EXPECT_LT(e, 1e-3);
}

TEST(ChainRotor, NumericalReferenceFollowsTheExactMotion) {
  const ExactRotor ex;
  const Rotor m = ex.model();
  RunParams<double> rp;
  rp.fixed_step = false;
  rp.t_end = 10.0;
  rp.sample_dt = 1.0;
  rp.samples = 10;
  rp.h = 0.01;
  rp.reference = true;
  rp.reference_tol = 1e-12;
  auto ref = NumericalReference<Rotor>::make(m, ex.at(0), rp);
  double worst = 0;
  for (index_t k = 1; k <= rp.samples; ++k) {
    ref.advance(m, rp, k);
    ASSERT_FALSE(ref.failed());
    EXPECT_EQ(ref.run.t, rp.sample_time(k));
    const auto d = ref.eval(rp.sample_time(k)) - ex.at(rp.sample_time(k));
    worst = std::max(worst, std::sqrt(dot(d, d)));
  }
  EXPECT_LT(worst, 1e-9);
  EXPECT_GT(ref.run.c.steps, 0u);
}

// Self-convergence on the seven-atom chain of 002 §7: |z_h - z_{h/2}| ~ h^p, for
// h = 2/n0 ... 2/(8 n0). The Lennard-Jones vibrations make h = 0.1 pre-asymptotic for
// RK4 (measured successive ratios log2 2.7, 3.5, 3.8, 3.9, 3.96 from h = 0.05 down to
// 0.0016), so RK4 is measured from h = 0.0125 on.
template <class System, class Method>
double hexagon_order(const System& sys, const Method& method, int n0 = 20) {
  const Hexagon m = sys.model;
  const auto z0 = Hexagon::default_initial(m);
  const double T = 2.0;
  std::vector<double> hs, diffs;
  auto prev = test::integrate_fixed(sys, method, z0, T, n0);
  for (int n : {2 * n0, 4 * n0, 8 * n0}) {
    const auto z = test::integrate_fixed(sys, method, z0, T, n);
    const auto d = sys.physical(z) - sys.physical(prev);
    hs.push_back(T / n);
    diffs.push_back(std::sqrt(dot(d, d)));
    prev = z;
  }
  return test::loglog_slope(hs, diffs);
}

TEST(ChainHexagon, EveryFormulationAndMethodConvergesAtItsOrder) {
  const Hexagon m = Hexagon::uniform(1.0, 0.1);
  EXPECT_NEAR(hexagon_order(HamiltonDirac<Hexagon>{m}, ExplicitRk<Rk4Tableau>{}, 160), 4.0, 0.2);
  EXPECT_NEAR(hexagon_order(Naive<Hexagon>{m}, ExplicitRk<Rk4Tableau>{}, 160), 4.0, 0.2);
  EXPECT_NEAR(hexagon_order(ImpetusStriction<Hexagon>{m}, ExplicitRk<Rk4Tableau>{}, 160), 4.0, 0.2);
  EXPECT_NEAR(hexagon_order(HamiltonDirac<Hexagon>{m}, ImplicitRk<Gauss1Tableau, double>{1e-15, 200}), 2.0, 0.2);
  EXPECT_NEAR(hexagon_order(HamiltonDirac<Hexagon>{m}, ImplicitRk<Gauss2Tableau, double>{1e-15, 200}), 4.0, 0.25);
  EXPECT_NEAR(hexagon_order(Naive<Hexagon>{m}, ImplicitRk<Gauss1Tableau, double>{1e-15, 200}), 2.0, 0.2);
  EXPECT_NEAR(hexagon_order(Constrained<Hexagon>{m}, Rattle<double>{1e-14, 50}), 2.0, 0.2);
}

TEST(ChainRattle, KeepsTheConstraintsAndHasBoundedEnergyError) {
  const Hexagon m = Hexagon::uniform(1.0, 0.1);
  const Constrained<Hexagon> sys{m};
  const Rattle<double> rattle{1e-13, 50};
  auto z = Hexagon::default_initial(m);
  const double e0 = m.energy(z);
  double first_half = 0, second_half = 0, worst_phi = 0, worst_psi = 0;
  const double h = 0.05;
  const int steps = 4000;  // t in [0, 200], as 002 §7
  int iterations = 0;
  for (int n = 1; n <= steps; ++n) {
    Hexagon::State zn;
    const StepStatus st = rattle.step(sys, z, h, zn);
    ASSERT_TRUE(st.converged && st.finite) << "step " << n;
    iterations += st.iterations;
    z = zn;
    worst_phi = std::max(worst_phi, max_abs(m.phi(Hexagon::q_of(z))));
    worst_psi = std::max(worst_psi, max_abs(m.psi(z)));
    const double de = std::fabs(m.energy(z) - e0);
    (n <= steps / 2 ? first_half : second_half) = std::max(n <= steps / 2 ? first_half : second_half, de);
  }
  EXPECT_LE(worst_phi, 1e-13);
  EXPECT_LE(worst_psi, 1e-14);  // the velocity step is an exact linear solve
  // Symplectic: the energy error oscillates without drift (002 §7 on Leimkuhler & Skeel).
  EXPECT_LT(second_half, 2.0 * first_half);
  EXPECT_LT(first_half, 1e-3);
  // Newton with the current iterate's matrix: a few sweeps per step at h = 0.05.
  EXPECT_LE(iterations, 4 * steps);
}

TEST(ChainRattle, IsSymmetric) {
  const Hexagon m = Hexagon::uniform(1.0, 0.1);
  const Constrained<Hexagon> sys{m};
  const Rattle<double> rattle{1e-15, 50};
  const auto z0 = Hexagon::default_initial(m);
  Hexagon::State z1, back;
  rattle.step(sys, z0, 0.1, z1);
  rattle.step(sys, z1, -0.1, back);
  EXPECT_LT(max_abs(back - z0), 1e-12);
}

TEST(ChainRattle, AnUnconvergedPositionIterationIsReportedPerStep) {
  const Hexagon m = Hexagon::uniform(1.0, 0.1);
  const Constrained<Hexagon> sys{m};
  Hexagon::State z1;
  const StepStatus st = Rattle<double>{1e-16, 1}.step(sys, Hexagon::default_initial(m), 0.1, z1);
  EXPECT_FALSE(st.converged);
  EXPECT_EQ(st.iterations, 1);
}

TEST(ChainPerturbation, PerturbedInstancesLieOnTheConstraintManifold) {
  const Hexagon m = Hexagon::uniform(1.0, 0.1);
  const auto z0 = Hexagon::default_initial(m);
  for (std::uint64_t i = 1; i < 50; ++i) {
    SCOPED_TRACE("seed 7, instance " + std::to_string(i));
    bool ok = false;
    const auto z = perturbed_initial_state(m, z0, 1e-2, 7, i, &ok);
    EXPECT_TRUE(ok);
    EXPECT_LE(max_abs(m.phi(Hexagon::q_of(z))), 1e-15);
    EXPECT_LE(max_abs(m.psi(z)), 1e-15);
    EXPECT_GT(max_abs(z - z0), 1e-4);  // it did move
  }
}

Study chain_study() {
  Study s;
  s.model_kind = ModelKind::chain;
  set_key(s, "model.atoms=7");
  s.formulation = FormulationId::dirac;
  s.method = MethodId::rk4;
  s.h = 0.1;
  s.t_end = 5.0;
  s.sample_dt = 1.0;
  s.size = 70;  // more than one block of 64
  s.perturbation = 1e-3;
  s.seed = 11;
  return s;
}

EnsembleResult run(const Study& s, int threads) { return run_study_cpu(s, resolve(s), ensemble_spec(s, threads)); }

TEST(ChainEnsemble, ResultsAreBitwiseIdenticalForAnyThreadCount) {
  const Study s = chain_study();
  const EnsembleResult a = run(s, 1), b = run(s, 2);
  ASSERT_EQ(a.series.size(), b.series.size());
  for (std::size_t k = 0; k < a.series.size(); ++k)
    for (int m = 0; m < metric_count; ++m) {
      EXPECT_EQ(a.series[k].metric[m].mean, b.series[k].metric[m].mean) << "seed 11, sample " << k << ", metric " << m;
      EXPECT_EQ(a.series[k].metric[m].max, b.series[k].metric[m].max);
    }
  EXPECT_EQ(a.totals.rhs_evaluations, b.totals.rhs_evaluations);
  EXPECT_EQ(a.lost_total(), 0u);
  EXPECT_TRUE(a.momentum_metrics);
  EXPECT_FALSE(a.reference_available);  // chains: reference "none" unless asked
  // RK4 keeps linear invariants: total momentum to rounding.
  EXPECT_LT(a.series.back().metric[int(MetricId::linear_momentum_error)].max, 1e-14);
}

TEST(ChainEnsemble, TheNumericalReferenceMeasuresTheIntegrationError) {
  Study s = chain_study();
  s.size = 4;
  s.reference = "auto";
  const EnsembleResult r = run(s, 1);
  ASSERT_TRUE(r.reference_available);
  EXPECT_EQ(r.lost_total(), 0u);
  const double err = r.series.back().metric[int(MetricId::integration_error)].max;
  // RK4 with h = 0.1 to t = 5: errors of order 1e-5 (the seven-atom chain's scale), far
  // above the reference's 1e-12 tolerance and far below the state's size.
  EXPECT_GT(err, 1e-8);
  EXPECT_LT(err, 1e-2);
  EXPECT_GT(r.totals.reference_steps, r.totals.steps);  // tighter than RK4 at h = 0.1
  // Halving h divides the error by about 2^4 once h is in RK4's asymptotic range (see
  // hexagon_order): h = 0.0125 -> 0.00625.
  s.h = 0.0125;
  const double err1 = run(s, 1).series.back().metric[int(MetricId::integration_error)].max;
  s.h = 0.00625;
  const double err2 = run(s, 1).series.back().metric[int(MetricId::integration_error)].max;
  EXPECT_NEAR(std::log2(err1 / err2), 4.0, 0.4);
}

TEST(ChainEnsemble, UnconvergedRattleIterationsAreCounted) {
  Study s = chain_study();
  s.method = MethodId::rattle;
  s.formulation = FormulationId::constrained;
  s.tol = 1e-16;  // unreachable: every step stops at max_iterations
  s.max_iterations = 2;
  s.size = 3;
  const EnsembleResult r = run(s, 1);
  EXPECT_EQ(r.totals.unconverged_steps, r.totals.steps);
  EXPECT_EQ(r.totals.steps, 3u * 50u);
  EXPECT_EQ(r.totals.iterations, 2u * r.totals.steps);
  EXPECT_EQ(r.totals.rhs_evaluations, 2u * r.totals.steps);  // RATTLE: force evaluations
}

using test::CliResult;
using test::run_cli;

TEST(ChainCli, RunReportsMomentumErrorsAndTheChainState) {
  test::TempDir dir;
  const std::string out = dir.str("out");
  const CliResult r =
      run_cli({"run", "--single", "--set", "model.kind=chain", "--set", "integrator.t_end=2", "--set", "ensemble.size=3",
               "--set", "output.trajectory=true", "--set", "output.reference=auto", "--out", out});
  ASSERT_EQ(r.code, exit_ok) << r.err;
  std::ifstream f(out + "/summary.json");
  const nlohmann::json j = nlohmann::json::parse(f);
  for (const char* metric :
       {"integration_error", "energy_error", "phi", "psi", "linear_momentum_error", "angular_momentum_error"})
    EXPECT_TRUE(j[metric]["final_max"].is_number()) << metric;
  EXPECT_EQ(j["study"]["model"]["atoms"], 7);
  EXPECT_EQ(j["instance0"]["final_state"].size(), 28u);
  EXPECT_EQ(j["reference"]["kind"].get<std::string>().rfind("numerical", 0), 0u);
  EXPECT_GT(j["reference"]["steps"].get<int>(), 0);
  std::ifstream t(out + "/trajectory.csv");
  std::string header;
  std::getline(t, header);
  EXPECT_EQ(header.rfind("t,x0,y0,x1,y1,", 0), 0u) << header;
  EXPECT_NE(header.find(",px6,py6,x0_ref,"), std::string::npos) << header;
}

TEST(ChainCli, PendulumSummaryHasNoMomentumErrorsAndReferenceNoneDropsTheIntegrationError) {
  test::TempDir dir;
  const CliResult r = run_cli({"run", "--single", "--set", "ensemble.size=2", "--set", "integrator.t_end=1", "--set",
                               "output.reference=none", "--out", dir.str("p")});
  ASSERT_EQ(r.code, exit_ok) << r.err;
  std::ifstream f(dir.str("p") + "/summary.json");
  const nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_FALSE(j.contains("linear_momentum_error"));
  EXPECT_TRUE(j["integration_error"].is_null());
  EXPECT_EQ(j["reference"]["kind"], "none");
}

}  // namespace
}  // namespace chens

namespace chens {
namespace {

// Sizes the build lacks are compiled on first use (tests/test_jit_systems.cpp); beyond 256
// atoms, refused naming the range.
TEST(ChainCli, ASizeBeyondTheRangeIsRefusedNamingIt) {
  test::TempDir dir;
  const CliResult r =
      run_cli({"run", "--single", "--set", "model.kind=chain", "--set", "model.atoms=257", "--out", dir.str("out")});
  EXPECT_EQ(r.code, exit_bad_input);
  EXPECT_NE(r.err.find("model.atoms = 257: must be an integer in [2, 256]"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.str("out"))) << "nothing is written";
}

}  // namespace
}  // namespace chens
