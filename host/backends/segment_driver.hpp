// The one segment driver of every backend (issue 18): set-up, resume, the segment protocol
// of segment_plan.hpp (rows segments and passes, progress, checkpoints, stops), totals, lost
// examples and the kept instances. The backends differ only in where the instances live and
// how a segment is integrated and reduced; they plug in as an Engine (the CPU's is
// backends/cpu/cpu_engine.hpp, the GPU's kernels/cuda_engine.cuh), which provides
//
//   using Inst                    the per-instance state (ensemble/instance.hpp)
//   backend, pipelined            "cpu" / "cuda"; whether rows segment s + 1 may be launched
//                                 before segment s is collected (the GPU overlaps them)
//   system()                      the system the instances integrate
//   system_of(i)                  instance i's ([parameters]: its own model), by value
//   instance_bytes()              bytes per instance of the saved state (its own layout)
//   memory_rows()                 rows per segment its memory allows
//   prepare(rows, res)            allocation for segments of `rows` rows; may throw (nothing
//                                 has run yet); fills res.backend, device and threads
//   initialise()                  the instances at t = 0
//   restore(c), saved(c, i)       the instances from a checkpoint; instance i of one
//   instances_view()              the instances' bytes in the backend's layout, for saving
//   for_first(count, f)           f(i, instance) for instances 0 .. count - 1, on the host
//   launch(w, slot, res)          rows segment w into slot 0 or 1 (two alternate)
//   collect(w, slot, res)         its statistics into res.series and res.recorded; returns
//                                 the seconds the plan measures the segment by
//   pass(w, res)                  a pass into sample interval w.k0; whether every instance
//                                 (and reference) is there
//   finish(res)                   totals, lost reasons, reference_projected, the first lost
//                                 instances (local indices), the kept instances' metrics
//   costs(res)                    integration_seconds / measurement_seconds and step_cost where
//                                 timed (this process's part; the driver adds a resumed run's)
//   group_of(i)                   [parameters] group_by: instance i's group, or -1; launch and
//                                 collect then fill res.groups[g].series as res.series
//
// With output's [first_passage] the driver tallies the instances' passage times at the end
// (passage_tally.hpp) through for_first, for the ensemble and for each group.
//
// C++17-clean: nvcc compiles it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include <chens/ensemble/instance.hpp>

#include "backends/checkpoint.hpp"
#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"
#include "backends/instance_records.hpp"
#include "backends/passage_tally.hpp"
#include "backends/segment_plan.hpp"

namespace chens {

template <class Engine>
EnsembleResult drive_segments(Engine& engine, const RunParams<typename Engine::Real>& rp, const EnsembleSpec& spec) {
  using System = typename Engine::System;
  using Reference = typename Engine::Reference;
  constexpr int P = physical_state_size_v<System>;  // kept and recorded states
  const auto t_start = std::chrono::steady_clock::now();
  const System& sys = engine.system();
  const std::uint64_t n = spec.size;
  const std::uint64_t keep = std::min<std::uint64_t>(spec.keep_instances, n);
  const index_t samples = rp.samples;
  const index_t seg = spec.segment_rows > 0 ? spec.segment_rows : segment_rows(samples, engine.memory_rows());

  EnsembleResult res;
  res.instances = n;
  res.reference_available = Reference::available && rp.reference;
  res.momentum_metrics = decltype(sys.model)::has_momentum_integrals;
  res.linear_momentum_metric = reports_linear_momentum_v<decltype(sys.model)>;
  res.wedge_metric = has_tangents_v<System>;
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
    check_resumable(*from, Engine::backend, engine.instance_bytes(), n, samples);
    engine.restore(*from);
    restore_common(res, *from);
  } else {
    engine.initialise();
    engine.for_first(keep, [&](std::uint64_t i, const auto& in) { keep_initial(res.kept, engine.system_of(i), i, in); });
  }
  res.setup_seconds = wall() - earlier_wall;  // allocation and initial data
  if (rp.passage.any()) res.kept.first_passage.assign(keep * passage_slots, INFINITY);

  SegmentPlan plan(samples, seg, rp.fixed_step, rp.steps_per_sample, rp.total_steps, spec.segment_rows,
                   static_cast<bool>(spec.reduce_segment), spec.pass_steps, spec.stop_seconds);
  if (from) plan.resume_at(from->done, n, [&](std::uint64_t i) { return engine.saved(*from, i); });

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
    CheckpointState c = checkpoint_of(res, Engine::backend, engine.instance_bytes(), n, samples, done, wall());
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
    if (Engine::pipelined && more && !q.save && !q.stop) {
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
  if (rp.passage.any())
    tally_passage(rp, spec, n, [&](auto&& f) { engine.for_first(n, f); }, res.passage);
  // The groups' sizes, losses and passages (every rank of a sharded run tallies each group:
  // the reductions are collective).
  if (!res.groups.empty()) {
    engine.for_first(n, [&](std::uint64_t i, const auto& in) {
      const int g = engine.group_of(i);
      if (g < 0) return;
      res.groups[static_cast<std::size_t>(g)].instances += 1;
      if (in.lost != int(LostReason::none)) res.groups[static_cast<std::size_t>(g)].lost += 1;
    });
    for (std::size_t g = 0; rp.passage.any() && g < res.groups.size(); ++g) {
      auto members = [&](auto&& f) {
        engine.for_first(n, [&](std::uint64_t i, const auto& in) {
          if (engine.group_of(i) == static_cast<int>(g)) f(i, in);
        });
      };
      tally_passage(rp, spec, n, members, res.groups[g].passage);
    }
  }
  for (std::uint64_t& i : res.lost_examples) i = spec.global_index(i);
  // Instance 0 and the kept instances, final.
  const std::uint64_t fetch = std::min<std::uint64_t>(std::max<std::uint64_t>(keep, 1), n);
  engine.for_first(fetch, [&](std::uint64_t i, const auto& in) {
    const System sys_i = engine.system_of(i);
    if (i < keep) keep_final(res.kept, sys_i, i, in);
    if (i == 0) record_instance0_final(res, sys_i, in);
  });
  res.wall_seconds = wall();
  res.finish_seconds = res.wall_seconds - integrated;
  return res;
}

}  // namespace chens
