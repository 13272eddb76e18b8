// First-passage statistics (issue 22, docs/first_passage.md) on the CPU backend, against
// oracles that do not use them: the same ensemble sampled after every step and recorded
// (brute force: the first recorded value over the level, the end of the step the crossing
// lies in), the per-sample statistics' live counts (the loss), a planted ensemble whose
// crossing times are known, and a crossing known in closed form that the located times
// (ensemble/passage_location.hpp, issue 43) converge to at the method's order.
// The kernels' bodies are compared with the CPU's in test_soa_segment.cpp, resumed runs in
// test_checkpoint.cpp, ranks in tests/mpi/.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <chens/ensemble/passage_location.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/pendulum.hpp>

#include "dispatch/run_study.hpp"
#include "support/checkpoint_resume.hpp"
#include "support/closed_form_crossing.hpp"
#include "support/only_instances.hpp"

namespace chens {
namespace {

// The pendulum's Hamilton-Dirac equations by RK4 without projections: the energy error and
// the residuals drift, the integration error grows; 100 instances (two blocks).
Study drifting_pendulum() {
  Study s;
  s.formulation = FormulationId::dirac;
  s.method = MethodId::rk4;
  s.size = 100;
  s.seed = 3;
  s.perturbation = 1e-2;
  s.h = 0.1;
  s.t_end = 20.0;
  s.sample_dt = 2.0;  // 20 steps per sample
  return s;
}

double& level_of(Study& s, int m) {
  switch (m) {
    case int(MetricId::integration_error): return s.passage_integration_error;
    case int(MetricId::energy_error): return s.passage_energy_error;
    case int(MetricId::phi): return s.passage_phi;
    default: return s.passage_psi;
  }
}

// The first recorded time at which instance slot r's metric m exceeds `level`, among the
// samples k with k % every == 0; +inf if none.
double first_recorded_over(const RecordedTrajectories& rec, std::size_t r, int m, double level, std::size_t every) {
  const std::size_t R = rec.instances.size();
  for (std::size_t k = 0; k < rec.samples(); k += every)
    if (rec.measured[k * R + r] && rec.metrics[(k * R + r) * metric_count + static_cast<std::size_t>(m)] > level)
      return rec.t[k];
  return INFINITY;
}

// The nearest-rank p-quantile of xs (quantiles.hpp's definition).
double nearest_rank(std::vector<double> xs, double p) {
  std::sort(xs.begin(), xs.end());
  const std::size_t rank = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(p * static_cast<double>(xs.size()))));
  return xs[std::min(rank, xs.size()) - 1];
}

// Each instance's crossing times against the same ensemble sampled after every step
// (sample_dt = h) with every instance recorded: the first recorded value over the level is
// the end of the step a per-step metric's located crossing lies in, (t - h, t], and the
// integration error's crossing time itself (checked at the coarse run's sample times). Then
// every count and statistic of the tally from the run's times; and the run's invariance to
// threads.
TEST(FirstPassage, CrossingTimesLieInTheStepsTheBruteForceFindsThem) {
  Study fine = drifting_pendulum();
  fine.sample_dt = fine.h;
  for (std::int64_t i = 0; i < fine.size; ++i) fine.record.push_back(i);
  const EnsembleResult oracle = run_study_cpu(fine, resolve(fine), ensemble_spec(fine, 2));
  const RecordedTrajectories& rec = oracle.recorded;
  ASSERT_EQ(rec.samples(), 201u);
  ASSERT_EQ(oracle.lost_total(), 0u);

  // Each level at the median over the instances of their largest value where it is checked
  // (the integration error at the coarse run's samples, every 20th): about half of the
  // instances cross it, at times spread over the run.
  Study s = drifting_pendulum();
  const std::size_t R = rec.instances.size();
  const std::size_t every = 20;  // the coarse run's sample times among the fine run's
  for (int m : {int(MetricId::integration_error), int(MetricId::energy_error), int(MetricId::phi), int(MetricId::psi)}) {
    std::vector<double> largest(R, 0.0);
    for (std::size_t k = 0; k < rec.samples(); k += passage_per_step(m) ? 1 : every)
      for (std::size_t r = 0; r < R; ++r)
        largest[r] = std::max(largest[r], rec.metrics[(k * R + r) * metric_count + static_cast<std::size_t>(m)]);
    level_of(s, m) = nearest_rank(largest, 0.5);
    ASSERT_GT(level_of(s, m), 0.0) << metric_name(m);
  }
  s.passage_lost = true;
  s.states = true;
  const RunParams<double> rp = resolve(s);
  ASSERT_TRUE(rp.passage.per_step);
  const EnsembleResult r = run_study_cpu(s, rp, ensemble_spec(s, 2));
  ASSERT_EQ(r.kept.first_passage.size(), R * passage_slots);

  for (int m : {int(MetricId::integration_error), int(MetricId::energy_error), int(MetricId::phi), int(MetricId::psi)}) {
    const bool step = passage_per_step(m);
    const double level = level_of(s, m);
    std::vector<double> crossed, step_ends;
    std::size_t inside = 0;  // located before the end of their step
    std::vector<std::uint64_t> ended(static_cast<std::size_t>(rp.samples + 1), 0);
    for (std::size_t i = 0; i < R; ++i) {
      const double brute = first_recorded_over(rec, i, m, level, step ? 1 : every);
      const double t = r.kept.first_passage[i * passage_slots + static_cast<std::size_t>(m)];
      if (step && brute < INFINITY) {
        ASSERT_GT(t, brute - s.h * (1 + 1e-12)) << metric_name(m) << " of instance " << i << " (level " << level << ")";
        ASSERT_LE(t, brute) << metric_name(m) << " of instance " << i << " (level " << level << ")";
        if (t < brute) inside += 1;
        step_ends.push_back(brute);
      } else {
        ASSERT_EQ(t, brute) << metric_name(m) << " of instance " << i << " (level " << level << ")";
      }
      if (t < INFINITY) {
        crossed.push_back(t);
        // The coarse sample interval (t_{k-1}, t_k] holding it.
        std::size_t k = 0;
        while (rp.reference_time(static_cast<index_t>(k)) < t) ++k;
        ended[k] += 1;
      }
    }
    // A located time is the end of its step only where the crossing is there to the last bit.
    if (step) {
      EXPECT_GT(inside, crossed.size() / 2) << metric_name(m);
    }
    const PassageStats& p = r.passage.slot[m];
    ASSERT_GT(crossed.size(), 10u) << metric_name(m);  // the case this test is for
    ASSERT_LT(crossed.size(), R) << metric_name(m);
    EXPECT_EQ(p.crossed, crossed.size()) << metric_name(m);
    EXPECT_EQ(p.lost_first, 0u) << metric_name(m);
    EXPECT_EQ(p.never, R - crossed.size()) << metric_name(m);
    EXPECT_EQ(p.ended, ended) << metric_name(m);
    EXPECT_EQ(p.time.count, crossed.size());
    EXPECT_EQ(p.time.min, *std::min_element(crossed.begin(), crossed.end())) << metric_name(m);
    EXPECT_EQ(p.time.max, *std::max_element(crossed.begin(), crossed.end())) << metric_name(m);
    double sum = 0;
    for (double x : crossed) sum += x;
    EXPECT_NEAR(p.time.mean, sum / static_cast<double>(crossed.size()), 1e-12 * p.time.max) << metric_name(m);
    // Each quantile in the histogram bin of the exact order statistic (quantiles.hpp).
    for (int q = 0; q < quantile_count; ++q)
      EXPECT_EQ(LogBins::index(p.quantile[q]), LogBins::index(nearest_rank(crossed, quantile_level[q])))
          << metric_name(m) << " " << quantile_name[q] << " = " << p.quantile[q];
    std::uint64_t gone = 0;
    for (std::size_t k = 0; k < ended.size(); ++k) {
      gone += ended[k];
      EXPECT_EQ(r.passage.surviving(m, k, R), static_cast<double>(R - gone) / static_cast<double>(R)) << k;
    }
    if (step) {  // finer than the coarse samples: some crossing lies strictly between them
      const bool between = std::any_of(step_ends.begin(), step_ends.end(), [&](double t) {
        return std::fmod(std::round(t / s.h), static_cast<double>(every)) != 0.0;
      });
      EXPECT_TRUE(between) << metric_name(m);
    }
  }
  EXPECT_EQ(r.passage.slot[passage_lost].crossed, 0u);
  EXPECT_EQ(r.passage.slot[passage_lost].never, R);

  // Thread counts (and the CPU's lanes of four instances) change no bit of it; nor do levels
  // being checked change the integration.
  test::expect_bitwise_equal(r, run_study_cpu(s, rp, ensemble_spec(s, 1)), "first passage, 1 thread against 2");
  Study plain = drifting_pendulum();
  plain.states = true;
  const EnsembleResult without = run_study_cpu(plain, resolve(plain), ensemble_spec(plain, 2));
  EXPECT_EQ(without.kept.final_state, r.kept.final_state);
  EXPECT_TRUE(test::same_bytes(&without.totals, &r.totals, sizeof(Counters)));
  for (std::size_t k = 0; k < r.series.size(); ++k)
    EXPECT_TRUE(test::same_bytes(&without.series[k], &r.series[k], sizeof(SampleStats))) << k;
}

// The loss: lost_at is the first sample at which the instance is no longer live, so the
// surviving fraction of "lost" is the per-sample statistics' live count over the ensemble
// size at every sample, and each instance's time is its first unmeasured recorded sample.
TEST(FirstPassage, LossTimesAreTheSamplesThatStopCountingAnInstance) {
  Study s = test::diverging_ensemble();  // instances lost by the residual bound (2e-2) at different samples
  s.passage_lost = true;
  // Just above the residual bound: |phi| crosses it between two samples (and the instance is
  // lost at the second), or the instance is lost at a sample before |phi| reaches it (162
  // and 119 of 300; 19 are never lost).
  s.passage_phi = 2.05e-2;
  s.states = true;
  for (std::int64_t i = 0; i < s.size; ++i) s.record.push_back(i);
  const RunParams<double> rp = resolve(s);
  const EnsembleResult r = run_study_cpu(s, rp, ensemble_spec(s, 2));
  const std::uint64_t N = static_cast<std::uint64_t>(s.size);
  ASSERT_GT(r.lost_total(), 10u);
  ASSERT_LT(r.lost_total(), N);
  const PassageStats& lost = r.passage.slot[passage_lost];
  EXPECT_EQ(lost.crossed, r.lost_total());
  EXPECT_EQ(lost.never, N - r.lost_total());
  for (std::size_t k = 0; k < r.series.size(); ++k)
    EXPECT_EQ(r.passage.surviving(passage_lost, k, N) * static_cast<double>(N),
              static_cast<double>(r.series[k].metric[0].count))
        << "sample " << k;
  const RecordedTrajectories& rec = r.recorded;
  for (std::uint64_t i = 0; i < N; ++i) {
    double first_unmeasured = INFINITY;
    for (std::size_t k = 0; k < rec.samples(); ++k)
      if (!rec.measured[k * N + i]) {
        first_unmeasured = rec.t[k];
        break;
      }
    ASSERT_EQ(r.kept.first_passage[i * passage_slots + passage_lost], first_unmeasured) << "instance " << i;
    // |phi| checked after every step: at or before the first sample that records it over the
    // level, and never after the loss.
    const double phi = r.kept.first_passage[i * passage_slots + int(MetricId::phi)];
    EXPECT_LE(phi, first_recorded_over(rec, i, int(MetricId::phi), s.passage_phi, 1)) << "instance " << i;
    if (phi < INFINITY) {
      EXPECT_LE(phi, first_unmeasured) << "instance " << i;
    }
  }
  const PassageStats& phi = r.passage.slot[int(MetricId::phi)];
  EXPECT_GT(phi.crossed, 0u);
  EXPECT_GT(phi.lost_first, 0u);
  EXPECT_EQ(phi.crossed + phi.lost_first + phi.never, N);
  test::expect_bitwise_equal(r, run_study_cpu(s, rp, ensemble_spec(s, 1)), "lost, 1 thread against 2");
}

// A planted ensemble: every instance i >= 1 of an inconsistent ensemble starts |phi| =
// phi_offset off its constraint (ensemble.kind = "inconsistent", 000 §8; instance 0 is the
// unperturbed one, on it). A level below the offset is crossed by each of them at t = 0; one
// above it, with the position projected back after every step, by none.
TEST(FirstPassage, APlantedEnsembleCrossesWhereItWasPlanted) {
  Study s = drifting_pendulum();
  s.kind = "inconsistent";
  s.phi_offset = 1e-3;
  s.passage_phi = 5e-4;
  s.passage_psi = 1.0;  // far above anything the run reaches
  s.states = true;
  const RunParams<double> rp = resolve(s);
  const EnsembleResult r = run_study_cpu(s, rp, ensemble_spec(s, 2));
  const std::uint64_t N = static_cast<std::uint64_t>(s.size);
  for (std::uint64_t i = 1; i < N; ++i)
    ASSERT_EQ(r.kept.first_passage[i * passage_slots + int(MetricId::phi)], 0.0) << "instance " << i;
  EXPECT_GT(r.kept.first_passage[int(MetricId::phi)], 0.0);  // instance 0 starts on the manifold
  const PassageStats& phi = r.passage.slot[int(MetricId::phi)];
  EXPECT_GE(phi.crossed, N - 1);
  EXPECT_EQ(phi.ended[0], N - 1);
  EXPECT_EQ(phi.time.min, 0.0);
  for (double q : phi.quantile) EXPECT_EQ(q, 0.0);  // p99: the 99th of at least 99 zeros
  EXPECT_EQ(r.passage.surviving(int(MetricId::phi), 0, N), 1.0 / static_cast<double>(N));
  EXPECT_EQ(r.passage.slot[int(MetricId::psi)].never, N);
  EXPECT_EQ(r.passage.slot[int(MetricId::psi)].time.count, 0u);

  Study projected = s;
  projected.position = true;
  projected.projection_tol = 1e-10;
  projected.passage_phi = 2e-3;  // above the offset, which the first step's projection removes
  const EnsembleResult p = run_study_cpu(projected, resolve(projected), ensemble_spec(projected, 2));
  EXPECT_EQ(p.passage.slot[int(MetricId::phi)].never, N);
  EXPECT_EQ(p.passage.surviving(int(MetricId::phi), p.series.size() - 1, N), 1.0);
}

// The crossing known in closed form (support/closed_form_crossing.hpp: |phi| crosses L at
// t* = L / s). RK4's located crossings converge to t* at its order 4 as h halves, where the end
// of the step was O(h) off; DOPRI5's lie far inside its steps.
TEST(FirstPassage, LocatedCrossingsConvergeAtTheMethodsOrder) {
  using test::worst_crossing_error;
  // The errors are RK4's own (its error in phi over 4.3 time units, divided by s), order 4;
  // the ends of the steps would converge at order 1.
  double previous = 0;
  for (double h : {0.2, 0.1, 0.05, 0.025}) {
    const double e = worst_crossing_error(MethodId::rk4, h);
    if (previous > 0) {
      const double order = std::log2(previous / e);
      EXPECT_GT(order, 3.5) << "h = " << h << ": " << previous << " -> " << e;
      EXPECT_LT(order, 4.6) << "h = " << h << ": " << previous << " -> " << e;
    }
    previous = e;
  }
  EXPECT_LT(previous, 0.025 / 100);  // at h = 0.025, far inside the step
  double mean_step = 0;
  const double e = worst_crossing_error(MethodId::dopri5, 0.1, &mean_step);
  EXPECT_GT(mean_step, 0.01);
  EXPECT_LT(e, 1e-3 * mean_step) << "mean step " << mean_step;
}

// The derivative each kind of system interpolates with (passage_location.hpp,
// flow_derivative): the constrained equations' Hamilton-Dirac field under RATTLE, a tangent
// system's variational field (output.wedge), the impetus formulation's own variables. Each
// located time lies in the step the brute force (sample_dt = h) finds the crossing at the end
// of, and mostly inside it.
TEST(FirstPassage, EveryKindOfSystemLocatesInsideTheStep) {
  struct Case {
    FormulationId formulation;
    MethodId method;
    bool wedge;
    std::vector<int> metrics;
  };
  const std::vector<Case> cases = {
      {FormulationId::constrained, MethodId::rattle, true, {int(MetricId::energy_error), int(MetricId::wedge_error)}},
      {FormulationId::dirac, MethodId::rk4, true, {int(MetricId::energy_error), int(MetricId::wedge_error)}},
      {FormulationId::impetus, MethodId::gauss2, false, {int(MetricId::energy_error), int(MetricId::phi)}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(formulation_name(c.formulation)) + ", " + method_name(c.method));
    Study fine = drifting_pendulum();
    fine.size = 24;
    fine.formulation = c.formulation;
    fine.method = c.method;
    fine.wedge = c.wedge;
    fine.sample_dt = fine.h;
    fine.states = true;
    for (std::int64_t i = 0; i < fine.size; ++i) fine.record.push_back(i);
    const EnsembleResult oracle = run_study_cpu(fine, resolve(fine), ensemble_spec(fine, 2));
    const RecordedTrajectories& rec = oracle.recorded;
    const std::size_t R = rec.instances.size();
    Study s = fine;
    s.sample_dt = 2.0;
    s.record.clear();
    s.states = true;
    double* levels[metric_count] = {};
    for (int m : c.metrics) {
      std::vector<double> largest(R, 0.0);
      for (std::size_t k = 0; k < rec.samples(); ++k)
        for (std::size_t r = 0; r < R; ++r)
          largest[r] = std::max(largest[r], rec.metrics[(k * R + r) * metric_count + static_cast<std::size_t>(m)]);
      levels[m] = &(s.*passage_level_members[m]);
      *levels[m] = nearest_rank(largest, 0.5);
      ASSERT_GT(*levels[m], 0.0) << metric_name(m);
    }
    const EnsembleResult r = run_study_cpu(s, resolve(s), ensemble_spec(s, 2));
    for (int m : c.metrics) {
      std::size_t crossed = 0, inside = 0;
      for (std::size_t i = 0; i < R; ++i) {
        const double brute = first_recorded_over(rec, i, m, *levels[m], 1);
        const double t = r.kept.first_passage[i * passage_slots + static_cast<std::size_t>(m)];
        if (brute == INFINITY) {
          EXPECT_EQ(t, INFINITY) << metric_name(m) << " of instance " << i;
          continue;
        }
        crossed += 1;
        EXPECT_GT(t, brute - s.h * (1 + 1e-12)) << metric_name(m) << " of instance " << i;
        EXPECT_LE(t, brute) << metric_name(m) << " of instance " << i;
        if (t < brute) inside += 1;
      }
      EXPECT_GT(crossed, R / 4) << metric_name(m);
      EXPECT_GT(inside, crossed / 2) << metric_name(m);
    }
    EXPECT_EQ(r.kept.final_state, oracle.kept.final_state);  // locating changes no state
  }
}

// The step interpolants' own orders (passage_location.hpp), at the middle of one step of the
// pendulum's Hamilton-Dirac equations against the flow (RK4 with 1024 substeps): the cubic
// Hermite of exact end states and derivatives is O(h^4) there; DOPRI5's continuous extension
// (its own step's ends plus the quartic term h sum_i d_i k_i, Dopri5Tableau::d) O(h^5), which a wrong
// coefficient d_i would spoil.
TEST(FirstPassage, TheStepInterpolantsHaveTheirOrders) {
  using Sys = HamiltonDirac<Pendulum<double>>;
  using State = Sys::State;
  const Sys sys{Pendulum<double>{1.0, 1.0, 1.0}};
  const State z0{{0.6, -0.8, 1.2, 0.9}};  // on the circle, q.p = 0
  const auto flow = [&](double t) {
    State z = z0, zn;
    const ExplicitRk<Rk4Tableau> rk4{};
    for (int n = 0; n < 1024; ++n) {
      rk4.step(sys, z, t / 1024, zn);
      z = zn;
    }
    return z;
  };
  const auto distance = [](const State& a, const State& b) {
    double s = 0;
    for (int c = 0; c < State::size; ++c) s += (a[c] - b[c]) * (a[c] - b[c]);
    return std::sqrt(s);
  };
  double hermite_prev = 0, dense_prev = 0;
  for (double h : {0.4, 0.2, 0.1}) {
    const State mid = flow(h / 2), z1 = flow(h);
    State f0, f1;
    sys.rhs(z0, f0);
    sys.rhs(z1, f1);
    StepInterpolant<Sys> hermite{z0, z1, {}, {}, {}, 0};
    for (int c = 0; c < State::size; ++c) {
      hermite.hf0[c] = h * f0[c];
      hermite.hf1[c] = h * f1[c];
    }
    const double e_hermite = distance(hermite.at(0.5), mid);

    const Dopri5<double> dopri{1e-6, 1e-9};
    State y1, k7;
    dopri.attempt(sys, z0, f0, h, y1, k7);
    StepInterpolant<Sys> dense{z0, y1, {}, {}, {}, 0};
    dopri.dense_correction(sys, z0, f0, h, dense.correction);
    dense.terms = Dopri5<double>::dense_terms;
    for (int c = 0; c < State::size; ++c) {
      dense.hf0[c] = h * f0[c];
      dense.hf1[c] = h * k7[c];
    }
    const double e_dense = distance(dense.at(0.5), mid);
    EXPECT_LT(e_dense, e_hermite) << "h = " << h;
    if (hermite_prev > 0) {
      const double p_hermite = std::log2(hermite_prev / e_hermite), p_dense = std::log2(dense_prev / e_dense);
      EXPECT_GT(p_hermite, 3.5) << "h = " << h << ": " << hermite_prev << " -> " << e_hermite;
      EXPECT_LT(p_hermite, 4.6) << "h = " << h << ": " << hermite_prev << " -> " << e_hermite;
      EXPECT_GT(p_dense, 4.5) << "h = " << h << ": " << dense_prev << " -> " << e_dense;
      EXPECT_LT(p_dense, 5.6) << "h = " << h << ": " << dense_prev << " -> " << e_dense;
    }
    hermite_prev = e_hermite;
    dense_prev = e_dense;
    // The ends are the step's, bit for bit.
    const State start = dense.at(0.0), end = dense.at(1.0);
    for (int c = 0; c < State::size; ++c) {
      EXPECT_EQ(start[c], z0[c]) << c;
      EXPECT_EQ(end[c], y1[c]) << c;
    }
  }
}

}  // namespace
}  // namespace chens
