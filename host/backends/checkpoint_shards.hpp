// Checkpoints of sharded runs (MPI ranks, issue 22; docs/checkpoints.md): a sharded run
// writes the one checkpoint a single process would write for the whole ensemble, and any
// number of ranks (one included) resumes from it, each rank taking its shard. These are the
// pure parts of that: where an instance's bytes lie in a backend's saved layout, the order
// in which the shards' bytes make up the whole, and the shard of a whole checkpoint;
// host/mpi/mpi_checkpoints.cpp moves the parts between ranks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backends/checkpoint.hpp"

namespace chens {

// How a backend lays out the `n` instances it saves (CheckpointState::instances): `words`
// words of `word_bytes` bytes per instance, word-major, word w of instance i at word
// w * n + i. The CPU backend saves its array of instances (one word: the whole instance,
// backends/cpu/cpu_engine.hpp); the GPU backend its structure of arrays of 8-byte words
// (kernels/cuda_engine.cuh).
struct InstanceLayout {
  std::uint64_t words = 1;
  std::uint64_t word_bytes = 0;
};

inline InstanceLayout instance_layout(const std::string& backend, std::uint64_t instance_bytes) {
  if (backend == "cuda") {
    if (instance_bytes % 8 != 0)
      throw std::runtime_error("a GPU checkpoint's instances are 8-byte words, not " + std::to_string(instance_bytes) +
                               " bytes");
    return {instance_bytes / 8, 8};
  }
  return {1, instance_bytes};
}

// The whole ensemble's instances in the saved layout's order, as pieces of the shards' own
// bytes: f(shard q, byte offset into shard q's bytes, byte count), word by word and, within
// a word, shard by shard (the shards are consecutive ranges of instances, in order). A
// sharded run's rank 0 writes the checkpoint in this order while the ranks send their pieces.
template <class F>
void for_each_piece(InstanceLayout lay, const std::vector<std::uint64_t>& shard_sizes, F&& f) {
  for (std::uint64_t w = 0; w < lay.words; ++w)
    for (std::size_t q = 0; q < shard_sizes.size(); ++q)
      if (shard_sizes[q] > 0) f(q, w * shard_sizes[q] * lay.word_bytes, shard_sizes[q] * lay.word_bytes);
}

// The whole ensemble's instance bytes, as they come in the saved order (read from a file in
// chunks of any size), split into the shards' pieces (for_each_piece): deliver(q, bytes,
// count) for each part of a piece of shard q, in order. A sharded run's rank 0 resuming keeps
// its own parts and sends the others to their ranks (mpi_checkpoints.cpp); shard_instances cuts
// one shard out of a whole held in memory.
class PieceSplitter {
 public:
  PieceSplitter(InstanceLayout lay, const std::vector<std::uint64_t>& shard_sizes) {
    for_each_piece(lay, shard_sizes,
                   [this](std::size_t q, std::uint64_t, std::uint64_t count) { pieces_.emplace_back(q, count); });
    if (!pieces_.empty()) left_ = pieces_[0].second;
  }
  template <class Deliver>
  void operator()(const void* data, std::size_t m, Deliver&& deliver) {
    const auto* b = static_cast<const unsigned char*>(data);
    while (m > 0) {
      while (left_ == 0 && piece_ + 1 < pieces_.size()) left_ = pieces_[++piece_].second;
      if (left_ == 0) throw std::runtime_error("more instance bytes than the shards hold");
      const auto k = static_cast<std::size_t>(std::min<std::uint64_t>(m, left_));
      deliver(pieces_[piece_].first, b, k);
      b += k;
      m -= k;
      left_ -= k;
    }
  }

 private:
  std::vector<std::pair<std::size_t, std::uint64_t>> pieces_;  // (shard, bytes)
  std::size_t piece_ = 0;
  std::uint64_t left_ = 0;  // bytes of pieces_[piece_] still to come
};

// Instances [first, first + size) of the n in `whole`, laid out as a run of `size` lays them:
// the middle one of three shards.
inline std::vector<unsigned char> shard_instances(const unsigned char* whole, std::uint64_t n, InstanceLayout lay,
                                                  std::uint64_t first, std::uint64_t size) {
  std::vector<unsigned char> part;
  part.reserve(size * lay.words * lay.word_bytes);
  PieceSplitter split(lay, {first, size, n - first - size});
  split(whole, n * lay.words * lay.word_bytes, [&part](std::size_t q, const unsigned char* b, std::size_t k) {
    if (q == 1) part.insert(part.end(), b, b + k);
  });
  return part;
}

// The recorded instances among [first, first + size), with every sample of each: what a run
// of that shard records (instance_records.hpp's recorded_sized, arrays [k][r][column]).
inline RecordedTrajectories shard_recorded(const RecordedTrajectories& whole, std::uint64_t first, std::uint64_t size) {
  RecordedTrajectories part;
  part.state_size = whole.state_size;
  part.has_reference = whole.has_reference;
  std::vector<std::size_t> slots;
  for (std::size_t r = 0; r < whole.instances.size(); ++r)
    if (whole.instances[r] >= first && whole.instances[r] - first < size) {
      slots.push_back(r);
      part.instances.push_back(whole.instances[r]);
    }
  const std::size_t K = whole.t.size(), R = whole.instances.size(), Rp = slots.size();
  // A run records the sample times with its rows: none without recorded instances.
  part.t = Rp > 0 ? whole.t : std::vector<double>(K, 0.0);
  const auto S = static_cast<std::size_t>(whole.state_size);
  part.state.resize(K * Rp * S);
  if (part.has_reference) part.reference.resize(K * Rp * S);
  part.metrics.resize(K * Rp * metric_count);
  part.measured.resize(K * Rp);
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t j = 0; j < Rp; ++j) {
      const std::size_t from = k * R + slots[j], to = k * Rp + j;
      std::copy_n(&whole.state[from * S], S, &part.state[to * S]);
      if (part.has_reference) std::copy_n(&whole.reference[from * S], S, &part.reference[to * S]);
      std::copy_n(&whole.metrics[from * metric_count], metric_count, &part.metrics[to * metric_count]);
      part.measured[to] = whole.measured[from];
    }
  return part;
}

// What the shard [first, first + size) of a whole ensemble resumes from: its instances, its
// recorded instances and its part of the kept instances (the ensemble's first `keep`), with
// the whole run's sample times done and wall time. `series` (and `group_series`) is the whole
// run's: only rank 0 reduces statistics, the others carry it unread.
inline CheckpointState shard_checkpoint(const CheckpointState& whole, std::uint64_t first, std::uint64_t size,
                                        std::uint64_t keep) {
  if (first + size > whole.size) throw std::runtime_error("shard_checkpoint: the shard is outside the ensemble");
  CheckpointState part;
  part.backend = whole.backend;
  part.instance_bytes = whole.instance_bytes;
  part.size = size;
  part.samples = whole.samples;
  part.done = whole.done;
  part.wall_seconds = whole.wall_seconds;
  part.integration_seconds = whole.integration_seconds;
  part.measurement_seconds = whole.measurement_seconds;
  part.step_cost = whole.step_cost;
  // (A state read without its instances, as a sharded run's rank 0 reads one, gives none.)
  if (whole.instances_view || !whole.instances.empty()) {
    const unsigned char* bytes = whole.instances_view ? whole.instances_view : whole.instances.data();
    part.instances = shard_instances(bytes, whole.size, instance_layout(whole.backend, whole.instance_bytes), first, size);
  }
  part.series = whole.series;
  part.group_series = whole.group_series;
  part.recorded = shard_recorded(whole.recorded, first, size);
  const std::uint64_t mine = keep > first ? std::min(keep - first, size) : 0;
  auto kept = [&](const std::vector<double>& all) {
    const std::size_t width = keep > 0 ? all.size() / keep : 0;
    return std::vector<double>(all.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(first, keep) * width),
                               all.begin() +
                                   static_cast<std::ptrdiff_t>((std::min<std::uint64_t>(first, keep) + mine) * width));
  };
  part.kept.initial_state = kept(whole.kept.initial_state);
  part.kept.initial_physical = kept(whole.kept.initial_physical);
  return part;
}

}  // namespace chens
