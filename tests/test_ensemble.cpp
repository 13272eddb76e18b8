// The CPU ensemble driver: determinism, statistics against a brute-force computation,
// perturbed initial data, lost instances, and the time grid.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <chens/ensemble/accumulator.hpp>
#include <chens/ensemble/instance.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/chain.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "backends/cpu/cpu_engine.hpp"
#include "dispatch/run_study.hpp"
#include "dispatch/run_study.hpp"
#include "study/study.hpp"
#include "support/only_instances.hpp"

namespace chens {
namespace {

using Model = Pendulum<double>;
using State = Model::State;

bool same_bits(const Accumulator& a, const Accumulator& b) {
  return a.count == b.count && std::memcmp(&a.mean, &b.mean, sizeof(double)) == 0 &&
         std::memcmp(&a.scale, &b.scale, sizeof(double)) == 0 && std::memcmp(&a.ssq, &b.ssq, sizeof(double)) == 0 &&
         std::memcmp(&a.min, &b.min, sizeof(double)) == 0 && std::memcmp(&a.max, &b.max, sizeof(double)) == 0;
}

EnsembleSpec spec_of(std::uint64_t size, std::uint64_t seed, double perturbation, bool trajectory, int threads) {
  EnsembleSpec e;
  e.size = size;
  e.seed = seed;
  e.perturbation = perturbation;
  if (trajectory) e.record = {0};
  e.threads = threads;
  return e;
}

Study small_study() {
  Study s;
  s.size = 1000;  // not a multiple of the block size
  s.t_end = 20.0;
  s.h = 0.05;
  s.perturbation = 1e-2;
  s.seed = 7;
  s.momentum = true;
  s.position = true;
  s.projection_tol = 1e-8;
  return s;
}

TEST(Ensemble, BitwiseIdenticalForAnyThreadCount) {
  for (const MethodId method : {MethodId::rk4, MethodId::dopri5, MethodId::gauss2}) {
    Study s = small_study();
    s.method = method;
    const RunParams<double> rp = resolve(s);
    EnsembleSpec spec = spec_of(static_cast<std::uint64_t>(s.size), s.seed, s.perturbation, true, 1);
    const EnsembleResult one = run_study_cpu(s, rp, spec);
    spec.threads = 2;
    const EnsembleResult two = run_study_cpu(s, rp, spec);
    spec.threads = 5;  // more threads than cores
    const EnsembleResult five = run_study_cpu(s, rp, spec);
    ASSERT_EQ(one.series.size(), two.series.size());
    for (std::size_t k = 0; k < one.series.size(); ++k)
      for (int m = 0; m < metric_count; ++m) {
        EXPECT_TRUE(same_bits(one.series[k].metric[m], two.series[k].metric[m])) << method_name(method) << " sample " << k;
        EXPECT_TRUE(same_bits(one.series[k].metric[m], five.series[k].metric[m])) << method_name(method) << " sample " << k;
        for (int q = 0; q < quantile_count; ++q) {
          EXPECT_EQ(one.series[k].quantile[m][q], two.series[k].quantile[m][q]) << method_name(method) << " sample " << k;
          EXPECT_EQ(one.series[k].quantile[m][q], five.series[k].quantile[m][q]) << method_name(method) << " sample " << k;
        }
      }
    EXPECT_EQ(one.totals.steps, two.totals.steps);
    EXPECT_EQ(one.totals.rhs_evaluations, five.totals.rhs_evaluations);
    EXPECT_EQ(one.totals.momentum_projections, two.totals.momentum_projections);
    EXPECT_EQ(one.instance0_state, five.instance0_state);
  }
}

TEST(Ensemble, StatisticsEqualABruteForceComputation) {
  Study s = small_study();
  s.size = 300;
  s.formulation = FormulationId::naive;
  s.momentum = false;
  s.position = false;
  s.sample_dt = 1.0;
  const RunParams<double> rp = resolve(s);
  EnsembleSpec spec = spec_of(300, s.seed, s.perturbation, false, 2);
  spec.keep_instances = 250;
  std::vector<std::int64_t> progress;
  spec.progress = [&](std::int64_t done, std::int64_t total) {
    EXPECT_EQ(total, rp.samples + 1);
    progress.push_back(done);
  };
  const EnsembleResult r = run_study_cpu(s, rp, spec);
  // Progress: after every segment, increasing, ending with all sample times; at least
  // min_segments of them when there are that many sample times.
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back(), rp.samples + 1);
  EXPECT_GE(static_cast<std::int64_t>(progress.size()), std::min<std::int64_t>(min_segments, rp.samples + 1));
  for (std::size_t i = 1; i < progress.size(); ++i) EXPECT_GT(progress[i], progress[i - 1]);
  // Brute force: every instance's metrics at every sample, summed in long double; quantiles
  // by sorting (nearest rank).
  std::vector<State> final_states;
  const Naive<Model> sys{Model{1, 1, 1}};
  const ExplicitRk<Rk4Tableau> rk4;
  const State z0{{1, 0, 0, -2}};
  std::vector<std::vector<Metrics<double>>> all(rp.samples + 1);
  for (std::uint64_t i = 0; i < 300; ++i) {
    auto in = make_instance<Naive<Model>, PendulumExact<double>>(sys, z0, s.perturbation, s.seed, i, rp);
    for (index_t k = 0; k <= rp.samples; ++k) {
      if (k > 0) advance_to_sample(sys, rk4, rp, in, k);
      Metrics<double> m;
      ASSERT_TRUE(measure_instance(sys, rp, in, k, m));
      all[k].push_back(m);
    }
    final_states.push_back(in.z);
  }
  // The kept instances are these instances.
  ASSERT_EQ(r.kept.lost.size(), 250u);
  for (std::uint64_t i = 0; i < 250; ++i) {
    for (int c = 0; c < 4; ++c) EXPECT_EQ(r.kept.final_state[i * 4 + c], final_states[i][c]) << "instance " << i;
    for (int j = 0; j < metric_count; ++j)
      EXPECT_EQ(r.kept.metrics[i * metric_count + j], all[rp.samples][i].v[j]) << "instance " << i;
    EXPECT_EQ(r.kept.lost[i], 0);
    EXPECT_EQ(r.kept.counters[i].steps, static_cast<std::uint64_t>(rp.total_steps));
  }
  for (index_t k = 0; k <= rp.samples; ++k) {
    for (int j = 0; j < metric_count; ++j) {
      long double sum = 0, sq = 0;
      double mn = std::numeric_limits<double>::infinity(), mx = -mn;
      for (const auto& m : all[k]) {
        sum += m.v[j];
        sq += static_cast<long double>(m.v[j]) * m.v[j];
        mn = std::min(mn, m.v[j]);
        mx = std::max(mx, m.v[j]);
      }
      const Accumulator& a = r.series[k].metric[j];
      ASSERT_EQ(a.count, 300u);
      const double mean = static_cast<double>(sum / 300), rms = static_cast<double>(std::sqrt(sq / 300));
      EXPECT_NEAR(a.mean, mean, 1e-13 * std::abs(mean) + 1e-300) << metric_name(j) << " sample " << k;
      EXPECT_NEAR(a.rms(), rms, 1e-13 * rms + 1e-300) << metric_name(j) << " sample " << k;
      EXPECT_EQ(a.min, mn) << metric_name(j) << " sample " << k;
      EXPECT_EQ(a.max, mx) << metric_name(j) << " sample " << k;
      std::vector<double> v;
      for (const auto& m : all[k]) v.push_back(m.v[j]);
      std::sort(v.begin(), v.end());
      for (int q = 0; q < quantile_count; ++q) {
        const double exact = v[static_cast<std::size_t>(std::ceil(quantile_level[q] * 300)) - 1];
        const double est = r.series[k].quantile[j][q];
        // In the exact quantile's bin, within the exact [min, max]: hence within 2^(1/8).
        const int b = LogBins::index(exact);
        EXPECT_GE(est, std::max(LogBins::lower(b), mn)) << metric_name(j) << " " << quantile_name[q] << " sample " << k;
        EXPECT_LE(est, std::min(LogBins::upper(b), mx)) << metric_name(j) << " " << quantile_name[q] << " sample " << k;
        if (exact > 0x1p-80) {
          EXPECT_LE(std::abs(std::log2(est / exact)), 1.0 / 8 + 1e-12) << metric_name(j) << " sample " << k;
        }
      }
    }
  }
}

TEST(Ensemble, PerturbedInstancesStayOnTheLevelSetOfTheNominalData) {
  const Model m{1.5, 0.8, 9.81};
  for (const State z0 : {State{{0.8, 0.0, 0.0, -2.0}}, State{{1.1, 0.1, 0.1, -1.9}}}) {
    const double phi0 = m.phi(Model::q_of(z0))[0], psi0 = m.psi(z0)[0];
    EXPECT_EQ(std::memcmp(perturbed_initial_state(m, z0, 1e-3, 42, 0).v, z0.v, sizeof z0.v), 0);  // instance 0 is nominal
    double max_move = 0;
    for (std::uint64_t i = 1; i < 2000; ++i) {
      const State z = perturbed_initial_state(m, z0, 1e-3, 42, i);
      EXPECT_NEAR(m.phi(Model::q_of(z))[0], phi0, 4 * 2.2e-16 * m.l * m.l) << "instance " << i;  // round-off
      EXPECT_NEAR(m.psi(z)[0], psi0, 4e-16 * (1 + std::abs(psi0))) << "instance " << i;
      for (int c = 0; c < 4; ++c) max_move = std::max(max_move, std::abs(z[c] - z0[c]));
      // The same (seed, instance) always gives the same state; another seed another one.
      const State again = perturbed_initial_state(m, z0, 1e-3, 42, i);
      EXPECT_EQ(std::memcmp(z.v, again.v, sizeof z.v), 0);
      const State other = perturbed_initial_state(m, z0, 1e-3, 43, i);
      EXPECT_NE(std::memcmp(z.v, other.v, sizeof z.v), 0);
    }
    EXPECT_GT(max_move, 5e-4);  // the perturbation is there...
    EXPECT_LT(max_move, 3e-3);  // ...and of the requested size
  }
}

// Inconsistent ensembles (000 §8): every instance but 0 starts off the manifold by exactly
// the offsets, with both signs represented, for the pendulum and the seven-atom chain.
TEST(Ensemble, InconsistentInstancesAreOffTheManifoldByTheOffsets) {
  const Model m{1.5, 0.8, 9.81};
  const State z0{{0.8, 0.0, 0.0, -2.0}};
  PerturbationShape<double> shape;
  shape.phi_offset = 0.11;
  shape.psi_offset = 0.08;
  int positive = 0;
  for (std::uint64_t i = 1; i < 500; ++i) {
    bool ok = false;
    const State z = perturbed_initial_state(m, z0, 1e-3, 7, i, &ok, shape);
    ASSERT_TRUE(ok) << "instance " << i;
    EXPECT_NEAR(std::abs(m.phi(Model::q_of(z))[0]), 0.11, 1e-14) << "instance " << i;
    EXPECT_NEAR(std::abs(m.psi(z)[0]), 0.08, 1e-14) << "instance " << i;
    positive += m.phi(Model::q_of(z))[0] > 0;
  }
  EXPECT_GT(positive, 200);
  EXPECT_LT(positive, 300);
  EXPECT_EQ(std::memcmp(perturbed_initial_state(m, z0, 1e-3, 7, 0, nullptr, shape).v, z0.v, sizeof z0.v), 0);

  using Chain7 = Chain<double, 7>;
  const Chain7 chain = Chain7::uniform(1.0, 0.1);
  Chain7::State c0;
  std::vector<double> w(7, 1.0), zc(28);
  chain_default_initial(7, 1.0, w.data(), 0.25, zc.data());
  for (int c = 0; c < 28; ++c) c0[c] = zc[static_cast<std::size_t>(c)];
  shape.phi_offset = 1e-3;
  shape.psi_offset = 2e-3;
  for (std::uint64_t i = 1; i < 50; ++i) {
    bool ok = false;
    const Chain7::State z = perturbed_initial_state(chain, c0, 1e-4, 3, i, &ok, shape);
    ASSERT_TRUE(ok) << "instance " << i;
    const auto phi = chain.phi(Chain7::q_of(z));
    const auto psi = chain.psi(z);
    for (int a = 0; a < 6; ++a) {
      EXPECT_NEAR(std::abs(phi[a]), 1e-3, 1e-14) << "instance " << i << ", bond " << a;
      EXPECT_NEAR(std::abs(psi[a]), 2e-3, 1e-14) << "instance " << i << ", bond " << a;
    }
  }
}

// The deviates of the random displacement: uniform in [-1, 1) (variance 1/3) or the
// Irwin-Hall normal (mean 0, variance 1, |x| <= 6); 100 000 samples, 5-sigma bounds.
TEST(Ensemble, PerturbationDeviatesHaveTheirDistributionsMoments) {
  for (const auto dist : {PerturbationDistribution::uniform, PerturbationDistribution::normal}) {
    const double var = dist == PerturbationDistribution::uniform ? 1.0 / 3.0 : 1.0;
    const double bound = dist == PerturbationDistribution::uniform ? 1.0 : 6.0;
    const int n = 100000;
    double sum = 0, sq = 0, peak = 0;
    for (int k = 0; k < n; ++k) {
      const double x = perturbation_deviate(11, static_cast<std::uint64_t>(k / 4), k % 4, dist);
      sum += x;
      sq += x * x;
      peak = std::max(peak, std::abs(x));
    }
    const double mean = sum / n, v = sq / n - mean * mean;
    EXPECT_NEAR(mean, 0.0, 5 * std::sqrt(var / n)) << int(dist);
    // The sample variance's standard error is var sqrt((kurtosis - 1) / n), kurtosis 1.8
    // (uniform) and 2.9 (Irwin-Hall of 12): at most var sqrt(2 / n).
    EXPECT_NEAR(v, var, 5 * var * std::sqrt(2.0 / n)) << int(dist);
    EXPECT_LE(peak, bound) << int(dist);
  }
}

// A formulation that blows up (NaN) as soon as an instance's energy exceeds a threshold:
// instances above it are lost at their first step, the others never (H is a first
// integral of the Dirac flow, so with h = 1e-3 the stages move the energy by ~1e-6 only,
// far less than the spread of the perturbed energies).
struct ExplodingDirac {
  using Real = double;
  using State = Model::State;
  static constexpr bool has_impetus = false;
  Model model;
  double e_crit;
  void rhs(const State& z, State& dz) const {
    HamiltonDirac<Model>{model}.rhs(z, dz);
    if (model.energy(z) > e_crit) dz[0] = std::numeric_limits<double>::quiet_NaN();
  }
  State physical(const State& z) const { return z; }
};

TEST(Ensemble, LostInstancesAreFrozenCountedAndExcludedFromStatistics) {
  const Model m{1, 1, 1};
  const State z0{{1, 0, 0, -2}};
  const ExplodingDirac sys{m, 2.01};  // instance 0 (E = 2) stays well below
  RunParams<double> rp;
  rp.h = 1e-3;
  rp.t_end = 0.05;
  rp.total_steps = 50;
  rp.last_h = 1e-3;
  rp.steps_per_sample = 10;
  rp.samples = 5;
  const std::uint64_t n = 500;
  const EnsembleResult r = run_ensemble<CpuBackend, ExplodingDirac, ExplicitRk<Rk4Tableau>, PendulumExact<double>>(
      sys, {}, rp, z0, spec_of(n, 3, 0.05, false, 2));
  std::uint64_t expected_lost = 0;
  for (std::uint64_t i = 0; i < n; ++i)
    if (m.energy(perturbed_initial_state(m, z0, 0.05, 3, i)) > 2.01) ++expected_lost;
  ASSERT_GT(expected_lost, 50u);
  ASSERT_LT(expected_lost, n - 50);
  EXPECT_EQ(r.lost[int(LostReason::non_finite)], expected_lost);
  EXPECT_EQ(r.lost_total(), expected_lost);
  EXPECT_EQ(r.series[0].metric[0].count, n);  // all were alive at t = 0
  for (std::size_t k = 1; k < r.series.size(); ++k) {
    EXPECT_EQ(r.series[k].metric[0].count, n - expected_lost);
    for (int j = 0; j < metric_count; ++j) {
      EXPECT_TRUE(std::isfinite(r.series[k].metric[j].mean));
      EXPECT_TRUE(std::isfinite(r.series[k].metric[j].rms()));
    }
  }
  // A lost instance keeps its last finite state and counts no steps after it died.
  EXPECT_EQ(r.totals.steps, (n - expected_lost) * 50);
}

TEST(Ensemble, FixedStepRunsEndExactlyAtTEnd) {
  for (const auto& [t_end, h, steps] : {std::tuple{100.0, 0.1, 1000}, std::tuple{1023.0, 0.025, 40920},
                                        std::tuple{1.05, 0.1, 11}, std::tuple{0.3, 0.1, 3}}) {
    Study s;
    s.size = 3;
    s.t_end = t_end;
    s.h = h;
    const RunParams<double> rp = resolve(s);
    EXPECT_EQ(rp.total_steps, steps) << t_end << " / " << h;
    const EnsembleResult r = run_study_cpu(s, rp, spec_of(3, 1, 1e-4, false, 1));
    EXPECT_EQ(r.series.back().t, t_end);
    EXPECT_EQ(r.totals.steps, static_cast<std::uint64_t>(3 * steps));
  }
}

TEST(Ensemble, AdaptiveRunsSampleExactlyAtMultiplesOfSampleDt) {
  Study s;
  s.size = 10;
  s.method = MethodId::dopri5;
  s.t_end = 10.0;
  s.sample_dt = 0.3;
  s.rtol = s.atol = 1e-9;
  const RunParams<double> rp = resolve(s);
  const EnsembleResult r = run_study_cpu(s, rp, spec_of(10, 1, 1e-4, false, 1));
  ASSERT_EQ(r.series.size(), 35u);  // 0, 0.3, ..., 9.9, 10
  for (std::size_t k = 0; k + 1 < r.series.size(); ++k) EXPECT_EQ(r.series[k].t, 0.3 * k);
  EXPECT_EQ(r.series.back().t, 10.0);
  EXPECT_LT(r.series.back().metric[0].max, 1e-6);  // integration error at t = 10
}

TEST(Accumulator, MergingPartitionsEqualsAddingSequentially) {
  std::vector<double> xs;
  for (int i = 0; i < 1000; ++i) xs.push_back(std::exp(0.05 * (i % 97)) * 1e-9 * (1 + (i * 7919) % 13));
  Accumulator all;
  for (double x : xs) all.add(x);
  for (std::size_t cut : {1u, 64u, 500u, 999u}) {
    Accumulator a, b;
    for (std::size_t i = 0; i < xs.size(); ++i) (i < cut ? a : b).add(xs[i]);
    a.merge(b);
    EXPECT_EQ(a.count, all.count);
    EXPECT_NEAR(a.mean, all.mean, 1e-14 * all.mean);
    EXPECT_NEAR(a.rms(), all.rms(), 1e-14 * all.rms());
    EXPECT_EQ(a.min, all.min);
    EXPECT_EQ(a.max, all.max);
  }
  // Finite statistics even for values near the overflow threshold.
  Accumulator big;
  big.add(1e300);
  big.add(1.5e308);
  EXPECT_TRUE(std::isfinite(big.mean));
  EXPECT_TRUE(std::isfinite(big.rms()));
}

}  // namespace
}  // namespace chens

namespace chens {
namespace {

// A perturbation as large as the pendulum itself can throw positions through the origin,
// where Newton cannot bring them back: such instances are reported lost with their own
// reason, never integrated from inconsistent data.
TEST(Ensemble, InitialDataThatCannotBeProjectedAreLostWithTheirOwnReason) {
  const Model m{1, 1, 1};
  const State z0{{1, 0, 0, -2}};
  int failed = 0;
  for (std::uint64_t i = 1; i < 4000; ++i) {
    bool ok = true;
    const State z = perturbed_initial_state(m, z0, 3.0, 5, i, &ok);
    if (!ok) {
      ++failed;
    } else {
      EXPECT_NEAR(m.phi(Model::q_of(z))[0], 0.0, 64 * 2.3e-16) << "instance " << i;
    }
  }
  EXPECT_GT(failed, 0);
  Study s;
  s.size = 4000;
  s.perturbation = 3.0;
  s.seed = 5;
  s.t_end = 1.0;
  const RunParams<double> rp = resolve(s);
  const EnsembleResult r = run_study_cpu(s, rp, spec_of(4000, 5, 3.0, false, 1));
  EXPECT_EQ(r.lost[int(LostReason::initial_projection)], static_cast<std::uint64_t>(failed));
  EXPECT_EQ(r.series[0].metric[0].count, 4000u - static_cast<std::uint64_t>(failed));  // never measured
}

}  // namespace
}  // namespace chens

namespace chens {
namespace {

// Lost-instance isolation (ensemble.lost_residual): instances whose |phi| or |psi| exceeds
// the bound are frozen at that sample and leave the statistics; every other instance's
// trajectory is untouched, so at every sample the statistics are those of the instances not
// yet over the bound, computed here from a run without the bound (every instance recorded).
TEST(Ensemble, InstancesOverTheResidualBoundLeaveTheStatisticsAndNothingElse) {
  Study s;
  s.formulation = FormulationId::naive;  // |phi| grows like t^2 (002 §6)
  s.size = 300;
  s.seed = 5;
  s.perturbation = 0.3;  // energies differ: the instances reach the bound at different times
  s.h = 0.1;
  s.t_end = 40.0;
  s.sample_dt = 1.0;
  const double bound = 2e-2;
  Study bounded = s;
  bounded.lost_residual = bound;
  const RunParams<double> rp = resolve(s), rpb = resolve(bounded);
  EnsembleSpec spec = ensemble_spec(s, 2);
  for (std::uint64_t i = 0; i < 300; ++i) spec.record.push_back(i);
  const EnsembleResult free = run_study_cpu(s, rp, spec);
  EnsembleSpec specb = ensemble_spec(bounded, 2);
  specb.keep_instances = 300;
  const EnsembleResult b = run_study_cpu(bounded, rpb, specb);

  const std::size_t K = free.recorded.samples(), R = 300;
  // The sample at which instance i first exceeds the bound in the free run (K: never).
  std::vector<std::size_t> crosses(R, K);
  for (std::size_t i = 0; i < R; ++i)
    for (std::size_t k = 0; k < K && crosses[i] == K; ++k) {
      const double* m = &free.recorded.metrics[(k * R + i) * metric_count];
      if (m[int(MetricId::phi)] > bound || m[int(MetricId::psi)] > bound) crosses[i] = k;
    }
  const auto lost =
      static_cast<std::uint64_t>(std::count_if(crosses.begin(), crosses.end(), [&](std::size_t c) { return c < K; }));
  ASSERT_GT(lost, 10u) << "seed " << s.seed;  // a mixed ensemble, or the test tests nothing
  ASSERT_LT(lost, 290u) << "seed " << s.seed;
  EXPECT_EQ(b.lost[int(LostReason::residual_bound)], lost);
  EXPECT_EQ(b.lost_total(), lost);
  for (std::size_t k = 0; k < K; ++k) {
    for (int metric :
         {int(MetricId::integration_error), int(MetricId::energy_error), int(MetricId::phi), int(MetricId::psi)}) {
      long double sum = 0;
      std::uint64_t count = 0;
      double mx = -1, mn = std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < R; ++i) {
        if (crosses[i] <= k) continue;
        const double v = free.recorded.metrics[(k * R + i) * metric_count + metric];
        sum += v;
        ++count;
        mx = std::max(mx, v);
        mn = std::min(mn, v);
      }
      const Accumulator& a = b.series[k].metric[metric];
      ASSERT_EQ(a.count, count) << "sample " << k << ", seed " << s.seed;
      if (count == 0) continue;
      EXPECT_EQ(a.max, mx) << "sample " << k << ", " << metric_name(metric);
      EXPECT_EQ(a.min, mn) << "sample " << k << ", " << metric_name(metric);
      EXPECT_NEAR(a.mean, static_cast<double>(sum / count), 1e-13 * static_cast<double>(sum / count) + 1e-300)
          << "sample " << k << ", " << metric_name(metric);
      if (metric == int(MetricId::phi) || metric == int(MetricId::psi)) {
        EXPECT_LE(a.max, bound);
      }
    }
  }
  // summary.json's lost_examples: the lowest lost indices, each with its reason.
  std::vector<std::uint64_t> first_lost;
  for (std::uint64_t i = 0; i < R && first_lost.size() < lost_examples_max; ++i)
    if (crosses[i] < K) first_lost.push_back(i);
  EXPECT_EQ(b.lost_examples, first_lost);
  for (std::size_t q = 0; q < b.lost_examples.size(); ++q) {
    EXPECT_EQ(b.lost_example_reasons[q], int(LostReason::residual_bound));
    EXPECT_EQ(b.kept.lost[b.lost_examples[q]], int(LostReason::residual_bound));
  }
  // A frozen instance keeps the state of the sample where it crossed the bound.
  for (std::size_t i = 0; i < R; ++i) {
    if (crosses[i] == K) continue;
    for (int c = 0; c < 4; ++c)
      EXPECT_EQ(b.kept.final_physical[i * 4 + c], free.recorded.state[(crosses[i] * R + i) * 4 + c]) << "instance " << i;
  }
}

}  // namespace
}  // namespace chens

namespace chens {
namespace {

// ensemble.only (tests/support/only_instances.hpp): listed instances run alone are the whole
// run's, bit for bit; the run without the diverging instances has the whole run's final
// statistics of the survivors.
TEST(Ensemble, OnlyRunsTheListedInstancesAsTheWholeEnsembleDoes) { test::check_only_matches_whole(run_study_cpu, "cpu"); }

}  // namespace
}  // namespace chens

namespace chens {
namespace {

// ensemble.lost_unconverged: with the key, an implicit step that stops at its iteration cap
// freezes the instance (reason unconverged) before the step; without it, the step is counted
// and kept; where every iteration converges the key changes nothing, bit for bit.
TEST(Ensemble, UnconvergedIterationsFreezeWhenAsked) {
  Study s;
  s.method = MethodId::midpoint;
  s.size = 100;
  s.t_end = 2.0;
  s.sample_dt = 0.5;
  auto run = [](const Study& st) { return run_study_cpu(st, resolve(st), ensemble_spec(st, 2)); };
  // Converging iterations: the key changes nothing.
  Study off = s, on = s;
  on.lost_unconverged = true;
  const EnsembleResult a = run(off), b = run(on);
  ASSERT_EQ(a.totals.unconverged_steps, 0u);
  EXPECT_EQ(b.lost_total(), 0u);
  for (std::size_t k = 0; k < a.series.size(); ++k)
    EXPECT_EQ(std::memcmp(&a.series[k], &b.series[k], sizeof(SampleStats)), 0) << "sample " << k;
  // A cap of 1 sweep with an unreachable tolerance: every step is unconverged.
  off.max_iterations = on.max_iterations = 1;
  off.tol = on.tol = 1e-300;
  const EnsembleResult c = run(off), d = run(on);
  EXPECT_EQ(c.lost_total(), 0u);
  EXPECT_EQ(c.totals.unconverged_steps, c.totals.steps);
  EXPECT_EQ(c.totals.steps, 100u * 20u);
  EXPECT_EQ(d.lost[int(LostReason::unconverged)], 100u);
  EXPECT_EQ(d.lost_total(), 100u);
  EXPECT_EQ(d.totals.steps, 0u);                // frozen before the first step was taken
  EXPECT_EQ(d.totals.unconverged_steps, 100u);  // which is counted
  EXPECT_EQ(d.series[0].metric[int(MetricId::energy_error)].count, 100u);
  EXPECT_EQ(d.series[1].metric[int(MetricId::energy_error)].count, 0u);
  ASSERT_FALSE(d.lost_examples.empty());
  EXPECT_EQ(d.lost_example_reasons[0], int(LostReason::unconverged));
}

// Issue 8. output.wedge carries tangents beside each instance (geometry/tangent_system.hpp): every
// other number of the run (statistics, quantiles, counters, final states) is bitwise that
// of the run without it, for an explicit method, an implicit one with projections, the
// midpoint rule with stage projection, RATTLE, Baumgarte and the penalty model with
// Stormer-Verlet; wedge_error is reported only when asked, and is finite.
TEST(Ensemble, WedgeChangesNoOtherNumber) {
  struct Case {
    const char* name;
    std::vector<std::string> sets;
  };
  const std::vector<Case> cases = {
      {"rk4 naive", {"integrator.method=rk4", "integrator.formulation=naive"}},
      {"midpoint extended, projections every 3",
       {"integrator.method=midpoint", "integrator.formulation=extended", "projection.position=true",
        "projection.momentum=true", "projection.tol=1e-10", "projection.every=3"}},
      {"midpoint stage projection",
       {"integrator.method=midpoint", "integrator.formulation=dirac", "projection.position=true", "projection.momentum=true",
        "projection.tol=1e-13", "projection.scheme=midpoint"}},
      {"rattle", {"integrator.method=rattle"}},
      {"rattle6", {"integrator.method=rattle6"}},
      {"baumgarte", {"integrator.formulation=baumgarte", "integrator.baumgarte_alpha=2", "integrator.baumgarte_beta=3"}},
      {"penalty verlet",
       {"model.kind=penalty-pendulum", "model.penalty=100", "model.constraint=G1", "integrator.method=verlet",
        "ensemble.kind=inconsistent", "ensemble.psi_offset=0.1"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> sets = {"ensemble.size=130",  "ensemble.seed=5",      "ensemble.perturbation=1e-3",
                                     "integrator.t_end=2", "output.sample_dt=0.5", "output.states=false"};
    if (c.name != std::string("penalty verlet")) sets.push_back("integrator.h=0.05");
    sets.insert(sets.end(), c.sets.begin(), c.sets.end());
    const Study plain = load_runs_text("", "wedge-test", sets).at(0).study;
    sets.push_back("output.wedge=true");
    const Study wedge = load_runs_text("", "wedge-test", sets).at(0).study;
    const EnsembleResult a = run_study_cpu(plain, resolve(plain), ensemble_spec(plain, 2));
    const EnsembleResult b = run_study_cpu(wedge, resolve(wedge), ensemble_spec(wedge, 2));
    EXPECT_FALSE(a.metric_reported(int(MetricId::wedge_error)));
    ASSERT_TRUE(b.metric_reported(int(MetricId::wedge_error)));
    ASSERT_EQ(a.series.size(), b.series.size());
    for (std::size_t k = 0; k < a.series.size(); ++k) {
      for (int m = 0; m < metric_count; ++m) {
        // The tangents' exponent is measured whenever tangents are carried, reported with
        // output.lyapunov only (LyapunovRuns.* compare it).
        if (m == int(MetricId::wedge_error) || m == int(MetricId::lyapunov)) continue;
        EXPECT_TRUE(same_bits(a.series[k].metric[m], b.series[k].metric[m])) << metric_name(m) << " sample " << k;
        for (int q = 0; q < quantile_count; ++q) EXPECT_EQ(a.series[k].quantile[m][q], b.series[k].quantile[m][q]);
      }
      const Accumulator& w = b.series[k].metric[int(MetricId::wedge_error)];
      EXPECT_EQ(w.count, a.series[k].metric[0].count);
      EXPECT_TRUE(std::isfinite(w.max)) << "sample " << k;
    }
    EXPECT_EQ(a.totals.steps, b.totals.steps);
    EXPECT_EQ(a.totals.iterations, b.totals.iterations);
    EXPECT_EQ(a.totals.position_projections, b.totals.position_projections);
    EXPECT_EQ(a.totals.momentum_projections, b.totals.momentum_projections);
    EXPECT_EQ(a.instance0_physical, b.instance0_physical);
    EXPECT_EQ(a.lost_total(), b.lost_total());
  }
}

// projection.every = k: the projections are checked after every k-th step only (004 Fig.
// 4.5); with a tolerance below the residuals every check projects.
TEST(Ensemble, ProjectionEveryKProjectsAfterEveryKthStepOnly) {
  for (int k : {1, 7, 20}) {
    const Study s =
        load_runs_text("", "every-test",
                       {"ensemble.size=10", "integrator.method=rk4", "integrator.formulation=naive", "integrator.h=0.01",
                        "integrator.t_end=10", "projection.position=true", "projection.momentum=true",
                        "projection.tol=1e-15", "projection.every=" + std::to_string(k)})
            .at(0)
            .study;
    const EnsembleResult r = run_study_cpu(s, resolve(s), ensemble_spec(s, 1));
    EXPECT_EQ(r.totals.steps, 10u * 1000u);
    EXPECT_EQ(r.totals.momentum_projections, 10u * (1000u / static_cast<unsigned>(k))) << "every " << k;
  }
}

// The penalty pendulum's step size: the largest h <= (2 pi / omega) / steps_per_oscillation
// that divides output.sample_dt, omega = l sqrt(8 mu / m) (e times that for G1).
TEST(Ensemble, PenaltyStepSizeFollowsTheFastFrequency) {
  for (const char* c : {"G", "G1"}) {
    for (double mu : {1e2, 1e4}) {
      const Study s = load_runs_text("", "penalty-h",
                                     {"model.kind=penalty-pendulum", "model.constraint=" + std::string(c),
                                      "model.penalty=" + std::to_string(mu), "integrator.method=verlet",
                                      "integrator.t_end=1", "output.sample_dt=0.1", "integrator.steps_per_oscillation=40"})
                          .at(0)
                          .study;
      const RunParams<double> rp = resolve(s);
      const double omega = std::sqrt(8 * mu) * (std::string(c) == "G1" ? std::exp(1.0) : 1.0);
      const double h_max = 2 * 3.141592653589793 / omega / 40;
      EXPECT_LE(rp.h, h_max * (1 + 1e-12)) << c << " mu " << mu;
      EXPECT_GT(rp.h, 0.1 / (std::floor(0.1 / h_max) + 2)) << "the largest such step";
      const double per_sample = 0.1 / rp.h;
      EXPECT_NEAR(per_sample, std::round(per_sample), 1e-9) << "h divides sample_dt";
      EXPECT_EQ(rp.steps_per_sample * rp.samples, rp.total_steps);
    }
  }
}

}  // namespace
}  // namespace chens
