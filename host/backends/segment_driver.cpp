// The one segment driver of every backend (issue 18), compiled once against the engine
// interface (engine.hpp, issue 42): set-up, resume, the segment protocol of segment_plan.hpp
// (rows segments and passes, progress, checkpoints, stops), totals, lost examples and the
// kept instances. The backends differ only in where the instances live and how a segment is
// integrated and reduced (engine.hpp). With output's [first_passage] the driver has the
// engine tally the instances' passage times at the end (passage_tally.hpp), for the ensemble
// and for each group.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/checkpoint.hpp"
#include "backends/engine.hpp"
#include "backends/instance_records.hpp"
#include "backends/segment_plan.hpp"

namespace chens {

EnsembleResult drive_segments(Engine& engine, const EnsembleSpec& spec) {
  const EngineShape shape = engine.shape();
  const int P = shape.physical_size;  // kept and recorded states
  const auto t_start = std::chrono::steady_clock::now();
  const std::uint64_t n = spec.size;
  const std::uint64_t keep = std::min<std::uint64_t>(spec.keep_instances, n);
  const index_t samples = shape.samples;
  const index_t seg = spec.segment_rows > 0 ? spec.segment_rows : segment_rows(samples, engine.memory_rows());

  EnsembleResult res;
  res.instances = n;
  res.reference_available = shape.reference_available;
  res.momentum_metrics = shape.momentum_metrics;
  res.linear_momentum_metric = shape.linear_momentum_metric;
  res.wedge_metric = shape.wedge_metric;
  res.lyapunov_metric = shape.lyapunov_metric;
  res.series.resize(static_cast<std::size_t>(samples + 1));
  res.groups.resize(spec.parameters.groups());
  for (GroupResult& g : res.groups) g.series.resize(static_cast<std::size_t>(samples + 1));
  res.kept = PerInstanceResult::sized(keep, P);
  res.recorded = recorded_sized(spec.record, spec.first_instance, n, spec.only, P, res.reference_available, samples);
  engine.prepare(seg, res);

  // A resumed run: the instances' bytes, the statistics and records of the samples done.
  const CheckpointState* from = spec.resume_from;
  const double earlier_wall = from ? from->wall_seconds : 0.0;
  auto wall = [&] {
    return earlier_wall + std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  };
  if (from) {
    check_resumable(*from, shape.backend, engine.instance_bytes(), n, samples);
    engine.restore(*from);
    restore_common(res, *from);
  } else {
    engine.initialise();
    engine.keep_initial(res.kept, keep);
  }
  res.setup_seconds = wall() - earlier_wall;  // allocation and initial data
  if (shape.passage) res.kept.first_passage.assign(keep * passage_slots, INFINITY);
  if (shape.spectrum > 0) res.kept.lyapunov_spectrum.assign(keep * static_cast<std::uint64_t>(shape.spectrum), NAN);

  SegmentPlan plan(samples, seg, shape.fixed_step, shape.steps_per_sample, shape.total_steps, spec.segment_rows,
                   static_cast<bool>(spec.reduce_segment), spec.pass_steps, spec.stop_seconds);
  if (from) plan.resume_at(from->done, engine.furthest_live_step(*from));

  // The costs so far, the earlier parts' of a resumed run included (each call from the
  // engine's own totals, so it may come more than once).
  auto costs = [&] {
    res.integration_seconds = res.measurement_seconds = -1.0;
    res.step_cost.clear();
    engine.costs(res);
    add_earlier_costs(res, from);
  };
  auto save = [&](index_t done) {
    costs();
    CheckpointState c = checkpoint_of(res, shape.backend, engine.instance_bytes(), n, samples, done, wall());
    c.instances_view = engine.instances_view();
    spec.save_checkpoint(c);
  };
  auto stopped = [&](index_t done, bool inside) {
    costs();
    res.stopped_at = done;
    res.stopped_inside_interval = inside;
    res.wall_seconds = wall();
    return res;
  };

  // Rows segment s uses slot s % 2 and covers rows [works[s % 2].k0, .k1). A pipelined engine
  // gets the next rows segment before the last is collected, unless the last one's end must
  // be saved or stopped at first (a saved state is a segment's end), or the next is a pass.
  SegmentWork works[2];
  std::int64_t launched = 0;
  std::int64_t inflight = -1;  // the rows segment launched and not collected yet, or -1
  auto launch = [&](const SegmentWork& w) {
    works[launched % 2] = w;
    engine.launch(w, static_cast<int>(launched % 2), res);
    inflight = launched++;
  };
  for (;;) {
    if (inflight < 0) {
      if (plan.finished()) break;
      const SegmentWork w = plan.next();
      plan.take(w);
      if (!w.partial) {
        launch(w);
        continue;
      }
      const auto t0 = std::chrono::steady_clock::now();
      const bool there = engine.pass(w, res);
      plan.measured(w, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), there);
      const CheckpointRequest q = spec.checkpoint ? spec.checkpoint(w.k0, samples + 1) : CheckpointRequest{};
      if (q.save && spec.save_checkpoint) save(w.k0);
      if (q.stop) return stopped(w.k0, true);
      continue;
    }
    const std::int64_t s = inflight;
    const SegmentWork w = works[s % 2];
    const bool more = w.k1 <= samples;
    CheckpointRequest q;
    if (more && spec.checkpoint) q = spec.checkpoint(w.k1, samples + 1);
    inflight = -1;
    if (shape.pipelined && more && !q.save && !q.stop) {
      const SegmentWork next = plan.next();
      if (!next.partial) {
        plan.take(next);
        launch(next);
      }
    }
    const double seconds = engine.collect(w, static_cast<int>(s % 2), res);
    if (spec.progress) spec.progress(w.k1, samples + 1);
    plan.measured(w, seconds, true);
    if (q.save && spec.save_checkpoint) save(w.k1);
    if (q.stop) return stopped(w.k1, false);
  }

  const double integrated = wall();
  costs();
  engine.finish(res);
  if (shape.passage) engine.tally_passage(spec, -1, res.passage);
  if (shape.spectrum > 0) engine.tally_spectrum(spec, -1, res.lyapunov_spectrum);  // collective, as the passages'
  // The groups' sizes, losses, passages and spectra (every rank of a sharded run tallies each
  // group: the reductions are collective).
  if (!res.groups.empty()) {
    engine.tally_groups(res);
    for (std::size_t g = 0; g < res.groups.size(); ++g) {
      if (shape.passage) engine.tally_passage(spec, static_cast<int>(g), res.groups[g].passage);
      if (shape.spectrum > 0) engine.tally_spectrum(spec, static_cast<int>(g), res.groups[g].lyapunov_spectrum);
    }
  }
  for (std::uint64_t& i : res.lost_examples) i = spec.global_index(i);
  // Instance 0 and the kept instances, final.
  engine.keep_final(res, keep);
  res.wall_seconds = wall();
  res.finish_seconds = res.wall_seconds - integrated;
  return res;
}

}  // namespace chens
