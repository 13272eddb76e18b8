// Seiler, "Numerical integration of constrained Hamiltonian systems using Dirac brackets"
// (paper 002): the pendulum of §6 (Table 1, error growth) and §11 (projections).
// Setups, our numbers and the discussion: docs/reproductions/pendulum.md.
//
// "inv" = naive equations (38) = chens naive, "ham" = extended Hamiltonian (37),
// "dir" = Hamilton-Dirac equations (35). RK4, constant step, initial data (1, 0, 0, -2).
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "paper_support.hpp"

namespace chens::papers::seiler2002_pendulum {
namespace {

const Model pend = unit_pendulum();
const Naive<Model> inv{pend};
const ExtendedHamiltonian<Model> ham{pend};
const HamiltonDirac<Model> dir{pend};

constexpr std::array<int, 5> table1_k{2, 4, 10, 20, 30};
// 002 Table 1: |y(kT)| (the exact value is 0).
constexpr std::array<double, 5> table1_inv{9.66e-3, 7.28e-2, 9.22e-1, 2.16e-1, 3.05e-1};
constexpr std::array<double, 5> table1_ham{5.75e-3, 1.77e-2, 8.98e-2, 3.17e-1, 6.21e-1};
constexpr std::array<double, 5> table1_dir{8.28e-4, 2.63e-3, 1.39e-2, 5.18e-2, 1.13e-1};

// The paper's step "h = 0.1 ≈ T/33": with h = T/33 the times kT lie on the step grid.
template <class System>
std::array<double, 5> phase_errors_on_grid(const System& sys) {
  const double T = rotation_period();
  const auto tr = integrate(sys, rotating_initial_data(), fixed_grid(T / 33.0, 30 * 33, 33));
  EXPECT_FALSE(tr.lost);
  std::array<double, 5> y{};
  for (std::size_t i = 0; i < table1_k.size(); ++i) {
    const Sample& s = tr.samples[static_cast<std::size_t>(table1_k[i])];
    EXPECT_NEAR(s.t, table1_k[i] * T, 1e-12 * s.t);
    y[i] = std::fabs(s.phys[1]);
  }
  return y;
}

// h = 0.1 exactly: y(kT) from the cubic Hermite interpolant of the step values and the
// formulation's right-hand side at both ends of the step containing kT.
template <class System>
std::array<double, 5> phase_errors_h01(const System& sys) {
  const double h = 0.1, T = rotation_period();
  const auto tr = integrate(sys, rotating_initial_data(), fixed_grid(h, 1000, 1));
  EXPECT_FALSE(tr.lost);
  std::array<double, 5> y{};
  for (std::size_t i = 0; i < table1_k.size(); ++i) {
    const double t = table1_k[i] * T;
    const auto n = static_cast<std::size_t>(std::floor(t / h));
    const Sample& a = tr.samples[n];
    const Sample& b = tr.samples[n + 1];
    State da, db;
    sys.rhs(a.z, da);
    sys.rhs(b.z, db);
    const double s = (t - a.t) / h;
    const double h00 = (1 + 2 * s) * (1 - s) * (1 - s), h10 = s * (1 - s) * (1 - s);
    const double h01 = s * s * (3 - 2 * s), h11 = -s * s * (1 - s);
    y[i] = std::fabs(h00 * a.z[1] + h10 * h * da[1] + h01 * b.z[1] + h11 * h * db[1]);
  }
  return y;
}

// The paper reports three significant digits. Our h = T/33 uses the exact period; the
// paper's T carried an error of a few 1e-6 (docs/reproductions/pendulum.md: it shifts
// y(2T) of "dir" by ~1.5 %), so we ask for agreement within 5 %.
constexpr double table1_rel_tol = 0.05;

TEST(Seiler2002Table1, PeriodIsTheQuoted3_31) {
  EXPECT_NEAR(rotation_period(), 3.31, 0.005);  // the paper: T ≈ 3.31
}

TEST(Seiler2002Table1, NaiveMatchesPaperWithin5Percent) {
  const auto y = phase_errors_on_grid(inv);
  for (std::size_t i = 0; i < y.size(); ++i)
    EXPECT_NEAR(y[i], table1_inv[i], table1_rel_tol * table1_inv[i]) << "k = " << table1_k[i];
}

TEST(Seiler2002Table1, ExtendedMatchesPaperWithin5Percent) {
  const auto y = phase_errors_on_grid(ham);
  for (std::size_t i = 0; i < y.size(); ++i)
    EXPECT_NEAR(y[i], table1_ham[i], table1_rel_tol * table1_ham[i]) << "k = " << table1_k[i];
}

TEST(Seiler2002Table1, DiracMatchesPaperWithin5Percent) {
  const auto y = phase_errors_on_grid(dir);
  for (std::size_t i = 0; i < y.size(); ++i)
    EXPECT_NEAR(y[i], table1_dir[i], table1_rel_tol * table1_dir[i]) << "k = " << table1_k[i];
}

// The ordering the table shows: dir is best everywhere; ham beats inv until the naive
// phase error wraps around (after 10T the naive y(kT) is no longer small, so |y| can
// decrease again, as in the paper's 20T and 30T columns).
void expect_table1_ordering(const std::array<double, 5>& yi, const std::array<double, 5>& yh,
                            const std::array<double, 5>& yd) {
  for (std::size_t i = 0; i < yi.size(); ++i) {
    EXPECT_LT(yd[i], yh[i]) << "k = " << table1_k[i];
    EXPECT_LT(yd[i], yi[i]) << "k = " << table1_k[i];
    if (table1_k[i] <= 10) {
      EXPECT_LT(yh[i], yi[i]) << "k = " << table1_k[i];
    }
  }
}

TEST(Seiler2002Table1, OrderingDiracExtendedNaive) {
  expect_table1_ordering(phase_errors_on_grid(inv), phase_errors_on_grid(ham), phase_errors_on_grid(dir));
}

// With h = 0.1 itself the grid misses kT; interpolated, the ordering is the same (the
// values are not the paper's: see the document).
TEST(Seiler2002Table1, OrderingHoldsWithStep0_1Interpolated) {
  expect_table1_ordering(phase_errors_h01(inv), phase_errors_h01(ham), phase_errors_h01(dir));
}

// ---- §6 error growth over t in [0, 100], h = 0.1 ----------------------------------

template <class System>
Trajectory growth_run(const System& sys, Projections pr = {}) {
  auto tr = integrate(sys, rotating_initial_data(), fixed_grid(0.1, 1000, 1, pr));
  EXPECT_FALSE(tr.lost);
  return tr;
}

// Exponents are log-log slopes of the running maximum over [growth_t0, useful_until]:
// t0 = 10 (three periods) skips the start-up, and the window ends where the integration
// error first exceeds 1, the paper's own criterion for useless results (002 §6). The
// paper states rates as integers ("quadratic", "linear"); a claimed t^n is reproduced
// when the fitted exponent is within 0.5 of n.
constexpr double growth_t0 = 10.0;
constexpr double integer_band = 0.5;

TEST(Seiler2002Growth, UsefulIntervalsAsInPaper) {
  // Paper: dir is the only formulation that does not break down before t = 100; ham
  // reasonable until about t = 70; inv "perhaps until t = 30".
  const auto td = useful_until(growth_run(dir));
  const auto th = useful_until(growth_run(ham));
  const auto ti = useful_until(growth_run(inv));
  EXPECT_DOUBLE_EQ(td, 100.0);
  EXPECT_NEAR(th, 70.0, 0.15 * 70.0);  // "approximately t = 70": two digits, 15 %
  EXPECT_GE(ti, 30.0 / 1.5);           // "perhaps until t = 30": a factor 1.5
  EXPECT_LE(ti, 30.0 * 1.5);
  EXPECT_LT(ti, th);
}

TEST(Seiler2002Growth, DiracQuadraticErrorLinearEnergyAndResiduals) {
  const auto tr = growth_run(dir);
  const double t1 = useful_until(tr);
  EXPECT_NEAR(growth_exponent(tr, err_of, growth_t0, t1), 2.0, integer_band);
  EXPECT_NEAR(growth_exponent(tr, energy_of, growth_t0, t1), 1.0, integer_band);
  EXPECT_NEAR(growth_exponent(tr, phi_of, growth_t0, t1), 1.0, integer_band);
  EXPECT_NEAR(growth_exponent(tr, psi_of, growth_t0, t1), 1.0, integer_band);
}

TEST(Seiler2002Growth, ExtendedQuadraticErrorLinearEnergySqrtResiduals) {
  const auto tr = growth_run(ham);
  const double t1 = useful_until(tr);
  EXPECT_NEAR(growth_exponent(tr, err_of, growth_t0, t1), 2.0, integer_band);
  EXPECT_NEAR(growth_exponent(tr, energy_of, growth_t0, t1), 1.0, integer_band);
  // "approximately proportional to sqrt(t)": within 0.25 of 1/2, and below Dirac's rate
  // ("for the extended Hamiltonian even less").
  const auto trd = growth_run(dir);
  const double td = useful_until(trd);
  for (auto get : {phi_of, psi_of}) {
    const double p = growth_exponent(tr, get, growth_t0, t1);
    EXPECT_NEAR(p, 0.5, 0.25);
    EXPECT_LT(p, growth_exponent(trd, get, growth_t0, td));
  }
}

TEST(Seiler2002Growth, NaiveCubicErrorQuadraticEnergyWhileReasonable) {
  const auto tr = growth_run(inv);
  const double t1 = useful_until(tr);
  EXPECT_NEAR(growth_exponent(tr, err_of, growth_t0, t1), 3.0, integer_band);
  EXPECT_NEAR(growth_exponent(tr, energy_of, growth_t0, t1), 2.0, integer_band);
  EXPECT_NEAR(growth_exponent(tr, phi_of, growth_t0, t1), 2.0, integer_band);
  EXPECT_NEAR(growth_exponent(tr, psi_of, growth_t0, t1), 1.0, integer_band);
}

TEST(Seiler2002Growth, DiracHasTheSmallestErrorsAtTheEnd) {
  const auto td = growth_run(dir), th = growth_run(ham), ti = growth_run(inv);
  for (auto get : {err_of, energy_of}) {
    EXPECT_LT(max_until(td, get, 100.0), max_until(th, get, 100.0));
    EXPECT_LT(max_until(td, get, 100.0), max_until(ti, get, 100.0));
  }
}

// ---- §11 tolerance-triggered projections, h = 0.1, eps = 1e-6 ------------------------

struct ProjectionRates {
  double momentum, position, any;  // per step
};

ProjectionRates projection_rates(const Trajectory& tr) {
  std::uint64_t any = 0;
  for (std::size_t i = 1; i < tr.samples.size(); ++i) {
    const Counters& a = tr.samples[i - 1].c;
    const Counters& b = tr.samples[i].c;
    if (b.momentum_projections > a.momentum_projections || b.position_projections > a.position_projections) any += 1;
  }
  const double steps = static_cast<double>(tr.counters.steps);
  return {static_cast<double>(tr.counters.momentum_projections) / steps,
          static_cast<double>(tr.counters.position_projections) / steps, static_cast<double>(any) / steps};
}

constexpr Projections both_1e6{true, true, 1e-6};

TEST(Seiler2002Projections, DiracProjectsAboutEverySecondStep) {
  // "on average in every second integration step a projection": a rate of 1/2; we
  // accept every 1.33 to every 3 steps. Each kind separately and steps with either.
  const auto r = projection_rates(growth_run(dir, both_1e6));
  for (double x : {r.momentum, r.position, r.any}) {
    EXPECT_GE(x, 1.0 / 3.0);
    EXPECT_LE(x, 3.0 / 4.0);
  }
}

TEST(Seiler2002Projections, NaiveAndExtendedProjectAlmostEveryStep) {
  // "almost every step": at least 4 steps out of 5.
  EXPECT_GE(projection_rates(growth_run(inv, both_1e6)).any, 0.8);
  EXPECT_GE(projection_rates(growth_run(ham, both_1e6)).any, 0.8);
}

TEST(Seiler2002Projections, DiracNeedsTheFewestProjections) {
  const auto total = [](const Trajectory& tr) {
    return tr.counters.momentum_projections + tr.counters.position_projections;
  };
  const auto nd = total(growth_run(dir, both_1e6));
  EXPECT_LT(nd, total(growth_run(inv, both_1e6)));
  EXPECT_LT(nd, total(growth_run(ham, both_1e6)));
}

TEST(Seiler2002Projections, MomentumProjectionGivesNaiveTheDiracRates) {
  // "With a momentum projection one obtains the same result as for the Dirac bracket
  // formulation: quadratic growth of the integration error, linear growth of the energy
  // error."
  const auto tr = growth_run(inv, Projections{true, false, 1e-6});
  const double t1 = useful_until(tr);
  EXPECT_DOUBLE_EQ(t1, 100.0);
  EXPECT_NEAR(growth_exponent(tr, err_of, growth_t0, t1), 2.0, integer_band);
  EXPECT_NEAR(growth_exponent(tr, energy_of, growth_t0, t1), 1.0, integer_band);
}

TEST(Seiler2002Projections, PositionProjectionLeavesNaiveRatesUnchanged) {
  // "position corrections alone did not lead to any change in the qualitative behavior".
  const auto tr = growth_run(inv, Projections{false, true, 1e-6});
  const double t1 = useful_until(tr);
  EXPECT_NEAR(growth_exponent(tr, err_of, growth_t0, t1), 3.0, integer_band);
  EXPECT_NEAR(growth_exponent(tr, energy_of, growth_t0, t1), 2.0, integer_band);
  EXPECT_NEAR(growth_exponent(tr, psi_of, growth_t0, t1), 1.0, integer_band);
}

TEST(Seiler2002Projections, PositionProjectionsHurtTheStabilizedFormulations) {
  // "Applied to the stabilized formulations the projections have also negative effects
  // [...] especially for the extended Hamiltonian [...]. The Hamilton-Dirac equations
  // also do not like position corrections." Reproduced for position projections alone
  // (with both kinds the extended formulation improves here; see the document).
  const Projections pos{false, true, 1e-6};
  for (auto get : {err_of, energy_of}) {
    EXPECT_GT(max_until(growth_run(ham, pos), get, 100.0), max_until(growth_run(ham), get, 100.0));
    EXPECT_GT(max_until(growth_run(dir, pos), get, 100.0), max_until(growth_run(dir), get, 100.0));
  }
}

}  // namespace
}  // namespace chens::papers::seiler2002_pendulum
