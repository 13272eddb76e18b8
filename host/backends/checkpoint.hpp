// A running ensemble's whole state between two segments (issue 7, docs/checkpoints.md):
// what a backend hands over to be saved and takes back to resume. Resuming continues the
// very same arithmetic (the instances' bytes, the statistics of the samples done, the
// recorded trajectories and kept initial states), so a resumed run ends bitwise where an
// uninterrupted one does; the file format is host/output/checkpoint_file.hpp.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"

namespace chens {

struct CheckpointState {
  std::string backend;               // "cpu" or "cuda": a checkpoint resumes on its own backend
  std::uint64_t instance_bytes = 0;  // bytes per instance in `instances` (the backend's layout)
  std::uint64_t size = 0;            // instances
  std::int64_t samples = 0;          // RunParams::samples: sample times 0 .. samples
  std::int64_t done = 0;             // sample times 0 .. done - 1 are finished
  double wall_seconds = 0.0;         // the run's wall time up to the checkpoint
  // Of it, integrating and measuring where timed (-1: not), and the sampled cost per
  // instance-step (EnsembleResult's): a resumed run's cost is that of all its parts.
  double integration_seconds = -1.0, measurement_seconds = -1.0;
  std::vector<std::uint64_t> step_cost;
  std::vector<unsigned char> instances;  // size * instance_bytes, the backend's layout
  // Saving: where the backend's instances are, instead of a copy in `instances` (a host
  // ensemble can fill most of the memory; the writer streams them from here).
  const unsigned char* instances_view = nullptr;
  std::vector<SampleStats> series;  // the first `done` sample times
  // [parameters] group_by: the groups' first `done` sample times, group after group (empty on
  // the ranks of a sharded run that reduce no statistics, and without groups).
  std::vector<SampleStats> group_series;
  RecordedTrajectories recorded;  // filled for the samples done
  PerInstanceResult kept;         // the kept instances' initial states
};

static_assert(std::is_trivially_copyable_v<SampleStats>, "checkpoints copy SampleStats as bytes");

// Throws unless `c` was written by this backend for this run (the file layer has already
// checked the study; this guards the bytes the backend is about to reinterpret).
inline void check_resumable(const CheckpointState& c, const char* backend, std::uint64_t instance_bytes, std::uint64_t size,
                            std::int64_t samples) {
  auto fail = [&](const std::string& what) { throw std::runtime_error("the checkpoint does not fit this run: " + what); };
  if (c.backend != backend) fail("it was written by the " + c.backend + " backend, this is the " + backend + " backend");
  if (c.instance_bytes != instance_bytes)
    fail(std::to_string(c.instance_bytes) + " bytes per instance, this build has " + std::to_string(instance_bytes));
  if (c.size != size || c.samples != samples)
    fail(std::to_string(c.size) + " instances and " + std::to_string(c.samples + 1) + " sample times, this run has " +
         std::to_string(size) + " and " + std::to_string(samples + 1));
  if (c.done < 1 || c.done > samples) fail(std::to_string(c.done) + " sample times done");
  if (c.instances.size() != size * instance_bytes || c.series.size() != static_cast<std::size_t>(c.done))
    fail("its arrays have the wrong sizes");
}

// The parts every backend saves and restores alike: statistics of the samples done, the
// recorded trajectories, the kept initial states, the wall time so far.
inline CheckpointState checkpoint_of(const EnsembleResult& res, const char* backend, std::uint64_t instance_bytes,
                                     std::uint64_t size, std::int64_t samples, std::int64_t done, double wall) {
  CheckpointState c;
  c.backend = backend;
  c.instance_bytes = instance_bytes;
  c.size = size;
  c.samples = samples;
  c.done = done;
  c.wall_seconds = wall;
  c.integration_seconds = res.integration_seconds;
  c.measurement_seconds = res.measurement_seconds;
  c.step_cost = res.step_cost;
  c.series.assign(res.series.begin(), res.series.begin() + done);
  for (const GroupResult& g : res.groups)
    c.group_series.insert(c.group_series.end(), g.series.begin(), g.series.begin() + done);
  c.recorded = res.recorded;
  c.kept.initial_state = res.kept.initial_state;
  c.kept.initial_physical = res.kept.initial_physical;
  return c;
}

inline void restore_common(EnsembleResult& res, const CheckpointState& c) {
  std::copy(c.series.begin(), c.series.end(), res.series.begin());
  if (!c.group_series.empty()) {
    if (c.group_series.size() != res.groups.size() * c.series.size())
      throw std::runtime_error("the checkpoint does not fit this run: other statistics groups");
    for (std::size_t g = 0; g < res.groups.size(); ++g)
      std::copy(c.group_series.begin() + static_cast<std::ptrdiff_t>(g * c.series.size()),
                c.group_series.begin() + static_cast<std::ptrdiff_t>((g + 1) * c.series.size()),
                res.groups[g].series.begin());
  }
  if (c.recorded.instances != res.recorded.instances || c.recorded.state.size() != res.recorded.state.size())
    throw std::runtime_error("the checkpoint does not fit this run: other recorded instances");
  res.recorded = c.recorded;
  if (c.kept.initial_state.size() != res.kept.initial_state.size())
    throw std::runtime_error("the checkpoint does not fit this run: another number of kept instances");
  res.kept.initial_state = c.kept.initial_state;
  res.kept.initial_physical = c.kept.initial_physical;
}

// A resumed run's costs: its earlier parts' (from, or none) and this process's, which the
// engine has just put into res (-1: not measured).
inline void add_earlier_costs(EnsembleResult& res, const CheckpointState* from) {
  if (!from) return;
  const auto sum = [](double earlier, double now) { return earlier < 0 ? now : now < 0 ? earlier : earlier + now; };
  res.integration_seconds = sum(from->integration_seconds, res.integration_seconds);
  res.measurement_seconds = sum(from->measurement_seconds, res.measurement_seconds);
  if (res.step_cost.empty()) {
    res.step_cost = from->step_cost;
  } else if (from->step_cost.size() == res.step_cost.size()) {
    for (std::size_t b = 0; b < res.step_cost.size(); ++b) res.step_cost[b] += from->step_cost[b];
  }
}

}  // namespace chens
