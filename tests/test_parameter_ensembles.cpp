// Parameter ensembles (issue 22, docs/parameter_ensembles.md): the laws' draws against their
// distributions' moments, every instance against the single run with its parameters (bit for
// bit), and a pendulum ensemble over lengths against the elliptic periods of an independent
// implementation (libstdc++'s complete elliptic integral).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dispatch/run_study.hpp"
#include "backends/parameter_laws.hpp"
#include "support/only_instances.hpp"
#include "support/study_laws.hpp"

namespace chens {
namespace {

using test::set_law;

struct Moments {
  double mean = 0, var = 0, lo = INFINITY, hi = -INFINITY;
};
Moments moments(const std::vector<double>& x) {
  Moments m;
  for (double v : x) {
    m.mean += v;
    m.lo = std::min(m.lo, v);
    m.hi = std::max(m.hi, v);
  }
  m.mean /= static_cast<double>(x.size());
  for (double v : x) m.var += (v - m.mean) * (v - m.mean);
  m.var /= static_cast<double>(x.size() - 1);
  return m;
}

// Sample mean and variance of N draws within 5 standard errors of the law's: the standard
// error of the variance is sqrt((mu4 - sigma^4) / N) for the fourth central moment mu4.
void expect_moments(const std::vector<double>& x, double mean, double var, double mu4, const std::string& what) {
  const double n = static_cast<double>(x.size());
  const Moments m = moments(x);
  EXPECT_NEAR(m.mean, mean, 5.0 * std::sqrt(var / n)) << what;
  EXPECT_NEAR(m.var, var, 5.0 * std::sqrt((mu4 - var * var) / n)) << what;
}

TEST(ParameterEnsembles, DrawsHaveTheirLawsMomentsOver1e5Instances) {
  const std::uint64_t seed = 20261128;
  const std::uint64_t N = 100000;
  SCOPED_TRACE("ensemble.seed = " + std::to_string(seed));
  ParameterEnsemble e;
  e.seed = seed;
  e.law[std::size_t(ParameterId::length)] = ParameterLaw{LawKind::uniform, 0.5, 2.0, {}};
  e.law[std::size_t(ParameterId::mass)] = ParameterLaw{LawKind::normal, 1.0, 0.1, {}};
  e.law[std::size_t(ParameterId::gravity)] = ParameterLaw{LawKind::log_uniform, 0.1, 10.0, {}};
  e.law[std::size_t(ParameterId::h)] = ParameterLaw{LawKind::list, 0, 0, {0.1, 0.05, 0.025}};
  std::vector<double> length(N), mass(N), log_gravity(N);
  for (std::uint64_t i = 0; i < N; ++i) {
    const InstanceParameters v = e.at(i);
    ASSERT_EQ(v.varied, (1u << int(ParameterId::length)) | (1u << int(ParameterId::mass)) |
                            (1u << int(ParameterId::gravity)) | (1u << int(ParameterId::h)));
    length[i] = v[ParameterId::length];
    mass[i] = v[ParameterId::mass];
    log_gravity[i] = std::log(v[ParameterId::gravity]);
    // A list's values by index, and each value a function of (seed, instance, parameter) alone.
    ASSERT_EQ(v[ParameterId::h], (std::vector<double>{0.1, 0.05, 0.025})[i % 3]) << "instance " << i;
    ASSERT_EQ(v[ParameterId::length], e.value(ParameterId::length, i));
  }
  // uniform(a, b): mean (a + b) / 2, variance w^2 / 12, mu4 = w^4 / 80, values in [a, b).
  const double w = 1.5;
  expect_moments(length, 1.25, w * w / 12, w * w * w * w / 80, "uniform(0.5, 2)");
  EXPECT_GE(moments(length).lo, 0.5);
  EXPECT_LT(moments(length).hi, 2.0);
  // normal(m, s): mu4 = 3 s^4; and its tails reach beyond 4 s in 1e5 draws (P ~ 6e-5 each).
  expect_moments(mass, 1.0, 0.01, 3e-4, "normal(1, 0.1)");
  EXPECT_LT(moments(mass).lo, 1.0 - 0.35);
  EXPECT_GT(moments(mass).hi, 1.0 + 0.35);
  // log-uniform(a, b): log v uniform in [log a, log b).
  const double lw = std::log(100.0);
  expect_moments(log_gravity, 0.0, lw * lw / 12, lw * lw * lw * lw / 80, "log-uniform(0.1, 10)");
  // The parameters' streams are independent: their sample correlation within 5 / sqrt(N).
  const Moments ml = moments(length), mm = moments(mass);
  double cov = 0;
  for (std::uint64_t i = 0; i < N; ++i) cov += (length[i] - ml.mean) * (mass[i] - mm.mean);
  cov /= static_cast<double>(N - 1);
  EXPECT_LT(std::fabs(cov / std::sqrt(ml.var * mm.var)), 5.0 / std::sqrt(static_cast<double>(N)));
  // Another seed, other values.
  ParameterEnsemble f = e;
  f.seed = seed + 1;
  EXPECT_NE(f.value(ParameterId::length, 7), e.value(ParameterId::length, 7));
  // Drawn step sizes of fixed-step methods land on output.sample_dt / n.
  ParameterEnsemble g;
  g.h_grid = 0.5;
  g.law[std::size_t(ParameterId::h)] = ParameterLaw{LawKind::uniform, 0.01, 0.05, {}};
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const double h = g.value(ParameterId::h, i);
    const double n = 0.5 / h;
    EXPECT_NEAR(n, std::round(n), 1e-9 * n) << "instance " << i << ": h = " << h;
    EXPECT_GE(h, 0.5 / 50.5);
    EXPECT_LE(h, 0.5 / 9.5);
  }
}

// Instance i's final state and last metrics (the kept instances of output.states).
struct Kept {
  std::vector<double> state, metrics;
  int lost;
};
Kept kept(const EnsembleResult& r, std::uint64_t i) {
  const std::size_t S = r.kept.final_physical.size() / r.kept.lost.size();
  Kept k;
  k.state.assign(r.kept.final_physical.begin() + static_cast<std::ptrdiff_t>(i * S),
                 r.kept.final_physical.begin() + static_cast<std::ptrdiff_t>((i + 1) * S));
  k.metrics.assign(r.kept.metrics.begin() + static_cast<std::ptrdiff_t>(i * metric_count),
                   r.kept.metrics.begin() + static_cast<std::ptrdiff_t>((i + 1) * metric_count));
  k.lost = r.kept.lost[i];
  return k;
}

// Every instance of `ensemble` (whose [parameters] are lists) equals, bit for bit, the same
// instance of the single run with its values set as keys: its model from the traits entry's
// set_parameter, its nominal positions scaled by its length over the study's, its step grid
// from the same function as resolve()'s. The ensemble's instances step one at a time, the
// single runs' in the CPU's lanes of four. `set` gives the single run of one instance.
template <class Set>
void expect_instances_are_their_single_runs(Study ensemble, Set&& set, const std::string& what) {
  ensemble.states = true;
  const EnsembleResult whole = run_study_cpu(ensemble, resolve(ensemble), ensemble_spec(ensemble, 2));
  const EnsembleResult one_thread = run_study_cpu(ensemble, resolve(ensemble), ensemble_spec(ensemble, 1));
  EXPECT_EQ(whole.kept.final_physical, one_thread.kept.final_physical) << what << ": 1 thread against 2";
  std::map<std::vector<double>, EnsembleResult> singles;  // one single run per combination of values
  const ParameterEnsemble e = parameter_ensemble(ensemble);
  std::uint64_t compared = 0;
  for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(ensemble.size); ++i) {
    const InstanceParameters v = e.at(i);
    const std::vector<double> values(v.value.begin(), v.value.end());
    auto it = singles.find(values);
    if (it == singles.end()) {
      Study single = ensemble;
      single.vary = {};
      set(single, v);
      it = singles.emplace(values, run_study_cpu(single, resolve(single), ensemble_spec(single, 2))).first;
    }
    const Kept a = kept(whole, i), b = kept(it->second, i);
    ASSERT_EQ(a.state, b.state) << what << ": instance " << i;
    ASSERT_EQ(a.metrics, b.metrics) << what << ": instance " << i;
    ASSERT_EQ(a.lost, b.lost) << what << ": instance " << i;
    compared += 1;
  }
  EXPECT_EQ(compared, static_cast<std::uint64_t>(ensemble.size));
  EXPECT_GT(singles.size(), 3u) << what;
}

TEST(ParameterEnsembles, EveryInstanceIsTheSingleRunWithItsParametersBitForBit) {
  // The pendulum: lengths, masses and gravities by index (the lists' lengths 3, 2 and 1 make
  // six combinations), from a nominal state off the axes, with the closed-form reference
  // (each instance's own) and the momentum projection.
  Study p;
  p.formulation = FormulationId::dirac;
  p.method = MethodId::rk4;
  p.size = 70;
  p.seed = 11;
  p.perturbation = 1e-3;
  p.h = 0.05;
  p.t_end = 5.0;
  p.sample_dt = 0.5;
  p.momentum = true;
  p.projection_tol = 1e-10;
  p.initial = {0.6, -0.8, 0.8, 0.6};
  set_law(p, ParameterId::length, ParameterLaw{LawKind::list, 0, 0, {0.5, 1.0, 2.5}});
  set_law(p, ParameterId::mass, ParameterLaw{LawKind::list, 0, 0, {1.0, 3.0}});
  set_law(p, ParameterId::gravity, ParameterLaw{LawKind::list, 0, 0, {2.0}});
  auto pendulum = [&](Study& s, const InstanceParameters& v) {
    const double ratio = v[ParameterId::length] / p.length;
    s.length = v[ParameterId::length];
    s.mass = v[ParameterId::mass];
    s.gravity = v[ParameterId::gravity];
    s.initial = {p.initial[0] * ratio, p.initial[1] * ratio, p.initial[2], p.initial[3]};
  };
  expect_instances_are_their_single_runs(p, pendulum, "pendulum, Dirac + RK4");

  // Step sizes: 5, 10 and 20 steps per sample; each instance on its own grid.
  Study h = p;
  h.vary = {};
  set_law(h, ParameterId::h, ParameterLaw{LawKind::list, 0, 0, {0.1, 0.05, 0.025, 0.0125}});
  expect_instances_are_their_single_runs(
      h, [](Study& s, const InstanceParameters& v) { s.h = v[ParameterId::h]; }, "pendulum, step sizes");

  // DOPRI5: h is the initial trial step.
  Study d = h;
  d.method = MethodId::dopri5;
  expect_instances_are_their_single_runs(
      d, [](Study& s, const InstanceParameters& v) { s.h = v[ParameterId::h]; }, "pendulum, DOPRI5's initial steps");

  // The penalty pendulum: mu by index.
  Study q;
  q.model_kind = ModelKind::penalty_pendulum;
  q.formulation = FormulationId::penalty;
  q.method = MethodId::verlet;
  q.size = 40;
  q.h = 0.002;
  q.t_end = 1.0;
  q.sample_dt = 0.1;
  q.perturbation = 1e-3;
  q.given.insert("integrator.h");  // else h follows from the nominal mu (integrator.steps_per_oscillation)
  set_law(q, ParameterId::penalty, ParameterLaw{LawKind::list, 0, 0, {100.0, 400.0, 1600.0, 6400.0}});
  expect_instances_are_their_single_runs(
      q, [](Study& s, const InstanceParameters& v) { s.model_values["model.penalty"] = v[ParameterId::penalty]; },
      "penalty pendulum, Stormer-Verlet");

  // A 7-atom chain: bond lengths (the nominal positions scaled), masses and epsilon by index,
  // with the numerical reference of each instance's own chain.
  Study c;
  c.model_kind = ModelKind::chain;
  set_key(c, "model.atoms=7");
  c.size = 30;
  c.h = 0.01;
  c.t_end = 0.5;
  c.sample_dt = 0.1;
  c.perturbation = 1e-4;
  c.reference = "auto";
  c.momentum = true;
  c.projection_tol = 1e-10;
  set_law(c, ParameterId::bond_length, ParameterLaw{LawKind::list, 0, 0, {0.8, 1.3}});
  set_law(c, ParameterId::mass, ParameterLaw{LawKind::list, 0, 0, {1.0, 2.0, 0.5}});
  set_law(c, ParameterId::lj_epsilon, ParameterLaw{LawKind::list, 0, 0, {0.1, 0.2, 0.3, 0.05, 0.15}});
  const std::vector<double> z0 = initial_state(c);
  const double nominal_bond = system_args(c, resolve(c))[ParameterId::bond_length];  // model.bond_length
  auto chain = [&](Study& s, const InstanceParameters& v) {
    const double ratio = v[ParameterId::bond_length] / nominal_bond;
    s.model_values["model.bond_length"] = v[ParameterId::bond_length];
    s.mass = v[ParameterId::mass];
    s.model_values["model.lj_epsilon"] = v[ParameterId::lj_epsilon];
    s.initial = z0;
    for (std::size_t j = 0; j < z0.size() / 2; ++j) s.initial[j] = z0[j] * ratio;
  };
  expect_instances_are_their_single_runs(c, chain, "chain N = 7, Dirac + RK4, numerical reference");
}

// Passage times of instances on their own step grids land on the study's sample times:
// with output.sample_dt = 0.3, integrator.h = 0.02 and the instances' steps 0.1 and 0.05,
// an instance's k-th sample time (3k or 6k steps) lies an ulp above the study's (15k steps
// of 0.02) at 24 of 130 samples. A loss found at a sample is that sample's time in the
// study's grid, so the surviving fraction of `lost` is the per-sample live count at every
// sample, as without [parameters] (FirstPassage.LossTimesAreTheSamplesThatStopCountingAnInstance).
TEST(ParameterEnsembles, PassageTimesOnOwnStepGridsAreTheStudysSampleTimes) {
  Study s = test::diverging_ensemble();  // instances lost by the residual bound at different samples
  s.h = 0.02;
  s.sample_dt = 0.3;
  s.t_end = 39.0;  // 130 sample intervals; 139 of the 300 instances are lost
  set_law(s, ParameterId::h, ParameterLaw{LawKind::list, 0, 0, {0.1, 0.05}});
  s.passage_lost = true;
  s.states = true;
  const EnsembleResult r = run_study_cpu(s, resolve(s), ensemble_spec(s, 2));
  const std::uint64_t N = static_cast<std::uint64_t>(s.size);
  ASSERT_GT(r.lost_total(), 10u);
  ASSERT_LT(r.lost_total(), N - 10);
  // In integers: the instances not lost by sample k are the ones its statistics count.
  const std::vector<std::uint64_t>& ended = r.passage.slot[passage_lost].ended;
  ASSERT_EQ(ended.size(), r.series.size());
  std::uint64_t gone = 0;
  for (std::size_t k = 0; k < r.series.size(); ++k) {
    gone += ended[k];
    EXPECT_EQ(N - gone, r.series[k].metric[0].count) << "sample " << k << ", t = " << r.series[k].t;
  }
  std::uint64_t on_samples = 0, above = 0;
  for (std::uint64_t i = 0; i < N; ++i) {
    const double t = r.kept.first_passage[i * passage_slots + passage_lost];
    if (!(t < INFINITY)) continue;
    const auto at = std::find_if(r.series.begin(), r.series.end(), [&](const SampleStats& st) { return st.t == t; });
    EXPECT_NE(at, r.series.end()) << "instance " << i << " lost at t = " << t << ", not a sample time of series.csv";
    if (at == r.series.end()) continue;
    on_samples += 1;
    // Its own grid's time of that sample, k n_i h_i: above the study's for some of them, or
    // the test would not test the case.
    const double h = i % 2 == 0 ? 0.1 : 0.05;
    const double own = static_cast<double>((at - r.series.begin()) * std::llround(0.3 / h)) * h;
    above += own > t;
  }
  EXPECT_EQ(on_samples, r.lost_total());
  EXPECT_GT(above, 5u);
}

// The crossing of x from below to above zero inside [t0, t0 + dt], where x and its rate are
// x0, v0 and x1, v1 at the ends: the root of their cubic Hermite interpolant (error
// O(dt^4)), by bisection.
double upward_crossing(double t0, double dt, double x0, double v0, double x1, double v1) {
  auto x = [&](double s) {
    const double s2 = s * s, s3 = s2 * s;
    return (2 * s3 - 3 * s2 + 1) * x0 + (s3 - 2 * s2 + s) * dt * v0 + (-2 * s3 + 3 * s2) * x1 + (s3 - s2) * dt * v1;
  };
  double a = 0, b = 1;
  for (int it = 0; it < 80; ++it) {
    const double m = 0.5 * (a + b);
    (x(m) < 0 ? a : b) = m;
  }
  return t0 + 0.5 * (a + b) * dt;
}

// 002 §6's pendulum released from rest at 1 rad: instance i's length l_i drawn uniform in
// [0.5, 2]; the time between two upward zero crossings of x in its recorded trajectory is
// its period, 4 sqrt(l_i / g) K(sin(1/2)) (K from std::comp_ellint_1, not chens's AGM).
TEST(ParameterEnsembles, PendulumsOfDrawnLengthsSwingWithTheirEllipticPeriods) {
  const double theta0 = 1.0, g = 1.0;
  Study s;
  s.formulation = FormulationId::dirac;
  s.method = MethodId::rk4;
  s.size = 12;
  s.seed = 5;
  s.perturbation = 0.0;
  s.h = 1e-3;
  s.t_end = 24.0;  // two periods of the longest pendulum (~9.5 each) and some
  s.sample_dt = 0.01;
  s.momentum = true;
  s.projection_tol = 1e-12;
  s.initial = {std::sin(theta0), -std::cos(theta0), 0.0, 0.0};
  for (std::int64_t i = 0; i < s.size; ++i) s.record.push_back(i);
  set_law(s, ParameterId::length, ParameterLaw{LawKind::uniform, 0.5, 2.0, {}});
  SCOPED_TRACE("ensemble.seed = " + std::to_string(s.seed));
  const EnsembleResult r = run_study_cpu(s, resolve(s), ensemble_spec(s, 2));
  const RecordedTrajectories& rec = r.recorded;
  const std::size_t R = rec.instances.size(), S = 4, K = rec.samples();
  ASSERT_EQ(R, 12u);
  const ParameterEnsemble e = parameter_ensemble(s);
  double shortest = INFINITY, longest = 0;
  for (std::size_t j = 0; j < R; ++j) {
    const double l = e.value(ParameterId::length, rec.instances[j]);
    shortest = std::min(shortest, l);
    longest = std::max(longest, l);
    const double T = 4.0 * std::sqrt(l / g) * std::comp_ellint_1(std::sin(theta0 / 2));
    std::vector<double> up;
    for (std::size_t k = 0; k + 1 < K; ++k) {
      const double* a = &rec.state[(k * R + j) * S];
      const double* b = &rec.state[((k + 1) * R + j) * S];
      if (a[0] < 0 && b[0] >= 0)  // x' = px / m, m = 1
        up.push_back(upward_crossing(rec.t[k], rec.t[k + 1] - rec.t[k], a[0], a[2], b[0], b[2]));
    }
    ASSERT_GE(up.size(), 2u) << "instance " << rec.instances[j] << ", l = " << l;
    EXPECT_NEAR(up[1] - up[0], T, 1e-8 * T) << "instance " << rec.instances[j] << ", l = " << l;
    // Released at x = l sin(1): the amplitude is the instance's own.
    EXPECT_NEAR(rec.state[j * S], l * std::sin(theta0), 1e-14 * l) << "instance " << rec.instances[j];
  }
  EXPECT_LT(shortest, 0.8);
  EXPECT_GT(longest, 1.6);
}

}  // namespace
}  // namespace chens
