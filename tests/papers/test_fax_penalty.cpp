// Reproduction of 003 (A. Fax, "Approximation of constrained dynamics via augmented
// potentials", after Rubin & Ungar 1957): the pendulum with its constraint replaced by
// mu C^2, C = G = x^2 + y^2 - 1 or C = G1 = e^x G (models/penalty_pendulum.hpp; unit
// pendulum, H = |p|^2/2 + y + mu C^2), integrated by Stormer-Verlet with h from the fast
// frequency (steps_per_oscillation) on the per-instance driver of the ensemble backends.
//
// What is asserted, and against what:
//  - tangential initial velocity (003 §3): the penalty motion converges to the rigid
//    pendulum (its closed form, reference/pendulum_exact.hpp) with positions at O(1/mu):
//    the fitted exponent of the deviation over mu = 1e2..1e4 is -1 (the start on the
//    circle excites a normal oscillation of amplitude O(1/mu));
//  - non-tangential initial velocity (003 §4, Fig. 2): the limits depend on the penalty.
//    Rubin-Ungar's adiabatic invariant (003 eq. 42, sqrt(a11) e = K) gives both limits in
//    closed form: for G the normal frequency is the same all along the circle, so the
//    normal energy E is constant and the limit is the rigid pendulum from the projected
//    initial data; for G1 the frequency is proportional to e^x, E(t) = E0 e^(x - x0), and
//    the limit is the rigid pendulum with the extra potential E0 e^(x - x0) (003 eq. 43),
//    integrated here independently (RK4 in the angle, h = 1e-4). Each run approaches its
//    own limit as mu grows and the two limits are apart by 0.43;
//  - Stormer-Verlet's energy error is bounded (no drift from t = 10 to t = 100) and of
//    order h^2; DOPRI5 agrees with it (both methods of the issue), Verlet converging to
//    DOPRI5 at order 2.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include <chens/ensemble/instance.hpp>
#include <chens/formulations/penalty.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/stormer_verlet.hpp>
#include <chens/models/penalty_pendulum.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "paper_support.hpp"
#include "support/integrate.hpp"

namespace chens::papers::fax_penalty {
namespace {

using PModel = PenaltyPendulum<double>;
using PSystem = PenaltyOde<PModel>;

PModel penalty_pendulum(double mu, PenaltyConstraint c) { return PModel::make(1.0, 1.0, 1.0, mu, c); }

// Fixed-step grid for Stormer-Verlet: h = (2 pi / omega_fast) / steps_per_oscillation
// (the rule integrator.steps_per_oscillation applies), samples every 0.1 up to t_end.
RunParams<double> verlet_grid(const PModel& m, int steps_per_oscillation, double t_end) {
  const double T = 2 * std::numbers::pi / PModel::fast_frequency(m.m, m.l, m.mu, m.constraint);
  // h divides 0.1 so that samples fall on the step grid.
  const index_t per_sample = static_cast<index_t>(std::ceil(0.1 / (T / steps_per_oscillation)));
  const double h = 0.1 / static_cast<double>(per_sample);
  return fixed_grid(h, static_cast<index_t>(std::llround(t_end / 0.1)) * per_sample, per_sample);
}

struct PenaltyRun {
  std::vector<double> t;
  std::vector<Model::State> z;
  std::vector<double> energy_error;
};

template <class Method>
PenaltyRun run_penalty(const PModel& m, const Model::State& z0, const RunParams<double>& rp, const Method& method) {
  const PSystem sys{m};
  auto in = make_instance<PSystem, Exact>(sys, z0, 0.0, 0, 0, rp);
  PenaltyRun r;
  for (index_t k = 0; k <= rp.samples; ++k) {
    if (k > 0) advance_to_sample(sys, method, rp, in, k);
    Metrics<double> mt;
    EXPECT_TRUE(measure_instance(sys, rp, in, k, mt)) << "lost at sample " << k;
    r.t.push_back(rp.sample_time(k));
    r.z.push_back(in.z);
    r.energy_error.push_back(mt.v[int(MetricId::energy_error)]);
  }
  return r;
}

double position_distance(const Model::State& a, const Model::State& b) { return std::hypot(a[0] - b[0], a[1] - b[1]); }

// Largest position distance of a run to a curve q(t) given at its sample times.
template <class Curve>
double max_distance(const PenaltyRun& r, Curve&& curve) {
  double d = 0;
  for (std::size_t i = 0; i < r.t.size(); ++i) d = std::max(d, position_distance(r.z[i], curve(r.t[i])));
  return d;
}

double max_of(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, x);
  return m;
}

// Rigid pendulum from (x0, y0) = (1, 0) with angular velocity w0 and the extra potential
// E0 e^(x - 1) (E0 = 0: the plain pendulum), x = sin th, y = -cos th; RK4 in (th, w) with
// h = 1e-4: positions at the sample times 0.1 k.
std::vector<Model::State> rigid_with_extra_potential(double w0, double E0, double t_end) {
  auto acc = [E0](double th) { return -std::sin(th) - E0 * std::exp(std::sin(th) - 1.0) * std::cos(th); };
  double th = std::numbers::pi / 2, w = w0;
  const int per_sample = 1000;
  const double h = 0.1 / per_sample;
  std::vector<Model::State> out{Model::State{{std::sin(th), -std::cos(th), 0, 0}}};
  for (int s = 0; s < static_cast<int>(std::llround(t_end / 0.1)); ++s) {
    for (int i = 0; i < per_sample; ++i) {
      const double k1t = w, k1w = acc(th);
      const double k2t = w + 0.5 * h * k1w, k2w = acc(th + 0.5 * h * k1t);
      const double k3t = w + 0.5 * h * k2w, k3w = acc(th + 0.5 * h * k2t);
      const double k4t = w + h * k3w, k4w = acc(th + h * k3t);
      th += h / 6 * (k1t + 2 * k2t + 2 * k3t + k4t);
      w += h / 6 * (k1w + 2 * k2w + 2 * k3w + k4w);
    }
    out.push_back(Model::State{{std::sin(th), -std::cos(th), 0, 0}});
  }
  return out;
}

const Model::State tangential{{1.0, 0.0, 0.0, -2.0}};
constexpr double vn = 0.5;                                // normal (radial) velocity of the non-tangential start
const Model::State non_tangential{{1.0, 0.0, vn, -2.0}};  // projected: (1, 0, 0, -2)

TEST(Fax2003Penalty, TangentialVelocityConvergesToTheConstrainedMotionAtOrderOneOverMu) {
  const Exact exact = Exact::make(unit_pendulum(), tangential);
  for (PenaltyConstraint c : {PenaltyConstraint::g, PenaltyConstraint::g1}) {
    std::vector<double> mus, ds;
    for (double mu : {1e2, 1e3, 1e4}) {
      const PModel m = penalty_pendulum(mu, c);
      const PenaltyRun r = run_penalty(m, tangential, verlet_grid(m, 50, 10.0), StormerVerlet{});
      const double d = max_distance(r, [&](double t) { return exact.eval(t); });
      mus.push_back(mu);
      ds.push_back(d);
      RecordProperty("deviation_" + std::string(c == PenaltyConstraint::g ? "G" : "G1") + "_mu" +
                         std::to_string(static_cast<int>(mu)),
                     std::to_string(d));
    }
    const double p = test::loglog_slope(mus, ds);
    EXPECT_NEAR(p, -1.0, 0.05) << "constraint " << (c == PenaltyConstraint::g ? "G" : "G1") << ": deviations " << ds[0]
                               << ", " << ds[1] << ", " << ds[2];
    EXPECT_LT(ds.back(), 5e-3);
  }
}

TEST(Fax2003Penalty, NonTangentialVelocityLimitsDependOnThePenaltyAsRubinUngarPredict) {
  const double t_end = 10.0;
  const std::vector<Model::State> limit_g = rigid_with_extra_potential(-2.0, 0.0, t_end);
  const std::vector<Model::State> limit_g1 = rigid_with_extra_potential(-2.0, 0.5 * vn * vn, t_end);
  double limits_apart = 0;
  for (std::size_t i = 0; i < limit_g.size(); ++i)
    limits_apart = std::max(limits_apart, position_distance(limit_g[i], limit_g1[i]));
  EXPECT_GT(limits_apart, 0.3) << "the two limit curves are distinct";
  // The G limit is the rigid pendulum from the projected data: the closed form agrees with the RK4 curve.
  const Exact projected = Exact::make(unit_pendulum(), tangential);
  for (std::size_t i = 0; i < limit_g.size(); ++i)
    ASSERT_LT(position_distance(limit_g[i], projected.eval(0.1 * static_cast<double>(i))), 1e-9);

  auto at = [](const std::vector<Model::State>& curve) {
    return [&curve](double t) { return curve[static_cast<std::size_t>(std::llround(t / 0.1))]; };
  };
  double prev_g = 0, prev_g1 = 0;
  for (double mu : {1e3, 1e4}) {
    const PModel mg = penalty_pendulum(mu, PenaltyConstraint::g), mg1 = penalty_pendulum(mu, PenaltyConstraint::g1);
    const PenaltyRun rg = run_penalty(mg, non_tangential, verlet_grid(mg, 50, t_end), StormerVerlet{});
    const PenaltyRun rg1 = run_penalty(mg1, non_tangential, verlet_grid(mg1, 50, t_end), StormerVerlet{});
    const double g_own = max_distance(rg, at(limit_g)), g1_own = max_distance(rg1, at(limit_g1));
    const double g1_other = max_distance(rg1, at(limit_g));
    double g_vs_g1 = 0;
    for (std::size_t i = 0; i < rg.t.size(); ++i) g_vs_g1 = std::max(g_vs_g1, position_distance(rg.z[i], rg1.z[i]));
    SCOPED_TRACE("mu = " + std::to_string(mu));
    // Each run tends to its own limit: the radial oscillation vn / sqrt(8 mu) plus an O(1/mu) drift.
    EXPECT_LT(g_own, vn / std::sqrt(8 * mu) + 20.0 / mu) << "G run vs its limit";
    EXPECT_LT(g1_own, vn / std::sqrt(8 * mu) + 40.0 / mu) << "G1 run vs its limit";
    if (prev_g > 0) {
      EXPECT_LT(g_own, prev_g / 4) << "G: converging as mu grows";
      EXPECT_LT(g1_own, prev_g1 / 4) << "G1: converging as mu grows";
    }
    prev_g = g_own;
    prev_g1 = g1_own;
    if (mu == 1e4) {
      EXPECT_GT(g1_other, 0.3) << "G1 does not approach the constrained motion";
      EXPECT_GT(g_vs_g1, 0.3) << "the G and G1 limits differ for non-tangential data";
    }
  }
  // ... and agree for tangential data.
  const PModel mg = penalty_pendulum(1e4, PenaltyConstraint::g), mg1 = penalty_pendulum(1e4, PenaltyConstraint::g1);
  const PenaltyRun tg = run_penalty(mg, tangential, verlet_grid(mg, 50, t_end), StormerVerlet{});
  const PenaltyRun tg1 = run_penalty(mg1, tangential, verlet_grid(mg1, 50, t_end), StormerVerlet{});
  double tang = 0;
  for (std::size_t i = 0; i < tg.t.size(); ++i) tang = std::max(tang, position_distance(tg.z[i], tg1.z[i]));
  EXPECT_LT(tang, 1e-2) << "G and G1 agree for tangential data (both within O(1/mu) of the pendulum)";
}

TEST(Fax2003Penalty, VerletEnergyErrorIsBoundedAndOfOrderTwo) {
  for (const auto& z0 : {tangential, non_tangential}) {
    const PModel m = penalty_pendulum(1e3, PenaltyConstraint::g);
    const double e10 = max_of(run_penalty(m, z0, verlet_grid(m, 50, 10.0), StormerVerlet{}).energy_error);
    const double e100 = max_of(run_penalty(m, z0, verlet_grid(m, 50, 100.0), StormerVerlet{}).energy_error);
    const double e10_fine = max_of(run_penalty(m, z0, verlet_grid(m, 100, 10.0), StormerVerlet{}).energy_error);
    SCOPED_TRACE("vn = " + std::to_string(z0[2]));
    EXPECT_LT(e100, 1.1 * e10) << "no drift over ten times longer: " << e10 << " -> " << e100;
    EXPECT_NEAR(e10 / e10_fine, 4.0, 0.6) << "halving h quarters the energy error";
  }
}

TEST(Fax2003Penalty, VerletConvergesAtOrderTwoToTightDopri5) {
  const PModel m = penalty_pendulum(100.0, PenaltyConstraint::g1);
  RunParams<double> rp = fixed_grid(0.1, 50, 1);  // samples every 0.1 up to t = 5
  rp.fixed_step = false;
  rp.rtol = rp.atol = 1e-12;
  rp.h = 1e-4;
  const PenaltyRun ref = run_penalty(m, non_tangential, rp, Dopri5<double>{rp.rtol, rp.atol});
  double prev = 0;
  for (int spo : {100, 200, 400}) {
    const PenaltyRun r = run_penalty(m, non_tangential, verlet_grid(m, spo, 5.0), StormerVerlet{});
    double d = 0;
    for (std::size_t i = 0; i < r.t.size(); ++i) d = std::max(d, position_distance(r.z[i], ref.z[i]));
    if (prev > 0) {
      EXPECT_NEAR(prev / d, 4.0, 0.5) << "steps per oscillation " << spo;
    }
    prev = d;
  }
}

}  // namespace
}  // namespace chens::papers::fax_penalty
