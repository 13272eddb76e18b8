// Checkpoint files (docs/checkpoints.md): a CheckpointState on disk, written atomically
// (a temporary file in the same directory, flushed to disk, then renamed over the old one),
// so that a crash or a second signal while writing leaves the previous checkpoint intact.
//
// Layout, little-endian as the machine writes it: the magic "CHENSCKP", the format version,
// the run key (a hash of chens's version and the run's resolved study, run_key below), the
// backend, sizes, sample times done, wall time, then the instances' bytes, the statistics of
// the samples done, the recorded trajectories and the kept initial states, each array with
// its length; last, a 64-bit checksum of everything before it. Reading checks all of it and
// throws CheckpointError with what is wrong: never a silent restart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "backends/checkpoint.hpp"

namespace chens {

struct CheckpointError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr const char* checkpoint_file_name = "checkpoint.chk";

// The instances' bytes in the file's order, handed piece by piece to a sink: how a sharded
// run's rank 0 writes a checkpoint while it receives the ranks' instances, and reads one
// while it sends them, without holding the whole ensemble (docs/checkpoints.md, "Under
// mpirun").
using InstanceSink = std::function<void(const void* data, std::size_t bytes)>;
using InstanceSource = std::function<void(const InstanceSink& sink)>;

// 64-bit hash of the text that identifies a run: chens's version and the resolved study
// (to_toml). A checkpoint resumes only the run whose key it carries.
std::uint64_t run_key(const std::string& version, const std::string& resolved_study);

void write_checkpoint(const std::string& path, std::uint64_t key, const CheckpointState& c);

// `c` with its instances taken from `instances` (c.instances and c.instances_view unused),
// which must hand exactly c.size * c.instance_bytes bytes. The sink never throws: a failed
// write is noted, the rest of the bytes are taken and dropped (a sharded run's ranks are
// still sending them), and then it throws CheckpointError. `instances` is called exactly
// once, unless the file cannot even be created (then write_checkpoint throws before).
void write_checkpoint(const std::string& path, std::uint64_t key, const CheckpointState& c, const InstanceSource& instances);

// Reads and checks a checkpoint written for the run with this key.
CheckpointState read_checkpoint(const std::string& path, std::uint64_t key);

// The same, handing the instances' bytes to `take` in the file's order, in pieces of at
// most checkpoint_piece_bytes, instead of keeping them (the state's instances are empty).
// The checksum is checked after the last piece: a caller that must not act on the bytes of
// a damaged file reads it once with a `take` that drops them first (a sharded run's rank 0
// does, before it sends the ranks their shards: docs/checkpoints.md).
inline constexpr std::size_t checkpoint_piece_bytes = std::size_t(64) << 20;
CheckpointState read_checkpoint(const std::string& path, std::uint64_t key, const InstanceSink& take);

}  // namespace chens
