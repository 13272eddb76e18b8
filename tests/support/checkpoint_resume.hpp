// Checkpoint and resume, the test body written once for every backend (tests/test_checkpoint.cpp
// runs it on the CPU, tests/gpu on the GPU): a run stopped after some segments, its state
// written to a checkpoint file and read back, resumed (possibly several times) must end
// bitwise where the uninterrupted run ends: statistics, quantiles, counters, lost
// instances, recorded trajectories, kept initial and final states.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backends/checkpoint.hpp"
#include "dispatch/run_study.hpp"
#include "output/checkpoint_file.hpp"
#include "study/study.hpp"
#include "support/only_instances.hpp"
#include "support/temp_dir.hpp"

namespace chens::test {

using Backend = std::function<EnsembleResult(const Study&, const RunParams<double>&, const EnsembleSpec&)>;

inline bool same_bytes(const void* a, const void* b, std::size_t n) { return std::memcmp(a, b, n) == 0; }

// Everything a run's outputs are made of, bit for bit (wall time and device aside).
inline void expect_bitwise_equal(const EnsembleResult& a, const EnsembleResult& b, const std::string& what) {
  ASSERT_EQ(a.series.size(), b.series.size()) << what;
  for (std::size_t k = 0; k < a.series.size(); ++k)
    ASSERT_TRUE(same_bytes(&a.series[k], &b.series[k], sizeof(SampleStats))) << what << ": sample " << k;
  EXPECT_TRUE(same_bytes(&a.totals, &b.totals, sizeof(Counters))) << what << ": counters";
  EXPECT_TRUE(same_bytes(a.lost, b.lost, sizeof a.lost)) << what << ": lost";
  EXPECT_EQ(a.lost_examples, b.lost_examples) << what;
  EXPECT_EQ(a.lost_example_reasons, b.lost_example_reasons) << what;
  EXPECT_EQ(a.reference_projected, b.reference_projected) << what;
  EXPECT_EQ(a.instance0_state, b.instance0_state) << what;
  EXPECT_EQ(a.instance0_physical, b.instance0_physical) << what;
  EXPECT_EQ(a.recorded.instances, b.recorded.instances) << what;
  EXPECT_EQ(a.recorded.t, b.recorded.t) << what;
  EXPECT_EQ(a.recorded.state, b.recorded.state) << what;
  EXPECT_EQ(a.recorded.reference, b.recorded.reference) << what;
  EXPECT_EQ(a.recorded.metrics, b.recorded.metrics) << what;
  EXPECT_EQ(a.recorded.measured, b.recorded.measured) << what;
  EXPECT_EQ(a.kept.initial_state, b.kept.initial_state) << what;
  EXPECT_EQ(a.kept.initial_physical, b.kept.initial_physical) << what;
  EXPECT_EQ(a.kept.final_state, b.kept.final_state) << what;
  EXPECT_EQ(a.kept.final_physical, b.kept.final_physical) << what;
  EXPECT_EQ(a.kept.metrics, b.kept.metrics) << what;
  EXPECT_EQ(a.kept.lost, b.kept.lost) << what;
  ASSERT_EQ(a.kept.counters.size(), b.kept.counters.size()) << what;
  for (std::size_t i = 0; i < a.kept.counters.size(); ++i)
    EXPECT_TRUE(same_bytes(&a.kept.counters[i], &b.kept.counters[i], sizeof(Counters))) << what << ": instance " << i;
  // output's [first_passage]: the counts, the crossing times' statistics, each instance's times.
  EXPECT_EQ(a.passage.mask, b.passage.mask) << what;
  EXPECT_EQ(a.passage.counts(), b.passage.counts()) << what << ": first-passage counts";
  for (int q = 0; q < passage_slots; ++q) {
    EXPECT_TRUE(same_bytes(&a.passage.slot[q].time, &b.passage.slot[q].time, sizeof(Accumulator)))
        << what << ": first-passage times of " << passage_slot_name(q);
    EXPECT_TRUE(same_bytes(a.passage.slot[q].quantile, b.passage.slot[q].quantile, sizeof a.passage.slot[q].quantile))
        << what << ": first-passage quantiles of " << passage_slot_name(q);
  }
  EXPECT_EQ(a.kept.first_passage, b.kept.first_passage) << what;
  // [parameters] group_by: each group's statistics, sizes, losses and passages.
  ASSERT_EQ(a.groups.size(), b.groups.size()) << what;
  for (std::size_t g = 0; g < a.groups.size(); ++g) {
    const GroupResult &x = a.groups[g], &y = b.groups[g];
    EXPECT_EQ(x.counts(), y.counts()) << what << ": group " << g << "'s counts";
    ASSERT_EQ(x.series.size(), y.series.size()) << what;
    for (std::size_t k = 0; k < x.series.size(); ++k)
      ASSERT_TRUE(same_bytes(&x.series[k], &y.series[k], sizeof(SampleStats)))
          << what << ": group " << g << ", sample " << k;
    for (int q = 0; q < passage_slots; ++q)
      EXPECT_TRUE(same_bytes(&x.passage.slot[q].time, &y.passage.slot[q].time, sizeof(Accumulator)))
          << what << ": group " << g << "'s first-passage times of " << passage_slot_name(q);
  }
}

// A run stopped and resumed leg by leg: its checkpoint file, and the state read back.
struct Legs {
  TempDir dir;
  std::string path = dir.str("checkpoint.chk");
  std::uint64_t key;
  std::vector<CheckpointState> held = std::vector<CheckpointState>(1);
  const CheckpointState* from = nullptr;
  Legs(const Study& s, const RunParams<double>& rp) : key(run_key("test", to_toml(s, rp))) {}
  // `base`, resumed from the last checkpoint read back, saving into the file (the saved
  // state's sample times done into `saved`).
  EnsembleSpec spec(const EnsembleSpec& base, std::int64_t& saved) {
    EnsembleSpec spec = base;
    spec.resume_from = from;
    spec.save_checkpoint = [this, &saved](const CheckpointState& c) {
      write_checkpoint(path, key, c);
      saved = c.done;
    };
    return spec;
  }
  void read_back() {
    held[0] = read_checkpoint(path, key);
    from = &held[0];
  }
};

// Runs the study uninterrupted, then stopped after each of `stops` sample times (ascending)
// and resumed from the checkpoint file each time, and compares the two.
inline void check_resume_is_bitwise(const Backend& run, const Study& s, std::vector<std::int64_t> stops,
                                    const std::string& what) {
  const RunParams<double> rp = resolve(s);
  EnsembleSpec base = ensemble_spec(s, 2);
  base.keep_instances = 100;
  const EnsembleResult whole = run(s, rp, base);
  {  // Saving after every segment, without stopping, changes nothing (the GPU holds the next
     // segment back until the state is saved, then goes on).
    EnsembleSpec spec = base;
    std::int64_t saves = 0;
    spec.checkpoint = [](std::int64_t, std::int64_t) {
      CheckpointRequest q;
      q.save = true;
      return q;
    };
    spec.save_checkpoint = [&saves](const CheckpointState&) { ++saves; };
    const EnsembleResult saving = run(s, rp, spec);
    EXPECT_GT(saves, 0) << what;
    EXPECT_EQ(saving.stopped_at, 0) << what;
    expect_bitwise_equal(whole, saving, what + ", saving after every segment");
  }

  Legs legs(s, rp);
  const CheckpointState*& from = legs.from;
  EnsembleResult last;
  int segments_stopped = 0;
  for (std::size_t leg = 0; leg <= stops.size(); ++leg) {
    const std::int64_t stop_at = leg < stops.size() ? stops[leg] : -1;
    std::int64_t saved = 0;
    EnsembleSpec spec = legs.spec(base, saved);
    spec.checkpoint = [stop_at](std::int64_t done, std::int64_t) {
      CheckpointRequest q;
      q.stop = q.save = stop_at > 0 && done >= stop_at;
      return q;
    };
    // The first segment a leg reports must follow its checkpoint: a backend that ignored
    // resume_from and started again at t = 0 would also end at the uninterrupted result.
    std::int64_t first_reported = -1;
    spec.progress = [&first_reported](std::int64_t done, std::int64_t) {
      if (first_reported < 0) first_reported = done;
    };
    last = run(s, rp, spec);
    ASSERT_GT(first_reported, from ? from->done : 0) << what << ": leg " << leg;
    ASSERT_LE(first_reported, (from ? from->done : 0) + segment_rows(rp.samples, std::int64_t(1) << 40)) << what;
    if (stop_at < 0) break;
    ASSERT_GT(last.stopped_at, 0) << what << ": leg " << leg << " did not stop";
    ASSERT_EQ(saved, last.stopped_at) << what;
    ASSERT_GE(last.stopped_at, stop_at) << what;
    ASSERT_LE(last.stopped_at, rp.samples) << what;
    ++segments_stopped;
    legs.read_back();
  }
  EXPECT_EQ(last.stopped_at, 0) << what;
  EXPECT_EQ(segments_stopped, static_cast<int>(stops.size())) << what;
  expect_bitwise_equal(whole, last, what);
  EXPECT_GT(whole.recorded.instances.size(), 1u) << what;  // the records were exercised
  // A resumed run's costs are those of all its parts (the cost comparison used only the part
  // after the resume): more integration time than its last checkpoint carried
  // (CostComparison.AResumedRunsCostIsThatOfAllItsParts counts the timed samples too).
  if (from && from->integration_seconds >= 0) {
    EXPECT_GT(from->integration_seconds, 0.0) << what;
    EXPECT_GT(last.integration_seconds, from->integration_seconds) << what;
  }
}

// Stop points inside sample intervals (issue 17, segment_plan.hpp): the study with its
// sample interval stretched to `rows` samples over the run, integrated in passes of
// `pass_steps` steps (trial steps for DOPRI5), ends bitwise where the plain run ends;
// stopped after the `stops`-th and later calls of the checkpoint question (ascending:
// some fall inside a sample interval), saved to the file and resumed each time, too.
inline void check_stop_points_are_bitwise(const Backend& run, Study s, std::int64_t rows, std::int64_t pass_steps,
                                          std::vector<int> stops, const std::string& what) {
  s.sample_dt = s.t_end / static_cast<double>(rows);
  const RunParams<double> rp = resolve(s);
  EnsembleSpec base = ensemble_spec(s, 2);
  base.keep_instances = 100;
  base.stop_seconds = 0;  // sample-row segments only
  const EnsembleResult whole = run(s, rp, base);
  EnsembleSpec passes = base;
  passes.pass_steps = pass_steps;
  {
    int calls = 0;
    EnsembleSpec spec = passes;
    spec.checkpoint = [&calls](std::int64_t, std::int64_t) {
      ++calls;
      return CheckpointRequest{};
    };
    expect_bitwise_equal(whole, run(s, rp, spec), what + ", in passes");
    // Every pass asks: many more questions than sample intervals.
    EXPECT_GT(calls, 2 * rows) << what;
  }
  Legs legs(s, rp);
  EnsembleResult last;
  int inside = 0;
  for (std::size_t leg = 0; leg <= stops.size(); ++leg) {
    const int stop_at = leg < stops.size() ? stops[leg] - (leg > 0 ? stops[leg - 1] : 0) : -1;
    int calls = 0;
    std::int64_t saved = -1;
    EnsembleSpec spec = legs.spec(passes, saved);
    spec.checkpoint = [stop_at, &calls](std::int64_t, std::int64_t) {
      const bool now = ++calls == stop_at;
      return CheckpointRequest{now, now};
    };
    last = run(s, rp, spec);
    if (stop_at < 0) break;
    ASSERT_GT(last.stopped_at, 0) << what << ": leg " << leg << " did not stop";
    ASSERT_EQ(saved, last.stopped_at) << what;
    inside += last.stopped_inside_interval ? 1 : 0;
    legs.read_back();
  }
  EXPECT_EQ(last.stopped_at, 0) << what;
  EXPECT_GT(inside, 0) << what << ": no stop fell inside a sample interval";
  expect_bitwise_equal(whole, last, what + ", stopped inside sample intervals and resumed");
}

// The studies every backend resumes: a pendulum with its closed-form reference and the
// Dirac equations; a pendulum on the naive equations with lost instances (residual bound)
// and DOPRI5's adaptive steps; a seven-atom chain whose numerical reference advances inside
// each instance; the penalty pendulum with tangents (output.wedge).
// What the GPU backend runs of a study: without its first-passage levels and parameter
// ensembles, which run on the CPU backend only for now.
inline Study on_the_gpu(Study s) {
  for (double Study::*level : passage_level_members) s.*level = 0.0;
  s.passage_lost = false;
  s.vary = {};
  s.group_by.clear();  // (grouping needs a varied parameter)
  s.group_bins = 0;
  s.group_edges.clear();
  return s;
}

inline std::vector<std::pair<std::string, Study>> resume_studies() {
  std::vector<std::pair<std::string, Study>> v;
  Study p;
  p.formulation = FormulationId::dirac;
  p.method = MethodId::rk4;
  p.size = 700;  // not a multiple of the block size
  p.h = 0.05;
  p.t_end = 20.0;
  p.sample_dt = 0.25;
  p.perturbation = 1e-3;
  p.momentum = true;
  p.projection_tol = 1e-9;
  p.record = {0, 5, 63, 64, 699};
  // output's [first_passage] (issue 22): the times live in the instances and the statistics
  // are tallied at the end, so a resumed run must carry them over bit for bit.
  p.passage_energy_error = 1e-9;
  p.passage_psi = 1e-9;
  p.passage_integration_error = 1e-4;
  p.passage_lost = true;
  v.emplace_back("pendulum_dirac_rk4", p);
  Study q = diverging_ensemble();  // lost instances, at different samples
  q.record = {0, 7, 299};
  q.passage_phi = 2.05e-2;  // crossed between samples, or lost first (test_first_passage.cpp)
  q.passage_lost = true;
  v.emplace_back("pendulum_naive_lost", q);
  Study d = p;
  d.method = MethodId::dopri5;
  d.t_end = 10.0;
  v.emplace_back("pendulum_dirac_dopri5", d);
  // [parameters] (issue 22): every instance has its own length, mass and step size (5, 10 or
  // 20 steps per sample), recomputed from its index wherever it is visited, and the plan
  // reads a resumed instance's steps on the study's grid.
  Study e = p;
  e.vary[std::size_t(ParameterId::h)] = ParameterLaw{LawKind::list, 0, 0, {0.05, 0.025, 0.0125}};
  e.vary[std::size_t(ParameterId::length)] = ParameterLaw{LawKind::normal, 1.0, 0.05, {}};
  e.vary[std::size_t(ParameterId::mass)] = ParameterLaw{LawKind::log_uniform, 0.5, 2.0, {}};
  e.t_end = 10.0;
  e.group_by = "h";  // the statistics of each step size too (three groups, reduced and saved beside the ensemble's)
  v.emplace_back("pendulum_parameter_ensemble", e);
  Study c;
  c.model_kind = ModelKind::chain;
  set_key(c, "model.atoms=7");
  c.size = 130;
  c.h = 0.01;
  c.t_end = 1.0;
  c.sample_dt = 0.05;
  c.perturbation = 1e-4;
  c.reference = "auto";
  c.record = {0, 64, 129};
  c.passage_energy_error = 1e-10;
  c.passage_angular_momentum_error = 1e-12;
  c.passage_integration_error = 1e-8;
  v.emplace_back("chain7_numerical_reference", c);
  // Issue 8: the penalty pendulum with Stormer-Verlet, carrying the wedge diagnostic's
  // tangents (12 numbers per instance).
  Study w;
  w.model_kind = ModelKind::penalty_pendulum;
  w.formulation = FormulationId::penalty;
  w.method = MethodId::verlet;
  set_key(w, "model.penalty=100.0");
  set_key(w, "model.constraint=G1");
  w.wedge = true;
  w.size = 300;
  w.t_end = 3.0;
  w.sample_dt = 0.1;
  w.perturbation = 1e-3;
  w.record = {0, 150};
  w.passage_wedge_error = 1e-12;
  v.emplace_back("penalty_verlet_wedge", w);
  return v;
}

}  // namespace chens::test
