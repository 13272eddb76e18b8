// Seiler, "Numerical integration of constrained Hamiltonian systems using Dirac brackets"
// (paper 002), §7: the planar chain molecule of Leimkuhler & Skeel, N = 7 atoms, fixed
// bonds, V = 0.1 sum_{i<j} (r_ij^-12 - 2 r_ij^-6), t in [0, 200].
// Setups, our numbers and the discussion: docs/reproductions/chain.md; study files
// examples/seiler2002_sec7_chain_*.toml.
//
// "dir" = Hamilton-Dirac equations (002 eq. 31 with 42-45), "inv" = naive index reduction
// (002 eq. 38), RATTLE on the constrained equations themselves. Every run starts from the
// centred hexagon with end velocities 0.25 (Chain::default_initial; the paper shows the
// configuration only in its Fig. 3). Only header-only parts of chens are used, on the
// per-instance driver of the ensemble backends (make_instance, advance_to_sample,
// measure_instance), with the numerical reference of `output.reference = "auto"`.
//
// Every threshold below states the value we measured (sample spacing 0.5, doubles, g++ -O2)
// and what the threshold means; none is set to just clear the measured value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>
#include <numbers>
#include <stdexcept>
#include <utility>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/counters.hpp>
#include <chens/ensemble/instance.hpp>
#include <chens/ensemble/run_params.hpp>
#include <chens/formulations/constrained.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/rattle.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/chain.hpp>
#include <chens/reference/numerical.hpp>

namespace chens::papers::seiler2002_chain {
namespace {

using ChainModel = Chain<double, 7>;
using ChainState = ChainModel::State;
using ChainRk4 = ExplicitRk<Rk4Tableau>;
using Midpoint = ImplicitRk<Gauss1Tableau, double>;

const ChainModel chain = ChainModel::uniform(1.0, 0.1);  // L = 1, eps = 0.1, unit masses
const HamiltonDirac<ChainModel> dir{chain};
const Naive<ChainModel> inv{chain};
const Constrained<ChainModel> con{chain};

constexpr double chain_t_end = 200.0;  // "for the interval t in [0, 200]"
constexpr double chain_h = 0.1;        // "the constant step size h = 0.1"
constexpr double sample_dt = 0.5;      // several samples per vibration (periods ~1)
constexpr double midpoint_tol = 1e-5;  // "functional iteration to a tolerance of 1e-5"
constexpr double rattle_tol = 1e-12;   // RATTLE's Newton tolerance on max |phi_a|

// ---- the per-instance driver and the fits ------------------------------------------

RunParams<double> chain_grid(double h, bool reference) {
  RunParams<double> rp;
  rp.fixed_step = true;
  rp.h = rp.last_h = h;
  rp.total_steps = static_cast<index_t>(std::llround(chain_t_end / h));
  rp.t_end = chain_t_end;
  rp.steps_per_sample = static_cast<index_t>(std::llround(sample_dt / h));
  rp.samples = rp.total_steps / rp.steps_per_sample;
  rp.sample_dt = sample_dt;
  rp.reference = reference;  // DOPRI5 on dir, rtol = atol = 1e-12 (reference/numerical.hpp)
  rp.reference_tol = 1e-12;
  return rp;
}

// Adaptive DOPRI5 grid landing on every sample time (for references and nearby states).
RunParams<double> chain_adaptive(double tol) {
  RunParams<double> rp;
  rp.fixed_step = false;
  rp.h = chain_h;
  rp.t_end = chain_t_end;
  rp.sample_dt = sample_dt;
  rp.samples = static_cast<index_t>(std::llround(chain_t_end / sample_dt));
  rp.rtol = rp.atol = tol;
  rp.reference = false;
  return rp;
}

struct ChainSample {
  double t;
  ChainState z;
  Metrics<double> m;
};

struct ChainRun {
  std::vector<ChainSample> s;
  Counters c;
  bool lost = false;
};

template <class System, class Method>
ChainRun integrate_chain(const System& sys, const Method& method, const ChainState& z0, const RunParams<double>& rp) {
  auto in = make_instance<System, NumericalReference<ChainModel>>(sys, z0, 0.0, 0, 0, rp);
  ChainRun r;
  r.s.reserve(static_cast<std::size_t>(rp.samples + 1));
  for (index_t k = 0; k <= rp.samples; ++k) {
    if (k > 0) advance_to_sample(sys, method, rp, in, k);
    Metrics<double> m;
    if (!measure_instance(sys, rp, in, k, m)) {
      r.lost = true;
      break;
    }
    r.s.push_back(ChainSample{rp.sample_time(k), in.z, m});
  }
  r.c = in.c;
  return r;
}

double value(const ChainSample& s, MetricId id) { return s.m.v[static_cast<int>(id)]; }

double max_over(const ChainRun& r, MetricId id, double t0 = 0.0, double t1 = chain_t_end) {
  double m = 0.0;
  for (const auto& s : r.s)
    if (s.t >= t0 && s.t <= t1) m = std::max(m, value(s, id));
  return m;
}

// Least-squares slope of log(running maximum) against log t over [t0, t1], each point
// weighted by its share of the log-time axis: the fit of growth_exponent() in
// paper_support.hpp and of scripts/growth_exponents.py. The window starts at t = 10 (ten
// vibration periods, 1/15 of a rotation) to skip the start-up, as for the pendulum.
template <class Get>
double loglog_growth(const std::vector<ChainSample>& s, Get get, double t0, double t1) {
  std::vector<double> lx, ly;
  double run = 0.0;
  for (const auto& x : s) {
    run = std::max(run, get(x));
    if (x.t < t0 || x.t > t1 || !(run > 0.0)) continue;
    lx.push_back(std::log(x.t));
    ly.push_back(std::log(run));
  }
  if (lx.size() < 3) throw std::runtime_error("loglog_growth: fewer than 3 points in the window");
  const std::size_t n = lx.size();
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double lo = i == 0 ? lx[0] : 0.5 * (lx[i - 1] + lx[i]);
    const double hi = i + 1 == n ? lx[n - 1] : 0.5 * (lx[i] + lx[i + 1]);
    w[i] = hi - lo;
  }
  double sw = 0, sx = 0, sy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sw += w[i];
    sx += w[i] * lx[i];
    sy += w[i] * ly[i];
  }
  const double mx = sx / sw, my = sy / sw;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxx += w[i] * (lx[i] - mx) * (lx[i] - mx);
    sxy += w[i] * (lx[i] - mx) * (ly[i] - my);
  }
  return sxy / sxx;
}

constexpr double growth_t0 = 10.0;

double growth(const ChainRun& r, MetricId id) {
  return loglog_growth(
      r.s, [id](const ChainSample& x) { return value(x, id); }, growth_t0, chain_t_end);
}

double distance(const ChainState& a, const ChainState& b) {
  double s = 0.0;
  for (int i = 0; i < ChainState::size; ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s);
}

// The runs, each computed once (the whole file takes well under a second).
const ChainState& hexagon() {
  static const ChainState z = ChainModel::default_initial(chain);
  return z;
}
const ChainRun& rk4_dir() {  // with the integration error against the DOPRI5 reference
  static const ChainRun r = integrate_chain(dir, ChainRk4{}, hexagon(), chain_grid(chain_h, true));
  return r;
}
const ChainRun& rk4_inv() {
  static const ChainRun r = integrate_chain(inv, ChainRk4{}, hexagon(), chain_grid(chain_h, false));
  return r;
}
const ChainRun& rattle() {
  static const ChainRun r = integrate_chain(con, Rattle<double>{rattle_tol, 50}, hexagon(), chain_grid(chain_h, false));
  return r;
}
// Implicit midpoint on dir with step h and fixed-point tolerance tol (a few settings).
const ChainRun& midpoint(double h, double tol) {
  static std::deque<std::pair<std::pair<double, double>, ChainRun>> cache;  // push_back keeps references
  for (const auto& [key, run] : cache)
    if (key.first == h && key.second == tol) return run;
  cache.push_back({{h, tol}, integrate_chain(dir, Midpoint{tol, 100}, hexagon(), chain_grid(h, false))});
  return cache.back().second;
}
ChainRun dopri(const ChainState& z0, double tol) {
  return integrate_chain(dir, Dopri5<double>{tol, tol}, z0, chain_adaptive(tol));
}
const ChainRun& reference_1e12() {  // the reference of output.reference = "auto", alone
  static const ChainRun r = dopri(hexagon(), 1e-12);
  return r;
}

constexpr double integer_band = 0.5;  // a claimed t^n: fitted exponent within 0.5 of n

// ---- initial data --------------------------------------------------------------------

TEST(Seiler2002Chain, InitialDataAreTheHexagonWithOpposedEndVelocities) {
  // "the hexagonal structure shown in the left part of Fig. 3" (a global minimum of V with
  // all bonds of length 1), "at the ends of the chain [...] initial velocities of equal
  // amplitude (v0 = 0.25) but opposite direction; the remaining atoms are initially at rest".
  const ChainState& z = hexagon();
  const auto q = ChainModel::q_of(z);
  const auto p = ChainModel::p_of(z);
  for (int a = 0; a < 6; ++a) {
    EXPECT_LE(std::fabs(chain.phi(q)[a]), 1e-15) << "bond " << a;  // on the manifold
    EXPECT_LE(std::fabs(chain.psi(z)[a]), 1e-15) << "bond " << a;  // consistent velocities
  }
  EXPECT_NEAR(std::hypot(p[0], p[1]), 0.25, 1e-15);
  EXPECT_DOUBLE_EQ(p[12], -p[0]);
  EXPECT_DOUBLE_EQ(p[13], -p[1]);
  for (int i = 2; i < 12; ++i) EXPECT_EQ(p[i], 0.0) << "component " << i;
  // All 12 nearest-neighbour distances are 1 (the minimum of r^-12 - 2 r^-6): the centre
  // atom (index 3) has six neighbours at distance 1, the ring atoms form a unit hexagon.
  for (int i = 0; i < 7; ++i) {
    if (i == 3) continue;
    EXPECT_NEAR(std::hypot(q[2 * i] - q[6], q[2 * i + 1] - q[7]), 1.0, 1e-15) << "atom " << i;
  }
  const auto integrals = chain.momentum_integrals(z);
  EXPECT_EQ(integrals[0], 0.0);
  EXPECT_EQ(integrals[1], 0.0);
  EXPECT_NEAR(integrals[2], -0.25, 1e-15);  // clockwise rotation
}

TEST(Seiler2002Chain, RigidRotationAboutFiveQuarterTurns) {
  // "[t in [0, 200]] corresponds roughly to 5/4 periods of the rigid body rotation". We
  // unwrap the direction of the end-to-end vector (atom 6 -> atom 0) along the DOPRI5
  // reference: 1.310 turns measured (a rigid hexagon with |L| = 0.25, I = 6 would make
  // 200 |L| / (2 pi I) = 1.326). "Roughly 5/4" is read as 1.25 +- 0.25; other readings of
  // Fig. 3 give 2.65 turns (velocities normal to the radius) or 0.66 (centre atom at an end).
  const ChainRun& ref = reference_1e12();
  ASSERT_FALSE(ref.lost);
  double turns = 0.0, prev = 0.0;
  for (std::size_t i = 0; i < ref.s.size(); ++i) {
    const ChainState& z = ref.s[i].z;
    const double a = std::atan2(z[1] - z[13], z[0] - z[12]);
    double d = i == 0 ? 0.0 : a - prev;
    while (d > std::numbers::pi) d -= 2 * std::numbers::pi;
    while (d < -std::numbers::pi) d += 2 * std::numbers::pi;
    turns += d;
    prev = a;
  }
  turns = std::fabs(turns) / (2 * std::numbers::pi);
  EXPECT_GE(turns, 1.0);
  EXPECT_LE(turns, 1.5);
}

// ---- RK4, h = 0.1, Hamilton-Dirac equations (Figs. 4-5) ----------------------------------

TEST(Seiler2002Chain, Rk4DiracQuadraticIntegrationErrorLinearEnergyError) {
  // "As for the Hamilton-Dirac formulation of the pendulum, the integration error grows
  // quadratically, all others errors about linearly." Measured over [10, 200]: integration
  // error 2.20, energy error 0.97. Same rule as for the pendulum: within 0.5 of the integer.
  const ChainRun& r = rk4_dir();
  ASSERT_FALSE(r.lost);
  EXPECT_NEAR(growth(r, MetricId::integration_error), 2.0, integer_band);
  EXPECT_NEAR(growth(r, MetricId::energy_error), 1.0, integer_band);
}

TEST(Seiler2002Chain, Rk4DiracConstraintResidualsGrowLinearly) {
  // Fig. 5: position and momentum residuals of dir, "about linearly". Measured 0.88 (phi)
  // and 0.91 (psi); also the residuals stay small (2.6e-5 and 1.1e-4 at t = 200): we ask
  // for < 1e-3, a factor ~10 above psi, i.e. the constraint manifold is kept to O(h^4 t).
  const ChainRun& r = rk4_dir();
  EXPECT_NEAR(growth(r, MetricId::phi), 1.0, integer_band);
  EXPECT_NEAR(growth(r, MetricId::psi), 1.0, integer_band);
  EXPECT_LT(max_over(r, MetricId::phi), 1e-3);
  EXPECT_LT(max_over(r, MetricId::psi), 1e-3);
}

TEST(Seiler2002Chain, NaiveDriftsOffThePositionConstraint) {
  // Not stated for the chain (the paper shows only dir there); the pendulum's behaviour
  // (002 §6: naive position residual quadratic) carried over as a consistency check.
  // Measured: exponent 1.86, max |phi| 1.1e-2 = 420x dir's 2.6e-5; we ask for 100x.
  const ChainRun& r = rk4_inv();
  ASSERT_FALSE(r.lost);
  EXPECT_NEAR(growth(r, MetricId::phi), 2.0, integer_band);
  EXPECT_GE(max_over(r, MetricId::phi), 100.0 * max_over(rk4_dir(), MetricId::phi));
}

// ---- first integrals besides H ---------------------------------------------------------

TEST(Seiler2002Chain, LinearMomentumConservedToRounding) {
  // "for the former one [linear momentum] it is about 1e-15": every Runge-Kutta method
  // preserves linear invariants, RATTLE too. Measured max over [0, 200]: 1.8e-15 (RK4 dir
  // and inv), 1.5e-15 (midpoint), 1.1e-15 (midpoint h/2), 1.3e-15 (RATTLE). 1e-13 is 50x
  // above the largest; a method that did not conserve P would show truncation-sized errors
  // (the angular momentum's are 1e-5).
  for (const ChainRun* r :
       {&rk4_dir(), &rk4_inv(), &rattle(), &midpoint(chain_h, midpoint_tol), &midpoint(chain_h / 2, midpoint_tol)}) {
    EXPECT_LE(max_over(*r, MetricId::linear_momentum_error), 1e-13);
  }
}

TEST(Seiler2002Chain, AngularMomentumErrorNearThePapersBand) {
  // "the error in the latter one [angular momentum] lies between 1e-5 and 1e-6". Measured
  // max over [0, 200]: RK4 dir 4.4e-5, RK4 inv 4.1e-5, midpoint (tol 1e-5) 2.6e-5, with
  // h/2 1.2e-5 -- the same order, 1.2 to 4.4 times above the paper's upper end (see the
  // document). The band [1e-6, 1e-4] keeps the paper's lower end and allows 10x its upper
  // end (2.2x above our largest value): it asserts "of order 1e-5", i.e. neither conserved
  // to rounding nor a drift that reaches 1e-4 by t = 200.
  for (const ChainRun* r :
       {&rk4_dir(), &rk4_inv(), &midpoint(chain_h, midpoint_tol), &midpoint(chain_h / 2, midpoint_tol)}) {
    const double e = max_over(*r, MetricId::angular_momentum_error);
    EXPECT_GE(e, 1e-6);
    EXPECT_LE(e, 1e-4);
  }
  // RATTLE conserves L exactly (its constraint forces are central): measured 6e-16.
  EXPECT_LE(max_over(rattle(), MetricId::angular_momentum_error), 1e-13);
}

// ---- RATTLE (Leimkuhler & Skeel, as quoted by the paper) --------------------------------

TEST(Seiler2002Chain, RattleEnergyErrorBoundedWithoutDrift) {
  // "Their energy error remains more or less constant over the full integration interval
  // t in [0, 200]." Measured: max over [100, 200] / max over [0, 100] = 1.01 (RK4: 1.93),
  // growth exponent 0.04 (RK4: 0.97). We ask for a ratio <= 2 and an exponent <= 0.3.
  const ChainRun& r = rattle();
  ASSERT_FALSE(r.lost);
  EXPECT_EQ(r.c.unconverged_steps, 0u);
  EXPECT_LE(max_over(r, MetricId::energy_error, 100, 200), 2.0 * max_over(r, MetricId::energy_error, 0, 100));
  EXPECT_LE(growth(r, MetricId::energy_error), 0.3);
  // "at least regarding energy conservation their approach [...] leads to better results":
  // over [0, 200] RATTLE's largest energy error is 1.85e-3, RK4's 5.6e-3 (factor 3; RK4 is
  // better before t ~ 65, see the document).
  EXPECT_LT(max_over(r, MetricId::energy_error), max_over(rk4_dir(), MetricId::energy_error));
}

TEST(Seiler2002Chain, RattleKeepsTheConstraints) {
  // RATTLE's Newton iteration stops when max |phi_a| <= tol, and the momentum projection
  // makes psi = 0 up to rounding: measured max |phi| 9.9e-13 (<= tol = 1e-12 by
  // construction), max |psi| 2.8e-17; 1e-14 for psi is ~100 roundings of a bond velocity.
  const ChainRun& r = rattle();
  EXPECT_LE(max_over(r, MetricId::phi), rattle_tol);
  EXPECT_LE(max_over(r, MetricId::psi), 1e-14);
}

// ---- implicit midpoint rule on the Hamilton-Dirac equations ------------------------------

TEST(Seiler2002Chain, MidpointConservesEnergyBetterThanRk4AndGrowsSublinearly) {
  // "it conserved the energy for the same step size better by almost an order of magnitude.
  // The error growth is less than linear". Measured (h = 0.1, tol 1e-5): largest energy
  // error 2.74e-3 vs RK4's 5.61e-3 (factor 2.0; 3.2 at t = 200) -- better, but not by the
  // paper's ~10, which we do not reproduce and do not assert. Growth exponent 0.48 (RK4 0.97):
  // "less than linear" is asserted as <= 0.75, halfway between the two.
  const ChainRun& m = midpoint(chain_h, midpoint_tol);
  ASSERT_FALSE(m.lost);
  EXPECT_EQ(m.c.unconverged_steps, 0u);
  EXPECT_LT(max_over(m, MetricId::energy_error), max_over(rk4_dir(), MetricId::energy_error));
  EXPECT_LT(value(m.s.back(), MetricId::energy_error), value(rk4_dir().s.back(), MetricId::energy_error));
  EXPECT_LE(growth(m, MetricId::energy_error), 0.75);
}

TEST(Seiler2002Chain, MidpointImprovesTheConstraintResiduals) {
  // "the constraints residuals improve by more than an order of magnitude". Measured
  // (largest over [0, 200]): phi 2.6e-5 -> 3.6e-6 (factor 7.4), psi 1.1e-4 -> 9.9e-6
  // (factor 11.2). Reproduced for psi, not quite for phi; we assert a factor >= 3 for both.
  const ChainRun& m = midpoint(chain_h, midpoint_tol);
  EXPECT_GE(max_over(rk4_dir(), MetricId::phi), 3.0 * max_over(m, MetricId::phi));
  EXPECT_GE(max_over(rk4_dir(), MetricId::psi), 3.0 * max_over(m, MetricId::psi));
}

TEST(Seiler2002Chain, MidpointHalfStepReducesTheEnergyError) {
  // "If the step size is halved, the energy error becomes smaller by more than an order of
  // magnitude and remains almost constant about 1e-4." Measured with tol 1e-5: largest
  // energy error 2.74e-3 -> 1.09e-3 (factor 2.5), at h/2 still growing (exponent 0.62, peak
  // 1.1e-3). Not reproduced beyond "smaller"; we assert a factor >= 1.5.
  EXPECT_GE(max_over(midpoint(chain_h, midpoint_tol), MetricId::energy_error),
            1.5 * max_over(midpoint(chain_h / 2, midpoint_tol), MetricId::energy_error));
  // With the equations solved to 1e-12 the midpoint rule's energy error is its O(h^2)
  // truncation error: measured factor 4.12 for h -> h/2; we ask for [3, 5.5] around 4.
  const double f = max_over(midpoint(chain_h, 1e-12), MetricId::energy_error) /
                   max_over(midpoint(chain_h / 2, 1e-12), MetricId::energy_error);
  EXPECT_GE(f, 3.0);
  EXPECT_LE(f, 5.5);
}

TEST(Seiler2002Chain, ExactMidpointPreservesTheQuadraticFirstIntegrals) {
  // "The implicit midpoint rule preserves quadratic first integrals, if the arising
  // nonlinear equations are solved exactly [...] the constraints [...] are first integrals
  // for the Hamilton-Dirac equations" -- and so is L. Solved to 1e-12 (h = 0.1) we measure
  // max |phi| 1.1e-13, max |psi| 1.2e-12, |L - L0| 5.4e-13 over 2000 steps (with tol 1e-5:
  // 3.6e-6, 9.9e-6, 2.6e-5: the residuals of the paper's midpoint run are iteration error).
  // 1e-10 is 80x above the largest, and 4 orders below the tol-1e-5 values.
  const ChainRun& m = midpoint(chain_h, 1e-12);
  EXPECT_LE(max_over(m, MetricId::phi), 1e-10);
  EXPECT_LE(max_over(m, MetricId::psi), 1e-10);
  EXPECT_LE(max_over(m, MetricId::angular_momentum_error), 1e-10);
}

// ---- is the integration error's irregular growth chaos? ---------------------------------

TEST(Seiler2002Chain, ReferenceIsConvergedAndTheMotionIsNotChaotic) {
  // (1) The DOPRI5 reference at rtol = atol = 1e-10 and 1e-12 differ by at most 4.7e-6
  // over [0, 200] (measured), 7e-6 of RK4's integration error at t = 200 (0.58): the
  // integration error is not reference error. We ask for < 1e-4 of it.
  const ChainRun& ref12 = reference_1e12();
  const ChainRun ref10 = dopri(hexagon(), 1e-10);
  ASSERT_EQ(ref10.s.size(), ref12.s.size());
  double dmax = 0.0;
  for (std::size_t i = 0; i < ref12.s.size(); ++i) dmax = std::max(dmax, distance(ref10.s[i].z, ref12.s[i].z));
  EXPECT_LT(dmax, 1e-4 * value(rk4_dir().s.back(), MetricId::integration_error));
  // (2) Two exact solutions 3.5e-9 apart (v0 = 0.25 (1 + 1e-8), still on the manifold):
  // their distance grows by a factor 81 over [0, 200], with a log-log growth exponent of
  // 1.08 -- linear (a frequency shift), not exponential. A positive Lyapunov exponent
  // lambda would give exp(200 lambda); we ask for a factor < 1000 (lambda < 0.035 for the
  // whole interval) and an exponent within 0.5 of 1.
  const ChainRun near = dopri(ChainModel::default_initial(chain, 0.25 * (1.0 + 1e-8)), 1e-12);
  ASSERT_EQ(near.s.size(), ref12.s.size());
  std::vector<ChainSample> sep = ref12.s;
  for (std::size_t i = 0; i < sep.size(); ++i) sep[i].m.v[0] = distance(ref12.s[i].z, near.s[i].z);
  const double d0 = sep.front().m.v[0];
  ASSERT_GT(d0, 0.0);
  EXPECT_LT(sep.back().m.v[0], 1000.0 * d0);
  const double p = loglog_growth(
      sep, [](const ChainSample& x) { return x.m.v[0]; }, growth_t0, chain_t_end);
  EXPECT_NEAR(p, 1.0, integer_band);
}

}  // namespace
}  // namespace chens::papers::seiler2002_chain
