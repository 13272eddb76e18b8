// What every ensemble backend is asked to run, and the block size both backends reduce
// statistics in (C++17-clean: nvcc compiles it).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "backends/parameter_laws.hpp"

namespace chens {

struct Accumulator;
struct SampleStats;
struct CheckpointState;

// What the run asks a backend to do after a segment (EnsembleSpec::checkpoint): hand its
// state over to be saved, and stop there (an interrupt).
struct CheckpointRequest {
  bool save = false;
  bool stop = false;
};

struct EnsembleSpec {
  std::uint64_t size = 1;
  std::uint64_t seed = 0;
  double perturbation = 0.0;
  // Instances whose state, reference state and metrics come back at every sample time
  // (EnsembleResult::recorded), ascending and unique.
  std::vector<std::uint64_t> record;
  int threads = 0;  // CPU backend: 0 = OpenMP's default
  // The first keep_instances instances come back one by one (EnsembleResult::kept): final
  // state, metrics at the last sample, lost reason and counters.
  std::uint64_t keep_instances = 0;
  // Called between segments with the number of sample times finished and their total
  // (t = 0 included), from the calling thread.
  std::function<void(std::int64_t done, std::int64_t total)> progress;

  // Sharded runs (MPI ranks, host/mpi/): this run integrates instances [first_instance,
  // first_instance + size) of an ensemble of total_instances (0: size); first_instance is a
  // multiple of cpu_block_size, so that blocks are the ensemble's own. Instance indices
  // (initial data, record, summary.json's instance 0) are global.
  std::uint64_t first_instance = 0;
  std::uint64_t total_instances = 0;
  // ensemble.only: this run's instance i is instance only[i] of the ensemble (its initial
  // data, record and lost_examples indices), ascending, size entries; empty: first_instance + i.
  std::vector<std::uint64_t> only;
  // Sample times per segment, the same on every rank of a sharded run; 0: the backend's own
  // choice (segment_rows below, bounded by its memory).
  std::int64_t segment_rows = 0;
  // Stop points (host/backends/segment_plan.hpp): segments last about stop_seconds of wall
  // time, and a longer sample interval is crossed in passes, so that an interrupt or a due
  // checkpoint waits at most about that long at any sample interval (0: segments of
  // sample rows only). pass_steps > 0 (tests): passes of exactly that many steps (adaptive:
  // trial steps) wherever a sample interval needs more, whatever the clock says.
  double stop_seconds = 2.0;
  std::int64_t pass_steps = 0;
  // [parameters]: what the ensemble varies over its instances; instance i's values are
  // parameters.at(global_index(i)). Only the CPU backend runs such ensembles for now.
  ParameterEnsemble parameters;
  // Sharded runs: called once per segment, on every rank, with the segment's block
  // accumulators acc[((k - k0) * blocks + b) * metric_count + m] (b the local block) and
  // quantile histograms hist[((k - k0) * metric_count + m) * LogBins::count + bin]; it fills
  // series[k0 .. k1) (t is set). Unset: the backend reduces its own blocks (reduce_rows).
  std::function<void(std::int64_t k0, std::int64_t k1, const Accumulator* acc, std::int64_t blocks,
                     const std::uint32_t* hist, std::vector<SampleStats>& series)>
      reduce_segment;

  // Checkpoints (host/backends/checkpoint.hpp, docs/checkpoints.md). resume_from: continue
  // from that state instead of from t = 0 (the backend checks that it is its own: backend,
  // instance layout, size, sample times). checkpoint: asked after every segment but the
  // last (and after every pass inside a sample interval) with the sample times done and
  // their total; on save the backend hands its whole state to save_checkpoint (then
  // CheckpointState::done counts the finished sample times; the instances may be part of
  // the way into the next interval), on stop it returns at once with
  // EnsembleResult::stopped_at set.
  const CheckpointState* resume_from = nullptr;
  std::function<CheckpointRequest(std::int64_t done, std::int64_t total)> checkpoint;
  std::function<void(const CheckpointState&)> save_checkpoint;

  // GPU backend: run explicit methods through the lean step kernel where the settings allow
  // (ensemble/lean_steps.hpp), and the pendulum's Hamilton-Dirac equations through the unit
  // model when m = l = g = 1. Both give the general kernel's results bit for bit; tests
  // switch them off to prove it.
  bool gpu_lean = true;
  bool gpu_unit = true;

  // The ensemble index of this run's instance i.
  std::uint64_t global_index(std::uint64_t i) const { return only.empty() ? first_instance + i : only[i]; }
};

// Statistics are accumulated per block of this many consecutive instances, sequentially
// in instance order, and blocks are merged along a fixed tree over their indices
// (block_tree.hpp), on the CPU, on the GPU and across MPI ranks: results do not depend on
// thread counts, launch shapes or the number of ranks.
inline constexpr std::uint64_t cpu_block_size = 64;

// A run is cut into at least this many segments of sample times (when it has that many),
// so that progress is reported and the host sees results while the run goes on.
inline constexpr std::int64_t min_segments = 32;

// Sample times per segment: at most what memory allows (memory_rows), at most
// 1/min_segments of the run, at least one.
inline std::int64_t segment_rows(std::int64_t samples, std::int64_t memory_rows) {
  const std::int64_t rows = samples + 1;
  const std::int64_t by_progress = (rows + min_segments - 1) / min_segments;
  return std::max<std::int64_t>(1, std::min({rows, memory_rows, by_progress}));
}

}  // namespace chens
