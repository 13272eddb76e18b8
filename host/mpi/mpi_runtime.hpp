// Scale-out over MPI ranks (docs/scaling.md): one ensemble split into contiguous shards of
// whole statistics blocks, one per rank, each integrated by the rank's own backend (its GPU,
// chosen by local rank, or its CPU); statistics merged along the block tree
// (backends/block_tree.hpp), so that results are bitwise those of one process. Declared
// free of MPI types: defined by mpi_runtime.cpp and mpi_checkpoints.cpp in builds with MPI
// and by mpi_unavailable.cpp without.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "backends/backend_id.hpp"
#include "backends/checkpoint.hpp"
#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"
#include "output/checkpoint_file.hpp"
#include "study/study.hpp"

namespace chens {

struct MpiWorld {
  bool active = false;  // started by mpirun with more than one rank
  int rank = 0, size = 1, local_rank = 0;
};

// Starts MPI when the process was launched by an MPI launcher with more than one rank
// (otherwise leaves MPI alone: the single-process path is unchanged). Selects the rank's
// GPU by local rank. Throws std::runtime_error for a launch with several ranks in a build
// without MPI.
const MpiWorld& mpi_start(int* argc, char*** argv);
const MpiWorld& mpi_world();
void mpi_stop();
// Waits for every rank (no-op in one process): e.g. after every rank has checked the output
// directory and before rank 0 writes into it.
void mpi_barrier();
// Whether this process writes results and prints: rank 0, or the only process.
inline bool mpi_root() { return mpi_world().rank == 0; }

// The answer of every rank to the question asked after each segment (EnsembleSpec::
// checkpoint, docs/checkpoints.md): stop when any rank was signalled (`signal` becomes the
// largest signal number any rank received, 0 for none), save when rank 0 says so (its clock
// and its segment count decide, `save` of the other ranks is ignored). Every rank asks at the
// same segments; no-op in one process.
void mpi_agree_on_stop(int& signal, bool& save);

// Whether `ok` holds on every rank (it is `ok` in one process). Every rank calls it at the
// same point: e.g. once each has checked the study and the output directory, so that no
// rank goes on to integrate (or rank 0 to write into the directory) while another has
// refused.
bool mpi_all(bool ok);

// Files in the output directory, which only rank 0 writes and other nodes need not see:
// rank 0 looks, and every rank gets its answer. The text of `path` (file_text: nullopt where
// there is none or it cannot be read), and whether `path` exists.
std::optional<std::string> root_file_text(const std::string& path);
bool root_path_exists(const std::string& path);

// --resume under mpirun (docs/checkpoints.md, "Under mpirun"): rank 0 reads the checkpoint
// at `path` (only it needs to see the output directory) and every rank gets its shard of it,
// for an ensemble of n instances whose first `keep` are kept (shard_checkpoint), without
// rank 0 holding the whole: rank 0 checks the whole file first (a pass that drops the
// instances), then reads it again, sending each rank its instances as they come. Returns 0
// (there is none), 1 (`mine` is this rank's shard) or 2 (refused; rank 0 has why in
// `error`), the same on every rank. Only under mpirun.
int mpi_read_checkpoint(const std::string& path, std::uint64_t key, std::uint64_t n, std::uint64_t keep,
                        std::optional<CheckpointState>& mine, std::string& error);

// The shard of rank r of R: instances [first, first + size) of n, whole blocks of
// cpu_block_size instances, the blocks split as evenly as possible.
struct Shard {
  std::uint64_t first = 0, size = 0;
};
Shard shard_of(std::uint64_t n, int rank, int ranks);

// Every rank calls it with the same study: runs the rank's shard (on its GPU with
// BackendId::cuda) and returns, on rank 0, the ensemble's result as one process would
// compute it (statistics bitwise; counters, lost instances, kept and recorded instances
// gathered); other ranks get their local result. A failing rank prints "chens: rank r of R failed: ..." and aborts
// the job (MPI_Abort), so that no rank writes anything.
//
// Checkpoints (docs/checkpoints.md, "Under mpirun"): spec.resume_from is this rank's shard
// of the checkpoint (mpi_read_checkpoint). spec.save_checkpoint is not used: when the ranks save, rank 0 calls `save` with the
// whole ensemble's state as one process would save it, but for its instances, which
// `instances` hands over in the file's order as the ranks send them (write them with
// write_checkpoint(path, key, state, instances)).
using ShardedSave = std::function<void(const CheckpointState& state, const InstanceSource& instances)>;
EnsembleResult run_study_sharded(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec, BackendId backend,
                                 const ShardedSave& save = {});

}  // namespace chens
