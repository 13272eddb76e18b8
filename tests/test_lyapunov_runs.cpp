// Finite-time Lyapunov exponents of runs (output.lyapunov, issue 43; geometry/tangent_system.hpp)
// against independent numbers, through the whole run (study, engine, statistics):
//  - the double pendulum's exponent at every sample equals the one of the angle-coordinate
//    computation of tests/support/double_pendulum_angles.hpp (Lagrange's equations, RK4, its
//    own forward-mode numbers) started from the run's own initial tangent, mapped into angles;
//  - the integrable pendulum's exponent goes to 0 like log t / t: lambda t - log t stays within
//    the band the orbit's speed allows (the shear of a non-isochronous oscillator);
//  - the renormalisation is exact: any interval gives the same numbers bit for bit, and the
//    wedge product of the same tangents is unchanged by it;
//  - a chain's exponent equals the central difference of two runs from initial states
//    z0 +- eps dz0 along the run's own initial tangent (no dual numbers on that side);
//  - switching the diagnostic on changes no other number of the run, bit for bit.
// The double pendulum's and the chain's tangent systems are not in the build's systems list:
// they are compiled on first use (docs/jit.md), hence this file's place in chens_jit_tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/geometry/tangent_system.hpp>
#include <chens/geometry/lyapunov.hpp>
#include <chens/models/auto_model.hpp>
#include <chens/models/chain.hpp>
#include <chens/models/double_pendulum.hpp>
#include <chens/models/pendulum.hpp>

#include "backends/parameter_laws.hpp"
#include "dispatch/run_study.hpp"
#include "dispatch/system_dispatch.hpp"
#include "study/study.hpp"
#include "support/brute_statistics.hpp"
#include "support/double_pendulum_angles.hpp"
#include "support/exponent_by_central_difference.hpp"
#include "support/spec_defaults.hpp"
#include "support/source_dir.hpp"

// The examples' triatomic (docs/custom-models.md), as its header is.
#include "../examples/custom_model/models/triatomic.hpp"

namespace chens {
namespace {

namespace angles = test::angles;
using DP = DoublePendulum<double>;
constexpr int lyap = int(MetricId::lyapunov);
using test::expect_exponent_is_central_difference;
using test::one_instance;

// The double pendulum with m = l = g = 1.
Study double_pendulum_study(const DP::State& z0) {
  Study s = one_instance(ModelKind::double_pendulum, z0, 1e-3, true);
  s.masses = {1.0, 1.0};
  s.model_values["model.lengths"] = std::vector<double>{1.0, 1.0};
  s.gravity = 1.0;
  for (const char* k : {"model.masses", "model.lengths", "model.gravity"}) s.given.insert(k);
  return s;
}

double norm8(const DP::State& v) {
  double s = 0;
  for (int c = 0; c < DP::state_size; ++c) s += v[c] * v[c];
  return std::sqrt(s);
}

TEST(LyapunovRuns, TheDoublePendulumsExponentAtEverySampleIsTheAngleCoordinatesOne) {
  const angles::Params P;
  const double y0[4] = {2.0, 2.5, 0.0, 0.0}, no_tangent[4] = {0, 0, 0, 0};
  DP::State z0, unused;
  angles::cartesian_with_tangent(P, y0, no_tangent, z0, unused);
  const Study s = double_pendulum_study(z0);
  const RunParams<double> rp = resolve(s);
  const EnsembleResult r = run_study_cpu(s, rp, ensemble_spec(s, 1));
  ASSERT_TRUE(r.metric_reported(lyap));
  ASSERT_EQ(r.lost_total(), 0u);

  // The run's initial tangent (the generic one of tangent_system.hpp), in angles.
  using TS = TangentSystem<HamiltonDirac<DP>>;
  const TS ts = TS::of(HamiltonDirac<DP>{DP{1, 1, 1, 1, 1}});
  const TS::State Z0 = ts.with_initial_tangents(z0);
  DP::State dz0;
  for (int c = 0; c < DP::state_size; ++c) dz0[c] = Z0[DP::state_size + c];
  double y[4], dy[4];
  angles::angles_with_tangent(P, z0, dz0, y, dy);
  {  // The map into angles is the inverse of the map out of them.
    DP::State zb, dzb;
    angles::cartesian_with_tangent(P, y, dy, zb, dzb);
    for (int c = 0; c < DP::state_size; ++c) {
      ASSERT_NEAR(zb[c], z0[c], 1e-14) << "state component " << c;
      ASSERT_NEAR(dzb[c], dz0[c], 1e-14 * norm8(dz0)) << "tangent component " << c;
    }
  }

  // The angle-coordinate computation with the run's step, its growth at each sample time.
  angles::Fwd a[4];
  for (int c = 0; c < 4; ++c) a[c] = {y[c], dy[c]};
  const int per_sample = static_cast<int>(std::lround(*s.sample_dt / s.h));
  for (std::size_t k = 1; k < r.series.size(); ++k) {
    for (int n = 0; n < per_sample; ++n) angles::angle_rk4(P, a, s.h);
    const double yk[4] = {a[0].v, a[1].v, a[2].v, a[3].v}, dyk[4] = {a[0].d, a[1].d, a[2].d, a[3].d};
    DP::State zk, dzk;
    angles::cartesian_with_tangent(P, yk, dyk, zk, dzk);
    const double t = r.series[k].t;
    const double oracle = std::log(norm8(dzk) / norm8(dz0)) / t;
    const double run = r.series[k].metric[lyap].mean;
    EXPECT_EQ(r.series[k].metric[lyap].count, 1u);
    // The two RK4 discretisations of the same motion: measured 4e-12 relative at t = 10 by
    // test_lyapunov.cpp's per-instance comparison.
    EXPECT_NEAR(run, oracle, 1e-9 * std::fabs(oracle)) << "t = " << t;
    if (k + 1 == r.series.size()) {
      EXPECT_GT(oracle, 0.3) << "the case this test is for: a chaotic motion";
    }
  }
  EXPECT_EQ(r.series[0].metric[lyap].mean, 0.0);  // t = 0: no growth yet
}

// The pendulum's rotation (E = 1.62 > 1), m = l = g = 1.
Study rotating_pendulum(double t_end, double sample_dt) {
  Study s;
  s.formulation = FormulationId::dirac;
  s.method = MethodId::rk4;
  s.initial = {1.0, 0.0, 0.0, -1.8};
  s.given.insert("model.initial");
  s.h = 0.01;
  s.t_end = t_end;
  s.sample_dt = sample_dt;
  s.size = 1;
  s.perturbation = 0.0;
  s.lyapunov = true;
  s.record = {0};
  return s;
}

// dz(t) ~ t b f(z(t)) for a tangent off the flow's direction (f the vector field), so
// lambda t - log t = log(|dz(t)| / |dz(0)|) - log t stays within a band as wide as log |f|
// varies along the orbit (plus a / (b t)): test_lyapunov.cpp's per-instance statement, here
// through a run. Zero growth would fall by log(t1 / t0) = 2.3 across the window, exponential
// growth rise linearly.
TEST(LyapunovRuns, TheIntegrablePendulumsExponentVanishesLikeLogTOverT) {
  const Study s = rotating_pendulum(1000.0, 10.0);
  const RunParams<double> rp = resolve(s);
  const EnsembleResult r = run_study_cpu(s, rp, ensemble_spec(s, 1));
  ASSERT_EQ(r.lost_total(), 0u);
  const RecordedTrajectories& rec = r.recorded;
  ASSERT_EQ(rec.instances.size(), 1u);
  const Pendulum<double> m{1.0, 1.0, 1.0};
  double c_min = INFINITY, c_max = -INFINITY, f_min = INFINITY, f_max = 0;
  for (std::size_t k = 0; k < r.series.size(); ++k) {
    const double t = r.series[k].t;
    if (t < 100.0) continue;
    const double c = r.series[k].metric[lyap].mean * t - std::log(t);
    c_min = std::min(c_min, c);
    c_max = std::max(c_max, c);
    Pendulum<double>::State z, f;
    for (int j = 0; j < 4; ++j) z[j] = rec.state[k * 4 + static_cast<std::size_t>(j)];
    hamilton_dirac_rhs(m, z, f);
    const double speed = std::sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2] + f[3] * f[3]);
    f_min = std::min(f_min, speed);
    f_max = std::max(f_max, speed);
  }
  SCOPED_TRACE("lambda t - log t in [" + std::to_string(c_min) + ", " + std::to_string(c_max) + "], |f| in [" +
               std::to_string(f_min) + ", " + std::to_string(f_max) + "]");
  EXPECT_LT(c_max - c_min, std::log(f_max / f_min) + 0.05);
  const double last = r.series.back().metric[lyap].mean;
  EXPECT_LT(last, (std::log(1000.0) + c_max) / 1000.0 + 1e-12);
  EXPECT_GT(last, 0.0);
}

// Every statistic of metric m at every sample, bit for bit.
void expect_metric_equal(const EnsembleResult& a, const EnsembleResult& b, int m, const std::string& what) {
  ASSERT_EQ(a.series.size(), b.series.size()) << what;
  for (std::size_t k = 0; k < a.series.size(); ++k) {
    EXPECT_EQ(std::memcmp(&a.series[k].metric[m], &b.series[k].metric[m], sizeof(Accumulator)), 0)
        << what << ": " << metric_name(m) << " at sample " << k;
    EXPECT_EQ(std::memcmp(a.series[k].quantile[m], b.series[k].quantile[m], sizeof a.series[k].quantile[m]), 0)
        << what << ": " << metric_name(m) << "'s quantiles at sample " << k;
  }
}

// Every number but the exponent's: the other metrics, the counters, the losses, the states.
void expect_all_but_the_exponent_equal(const EnsembleResult& a, const EnsembleResult& b, const std::string& what) {
  for (int m = 0; m < metric_count; ++m)
    if (m != lyap && a.metric_reported(m)) expect_metric_equal(a, b, m, what);
  EXPECT_EQ(std::memcmp(&a.totals, &b.totals, sizeof(Counters)), 0) << what << ": counters";
  EXPECT_EQ(std::memcmp(a.lost, b.lost, sizeof a.lost), 0) << what << ": lost";
  EXPECT_EQ(a.kept.final_physical, b.kept.final_physical) << what;
  EXPECT_EQ(a.kept.initial_physical, b.kept.initial_physical) << what;
  EXPECT_EQ(a.recorded.state, b.recorded.state) << what;
}

// Renormalising by powers of two is exact: every sample (the default), every step and never
// within the run (an interval of t_end) give the same exponent and the same wedge product,
// bit for bit, and the wedge product is the one of the run without the exponent.
TEST(LyapunovRuns, TheRenormalisationChangesNoNumber) {
  Study s = rotating_pendulum(300.0, 10.0);  // the tangents grow to ~300: renormalised many times
  s.size = 8;
  s.perturbation = 1e-2;
  s.wedge = true;
  const EnsembleResult every_sample = run_study_cpu(s, resolve(s), ensemble_spec(s, 2));
  Study every_step = s;
  every_step.lyapunov_interval = s.h;
  const EnsembleResult by_step = run_study_cpu(every_step, resolve(every_step), ensemble_spec(every_step, 2));
  Study once = s;
  once.lyapunov_interval = s.t_end;
  const EnsembleResult at_end = run_study_cpu(once, resolve(once), ensemble_spec(once, 2));
  Study wedge_only = s;
  wedge_only.lyapunov = false;
  const EnsembleResult plain = run_study_cpu(wedge_only, resolve(wedge_only), ensemble_spec(wedge_only, 2));
  ASSERT_TRUE(every_sample.metric_reported(lyap));
  ASSERT_FALSE(plain.metric_reported(lyap));
  for (const auto* other : {&by_step, &at_end}) {
    expect_metric_equal(every_sample, *other, lyap, "the exponent, renormalised at another interval");
    expect_all_but_the_exponent_equal(every_sample, *other, "renormalised at another interval");
  }
  expect_all_but_the_exponent_equal(every_sample, plain, "with the exponent against without");
  expect_metric_equal(every_sample, plain, int(MetricId::wedge_error), "the wedge product with the exponent");
  EXPECT_GT(every_sample.series.back().metric[lyap].min, 0.0);
}

// A chain of 7 atoms (the default chain: L = 1, LJ epsilon = 0.1, its default initial state),
// Hamilton-Dirac by RK4: the two runs without tangents (the built-in unit).
TEST(LyapunovRuns, AChainsExponentIsTheCentralDifferenceOfTwoRuns) {
  using C = Chain<double, 7>;
  const C chain = C::uniform(1.0, 0.1);
  const auto chain_study = [](const C::State& z, bool lyapunov) {
    Study s = one_instance(ModelKind::chain, z, 0.01, lyapunov);
    s.record = {0};
    return s;
  };
  expect_exponent_is_central_difference(chain, C::default_initial(chain), chain_study, "chain of 7 atoms");
}

// A user model from its header (issue 43: every model): the examples' triatomic, three atoms
// held rigid by three distance constraints in an anisotropic harmonic trap (9 coordinates),
// its tangent system compiled on first use over nested dual numbers (the model's own
// derivatives are forward-mode already). Its exponent against the central difference of two
// runs without tangents, as the chain's above: the dual numbers on one side, none on the other.
TEST(LyapunovRuns, AUserModelsExponentIsTheCentralDifferenceOfTwoRuns) {
  using M = AutoModel<Triatomic, double>;
  const M::Params k = test::spec_default_parameters<Triatomic>();
  const M::State z0 = test::spec_default_initial<Triatomic>();
  const std::string header = test::source_dir() + "/examples/custom_model/models/triatomic.hpp";
  const Study base = load_runs_text("[model]\nsource = \"" + header + "\"\n", "triatomic", {}).at(0).study;
  // The two runs keep the exponent on: their states are those of runs without it, bit for bit
  // (SwitchingItOnChangesNoOtherNumber), and one unit compiled on first use serves all three.
  const auto triatomic_study = [&](const M::State& z, bool) {
    Study s = one_instance(base, z, 0.01, true);
    s.record = {0};
    return s;
  };
  ASSERT_TRUE(compiles_on_first_use<CpuBackend>(triatomic_study(z0, true)));
  expect_exponent_is_central_difference(M::make(k), z0, triatomic_study, "triatomic from its header");
}

// output.lyapunov_spectrum (geometry/tangent_system.hpp's TangentSystem<Sys, K>, compiled on
// first use) on the chaotic double pendulum, three instances over T = 200: the four exponents in
// the ensemble's statistics come in pairs lambda_i + lambda_{5-i} = 0 with a zero pair and sum to
// zero within O(1/T) (the flow preserves the symplectic volume on M), the first is the metric
// `lyapunov` of the same run bit for bit, and agrees with output.lyapunov's largest exponent
// (another initial tangent) to O(1/T).
TEST(LyapunovRuns, TheDoublePendulumsSpectrumPairsAndSumsToZero) {
  const angles::Params P;
  const double y0[4] = {2.0, 2.5, 0.0, 0.0}, no_tangent[4] = {0, 0, 0, 0};
  DP::State z0, unused;
  angles::cartesian_with_tangent(P, y0, no_tangent, z0, unused);
  Study s = double_pendulum_study(z0);
  s.lyapunov = false;
  s.lyapunov_spectrum = true;
  s.h = 2e-3;
  s.t_end = 200.0;
  s.sample_dt = 50.0;
  s.size = 3;
  s.perturbation = 1e-3;
  const EnsembleResult r = run_study_cpu(s, resolve(s), ensemble_spec(s, 2));
  ASSERT_EQ(r.lost_total(), 0u);
  ASSERT_EQ(r.lyapunov_spectrum.size(), 4u);
  double lam[4], sum = 0;
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(r.lyapunov_spectrum[static_cast<std::size_t>(k)].value.count, 3u) << k;
    lam[k] = r.lyapunov_spectrum[static_cast<std::size_t>(k)].value.mean;
    sum += lam[k];
  }
  std::printf("[ spectrum ] double pendulum, T = 200, mean of 3: %.6f %.6f %.6f %.6f, sum %.2e\n", lam[0], lam[1], lam[2],
              lam[3], sum);
  const double T = s.t_end, tol = 5.0 / T;
  EXPECT_GT(r.lyapunov_spectrum[0].value.min, 10 * tol);  // chaotic: every instance
  EXPECT_NEAR(lam[0] + lam[3], 0.0, tol);
  EXPECT_NEAR(lam[1] + lam[2], 0.0, tol);
  EXPECT_NEAR(lam[1], 0.0, tol);
  EXPECT_NEAR(sum, 0.0, tol);
  // The metric lyapunov is the first exponent: the same numbers at the last sample.
  EXPECT_EQ(std::memcmp(&r.series.back().metric[lyap], &r.lyapunov_spectrum[0].value, sizeof(Accumulator)), 0);
  // output.lyapunov's tangent (another initial direction) grows at the same rate, to O(1/T).
  Study pair = s;
  pair.lyapunov_spectrum = false;
  pair.lyapunov = true;
  const EnsembleResult p = run_study_cpu(pair, resolve(pair), ensemble_spec(pair, 2));
  EXPECT_TRUE(p.lyapunov_spectrum.empty());
  EXPECT_NEAR(p.series.back().metric[lyap].mean, lam[0], 2.0 / T);
  expect_all_but_the_exponent_equal(r, p, "the spectrum against output.lyapunov");
}

// The integrable pendulum's two exponents (K = 2(2 - 1)) both vanish like log t / t, and sum to
// zero within O(1/T) (area on the 2-dimensional M).
TEST(LyapunovRuns, TheIntegrablePendulumsSpectrumVanishes) {
  Study s = rotating_pendulum(1000.0, 100.0);
  s.lyapunov = false;
  s.lyapunov_spectrum = true;
  const EnsembleResult r = run_study_cpu(s, resolve(s), ensemble_spec(s, 1));
  ASSERT_EQ(r.lost_total(), 0u);
  ASSERT_EQ(r.lyapunov_spectrum.size(), 2u);
  const double l1 = r.lyapunov_spectrum[0].value.mean, l2 = r.lyapunov_spectrum[1].value.mean, T = s.t_end;
  std::printf("[ spectrum ] rotating pendulum, T = 1000: %.3e %.3e\n", l1, l2);
  EXPECT_GT(l1, 0.0);
  EXPECT_LT(l1, 3.0 * std::log(T) / T);  // log t / t, not a rate
  EXPECT_NEAR(l1 + l2, 0.0, 5.0 / T);
}

// The diagnostics run the tangent systems (compiled on first use here) where the plain run uses
// the built-in unit: the same trajectories, counters and statistics, for output.lyapunov's pair
// of tangents and output.lyapunov_spectrum's four (the values part of the dual numbers is the
// plain run's arithmetic).
TEST(LyapunovRuns, SwitchingItOnChangesNoOtherNumber) {
  const angles::Params P;
  const double y0[4] = {1.0, 1.5, 0.2, -0.1}, no_tangent[4] = {0, 0, 0, 0};
  DP::State z0, unused;
  angles::cartesian_with_tangent(P, y0, no_tangent, z0, unused);
  Study without = double_pendulum_study(z0);
  without.lyapunov = false;
  without.size = 70;  // more than one block
  without.perturbation = 1e-3;
  without.t_end = 2.0;
  without.sample_dt = 0.5;
  without.h = 0.01;
  without.states = true;
  const EnsembleResult b = run_study_cpu(without, resolve(without), ensemble_spec(without, 2));
  ASSERT_FALSE(b.metric_reported(lyap));
  for (const bool spectrum : {false, true}) {
    Study with = without;
    with.lyapunov = !spectrum;
    with.lyapunov_spectrum = spectrum;
    const EnsembleResult a = run_study_cpu(with, resolve(with), ensemble_spec(with, 2));
    ASSERT_TRUE(a.metric_reported(lyap));
    ASSERT_FALSE(a.metric_reported(int(MetricId::wedge_error)));
    ASSERT_EQ(a.lyapunov_spectrum.size(), spectrum ? 4u : 0u);
    if (spectrum) {
      EXPECT_EQ(a.lyapunov_spectrum[0].value.count, 70u);
    }
    expect_all_but_the_exponent_equal(a, b,
                                      std::string("double pendulum with ") + with.exponents_key() + " against without");
    EXPECT_EQ(a.kept.final_physical.size(), 70u * DP::state_size);
  }
}

// output.lyapunov_spectrum with output.states and [parameters] group_by: pendulums of lengths
// drawn uniform in [0.5, 2] in two bins, forty instances near the default initial state, over
// T = 100. Each kept instance's two exponents (states.h5's /instances/lyapunov_spectrum) sum to
// zero within O(1/T) and the first is positive and below 3 log T / T (an integrable motion:
// growth like t, not e^(lambda t)), one instance at a time; the first is the instance's metric
// `lyapunov` bit for bit; and the ensemble's and each group's statistics are those of their
// members' exponents, reduced here directly.
TEST(LyapunovRuns, EachGroupsAndEachInstancesSpectrumIsItsMembersOwn) {
  Study s;
  s.formulation = FormulationId::dirac;
  s.method = MethodId::rk4;
  s.h = 0.01;
  s.t_end = 100.0;
  s.sample_dt = 10.0;
  s.size = 40;
  s.seed = 29;
  s.perturbation = 1e-2;
  s.lyapunov_spectrum = true;
  s.states = true;
  s.vary[static_cast<std::size_t>(ParameterId::length)] = ParameterLaw{LawKind::uniform, 0.5, 2.0, {}};
  s.group_by = "length";
  s.group_bins = 2;
  SCOPED_TRACE("ensemble.seed = " + std::to_string(s.seed));
  const EnsembleResult r = run_study_cpu(s, resolve(s), ensemble_spec(s, 2));
  ASSERT_EQ(r.lost_total(), 0u);
  constexpr std::size_t K = 2, N = 40;
  ASSERT_EQ(r.lyapunov_spectrum.size(), K);
  ASSERT_EQ(r.kept.lyapunov_spectrum.size(), N * K);
  ASSERT_EQ(r.groups.size(), 2u);
  const ParameterEnsemble e = parameter_ensemble(s);
  const double T = s.t_end;
  // (the exponents are signed: signed histogram bins, as the engine's)
  test::BruteStatistics all[K] = {{true}, {true}}, group[2][K] = {{{true}, {true}}, {{true}, {true}}};
  double largest = 0;
  for (std::size_t i = 0; i < N; ++i) {
    const double* lam = &r.kept.lyapunov_spectrum[i * K];
    const std::string who = "instance " + std::to_string(i);
    EXPECT_EQ(std::memcmp(&lam[0], &r.kept.metrics[i * metric_count + lyap], sizeof(double)), 0) << who;
    EXPECT_GT(lam[0], 0.0) << who;
    EXPECT_LT(lam[0], 3.0 * std::log(T) / T) << who;
    EXPECT_NEAR(lam[0] + lam[1], 0.0, 5.0 / T) << who;
    largest = std::max(largest, lam[0]);
    const int g = e.group_of(i);
    ASSERT_TRUE(g == 0 || g == 1) << who;
    for (std::size_t k = 0; k < K; ++k) {
      all[k].add(lam[k]);
      group[g][k].add(lam[k]);
    }
  }
  for (std::size_t k = 0; k < K; ++k) {
    test::expect_statistics_match(r.lyapunov_spectrum[k].value, r.lyapunov_spectrum[k].quantile, all[k],
                                  "the ensemble's exponent " + std::to_string(k + 1));
    for (std::size_t g = 0; g < 2; ++g) {
      ASSERT_EQ(r.groups[g].lyapunov_spectrum.size(), K);
      EXPECT_GT(group[g][k].count, 10u) << "group " << g;
      test::expect_statistics_match(r.groups[g].lyapunov_spectrum[k].value, r.groups[g].lyapunov_spectrum[k].quantile,
                                    group[g][k], "group " + std::to_string(g) + "'s exponent " + std::to_string(k + 1));
    }
  }
  std::printf("[ spectrum ] pendulums, T = 100, lambda1 by group: %.4e, %.4e (largest %.4e)\n",
              r.groups[0].lyapunov_spectrum[0].value.mean, r.groups[1].lyapunov_spectrum[0].value.mean, largest);
}

}  // namespace
}  // namespace chens
