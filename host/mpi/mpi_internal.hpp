// What the two halves of the MPI runtime share: mpi_runtime.cpp (the sharded run and its
// reductions) and mpi_checkpoints.cpp (the ranks' agreement, rank 0's files, checkpoints).
// It has MPI's types, so only those two files include it.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mpi/mpi_runtime.hpp"

namespace chens::mpi_detail {

// Prints "chens: rank r of R failed: <what>" and aborts every rank (MPI_Abort).
[[noreturn]] void fail(const std::string& what);
// fail() unless an MPI call returned MPI_SUCCESS.
void check(int rc, const char* call);
// n as an MPI count, or fail() where it exceeds 2^31 - 1.
int count_of(std::size_t n, const char* what);

// Gathers each rank's bytes on rank 0, concatenated in rank order; offsets[r] where rank
// r's part starts (rank 0 only).
std::vector<unsigned char> gather_bytes(const void* data, std::size_t bytes, std::vector<std::size_t>* offsets = nullptr);

template <class T>
std::vector<T> gather_vector(const std::vector<T>& v) {
  const std::vector<unsigned char> bytes = gather_bytes(v.data(), v.size() * sizeof(T));
  std::vector<T> out;
  if (mpi_world().rank == 0) {
    out.resize(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  }
  return out;
}

// Rank 0: the recorded instances of every rank, in rank (= instance) order.
RecordedTrajectories gather_recorded(const RecordedTrajectories& mine);

// Every rank, when the ranks save: the checkpoint of the whole ensemble, written by rank 0
// through `save` (mpi_checkpoints.cpp).
void save_sharded(const CheckpointState& mine, std::uint64_t n, const ShardedSave& save);

}  // namespace chens::mpi_detail
