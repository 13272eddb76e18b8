// MPI entry points in a build without MPI (CHENS_ENABLE_MPI=OFF or no Open MPI): one
// process; a launch by mpirun with several ranks is refused instead of running the whole
// ensemble once per rank.
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "mpi/mpi_runtime.hpp"
#include "output/file_text.hpp"

namespace chens {

namespace {
MpiWorld world;
}

const MpiWorld& mpi_start(int*, char***) {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    const char* v = std::getenv(var);
    if (v && std::atoi(v) > 1)
      throw std::runtime_error(std::string("started by an MPI launcher with ") + v +
                               " ranks, but this chens was built without MPI (CHENS_ENABLE_MPI=OFF or no "
                               "libopenmpi-dev); every rank would run the whole ensemble");
  }
  return world;
}

const MpiWorld& mpi_world() { return world; }

void mpi_stop() {}

void mpi_barrier() {}

void mpi_agree_on_stop(int&, bool&) {}

bool mpi_all(bool ok) { return ok; }

std::optional<std::string> root_file_text(const std::string& path) { return file_text(path); }

bool root_path_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

int mpi_read_checkpoint(const std::string&, std::uint64_t, std::uint64_t, std::uint64_t, std::optional<CheckpointState>&,
                        std::string&) {
  throw std::logic_error("mpi_read_checkpoint: this chens was built without MPI");
}

Shard shard_of(std::uint64_t n, int, int) { return {0, n}; }

EnsembleResult run_study_sharded(const Study&, const RunParams<double>&, const EnsembleSpec&, BackendId,
                                 const ShardedSave&) {
  throw std::logic_error("run_study_sharded: this chens was built without MPI");
}

}  // namespace chens
