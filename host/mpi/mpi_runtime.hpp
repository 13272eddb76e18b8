// Scale-out over MPI ranks (docs/scaling.md): one ensemble split into contiguous shards of
// whole statistics blocks, one per rank, each integrated by the rank's own backend (its GPU,
// chosen by local rank, or its CPU); statistics merged along the block tree
// (backends/block_tree.hpp), so that results are bitwise those of one process. Declared
// free of MPI types: defined by mpi_runtime.cpp in builds with MPI and by
// mpi_unavailable.cpp without.
#pragma once

#include <cstdint>
#include <string>

#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"
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

// The shard of rank r of R: instances [first, first + size) of n, whole blocks of
// cpu_block_size instances, the blocks split as evenly as possible.
struct Shard {
  std::uint64_t first = 0, size = 0;
};
Shard shard_of(std::uint64_t n, int rank, int ranks);

// Every rank calls it with the same study: runs the rank's shard (gpu: on its device) and
// returns, on rank 0, the ensemble's result as one process would compute it (statistics
// bitwise; counters, lost instances, kept and recorded instances gathered); other ranks
// get their local result. A failing rank prints "chens: rank r of R failed: ..." and
// aborts the job (MPI_Abort), so that no rank writes anything.
EnsembleResult run_study_sharded(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec, bool gpu);

}  // namespace chens
