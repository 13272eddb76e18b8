// The ranks of a sharded run acting as one chens run (issue 22, docs/checkpoints.md, "Under
// mpirun"): their agreement after each segment (stop, save), rank 0's view of the output
// directory for every rank, and the one checkpoint of the whole ensemble that rank 0 writes
// while the ranks stream it their instances, and reads back while it sends them their shards.
// The sharded run itself and its reductions are mpi_runtime.cpp's.
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "backends/checkpoint_shards.hpp"
#include "mpi/mpi_internal.hpp"
#include "mpi/mpi_runtime.hpp"
#include "output/file_text.hpp"

namespace chens {

using namespace mpi_detail;

namespace {

// Point to point, any size: a length, then chunks of at most 1 GiB (MPI counts are int).
constexpr int bytes_tag = 22;
constexpr std::size_t chunk_bytes = std::size_t(1) << 30;

void send_bytes(const void* data, std::size_t bytes, int to, std::size_t chunk = chunk_bytes) {
  const std::uint64_t n = bytes;
  check(MPI_Send(&n, 1, MPI_UINT64_T, to, bytes_tag, MPI_COMM_WORLD), "MPI_Send");
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t at = 0; at < bytes; at += chunk)
    check(MPI_Send(p + at, static_cast<int>(std::min(chunk, bytes - at)), MPI_BYTE, to, bytes_tag, MPI_COMM_WORLD),
          "MPI_Send");
}

// What send_bytes(..., stream_chunk) sends, chunk by chunk into `sink`, through one buffer of
// stream_chunk bytes: a checkpoint's instances reach rank 0's file without rank 0 holding them.
constexpr std::size_t stream_chunk = std::size_t(64) << 20;

void recv_stream(int from, std::uint64_t expect, const InstanceSink& sink, std::vector<unsigned char>& buffer) {
  std::uint64_t n = 0;
  check(MPI_Recv(&n, 1, MPI_UINT64_T, from, bytes_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  if (n != expect)
    fail("rank " + std::to_string(from) + " sends " + std::to_string(n) + " bytes of instances for a checkpoint, not " +
         std::to_string(expect));
  buffer.resize(std::min<std::size_t>(n, stream_chunk));
  for (std::size_t at = 0; at < n; at += stream_chunk) {
    const auto part = static_cast<int>(std::min<std::size_t>(stream_chunk, n - at));
    check(MPI_Recv(buffer.data(), part, MPI_BYTE, from, bytes_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    sink(buffer.data(), static_cast<std::size_t>(part));
  }
}

template <class T>
void send_vector(const std::vector<T>& v, int to) {
  send_bytes(v.data(), v.size() * sizeof(T), to);
}

template <class T>
std::vector<T> recv_vector(int from) {
  std::uint64_t n = 0;
  check(MPI_Recv(&n, 1, MPI_UINT64_T, from, bytes_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  if (n / sizeof(T) * sizeof(T) != n) fail("a message of " + std::to_string(n) + " bytes is no whole number of elements");
  std::vector<T> v(n / sizeof(T));
  auto* p = reinterpret_cast<unsigned char*>(v.data());
  for (std::size_t at = 0; at < n; at += chunk_bytes)
    check(MPI_Recv(p + at, static_cast<int>(std::min<std::size_t>(chunk_bytes, n - at)), MPI_BYTE, from, bytes_tag,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "MPI_Recv");
  return v;
}

// Rank 0's bytes on every rank.
void broadcast_bytes(std::vector<unsigned char>& v) {
  std::uint64_t n = v.size();
  check(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
  v.resize(n);
  for (std::size_t at = 0; at < n; at += chunk_bytes)
    check(MPI_Bcast(v.data() + at, static_cast<int>(std::min<std::size_t>(chunk_bytes, n - at)), MPI_BYTE, 0,
                    MPI_COMM_WORLD),
          "MPI_Bcast");
}

// A checkpoint's header (no arrays) as bytes, and back: its fields in one order for both.
template <class State, class Field>
void header_fields(State& c, Field&& field) {
  field(&c.instance_bytes, sizeof c.instance_bytes);
  field(&c.size, sizeof c.size);
  field(&c.samples, sizeof c.samples);
  field(&c.done, sizeof c.done);
  field(&c.wall_seconds, sizeof c.wall_seconds);
  field(&c.integration_seconds, sizeof c.integration_seconds);
  field(&c.measurement_seconds, sizeof c.measurement_seconds);
}

std::vector<unsigned char> header_bytes(const CheckpointState& c) {
  std::vector<unsigned char> b;
  auto put = [&b](const void* p, std::size_t n) {
    const std::size_t at = b.size();
    b.resize(at + n);
    if (n > 0) std::memcpy(b.data() + at, p, n);
  };
  const std::uint64_t len = c.backend.size();
  put(&len, sizeof len);
  put(c.backend.data(), c.backend.size());
  header_fields(c, put);
  return b;
}

CheckpointState header_of(const std::vector<unsigned char>& b) {
  CheckpointState c;
  std::size_t at = 0;
  auto get = [&](void* p, std::size_t n) {
    if (at + n > b.size()) fail("a checkpoint header of " + std::to_string(b.size()) + " bytes is cut short");
    std::memcpy(p, b.data() + at, n);
    at += n;
  };
  std::uint64_t len = 0;
  get(&len, sizeof len);
  if (len > b.size()) fail("a checkpoint header names a backend longer than itself");
  c.backend.resize(len);
  get(c.backend.data(), len);
  header_fields(c, get);
  return c;
}

// Resuming: the recorded and kept instances of each rank's shard of `whole` (rank 0; other
// ranks: its header), sent from rank 0, into `part`, whose instances come separately.
void scatter_records(const CheckpointState& whole, std::uint64_t n, std::uint64_t keep, CheckpointState& part) {
  if (mpi_world().rank == 0) {
    for (int q = 1; q < mpi_world().size; ++q) {
      const Shard theirs = shard_of(n, q, mpi_world().size);
      const CheckpointState shard = shard_checkpoint(whole, theirs.first, theirs.size, keep);
      const std::vector<std::int64_t> shape{shard.recorded.state_size, shard.recorded.has_reference ? 1 : 0};
      send_vector(shape, q);
      const RecordedTrajectories& r = shard.recorded;
      send_vector(r.instances, q);
      send_vector(r.t, q);
      send_vector(r.state, q);
      send_vector(r.reference, q);
      send_vector(r.metrics, q);
      send_vector(r.measured, q);
      send_vector(shard.kept.initial_state, q);
      send_vector(shard.kept.initial_physical, q);
    }
    const Shard own = shard_of(n, 0, mpi_world().size);
    part = shard_checkpoint(whole, own.first, own.size, keep);
    return;
  }
  const std::vector<std::int64_t> shape = recv_vector<std::int64_t>(0);
  if (shape.size() != 2) fail("a checkpoint shard arrived without its recorded instances' shape");
  RecordedTrajectories& r = part.recorded;
  r.state_size = static_cast<int>(shape[0]);
  r.has_reference = shape[1] != 0;
  r.instances = recv_vector<std::uint64_t>(0);
  r.t = recv_vector<double>(0);
  r.state = recv_vector<double>(0);
  r.reference = recv_vector<double>(0);
  r.metrics = recv_vector<double>(0);
  r.measured = recv_vector<unsigned char>(0);
  part.kept.initial_state = recv_vector<double>(0);
  part.kept.initial_physical = recv_vector<double>(0);
}

}  // namespace

namespace mpi_detail {

// Saving (docs/checkpoints.md): the checkpoint one process would write for the whole
// ensemble, written by rank 0 (through `save`) while the ranks send it their instances,
// piece by piece in the file's order (for_each_piece), so that rank 0 never holds more than
// its own shard and a buffer. The recorded and kept instances are gathered first, in rank
// (= instance) order, and the statistics are rank 0's (the only complete ones).
void save_sharded(const CheckpointState& mine, std::uint64_t n, const ShardedSave& save) {
  const unsigned char* bytes = mine.instances_view ? mine.instances_view : mine.instances.data();
  RecordedTrajectories recorded = gather_recorded(mine.recorded);
  std::vector<double> kept_state = gather_vector(mine.kept.initial_state);
  std::vector<double> kept_physical = gather_vector(mine.kept.initial_physical);
  const InstanceLayout lay = instance_layout(mine.backend, mine.instance_bytes);
  std::vector<std::uint64_t> sizes;
  for (int q = 0; q < mpi_world().size; ++q) sizes.push_back(shard_of(n, q, mpi_world().size).size);
  if (mpi_world().rank != 0) {
    for_each_piece(lay, sizes, [&](std::size_t q, std::uint64_t at, std::uint64_t count) {
      if (static_cast<int>(q) == mpi_world().rank) send_bytes(bytes + at, count, 0, stream_chunk);
    });
    return;
  }
  CheckpointState all = header_of(header_bytes(mine));
  all.size = n;
  all.series = mine.series;
  all.group_series = mine.group_series;
  all.step_cost = mine.step_cost;  // rank 0's samples (it alone writes the costs)
  all.recorded = std::move(recorded);
  all.kept.initial_state = std::move(kept_state);
  all.kept.initial_physical = std::move(kept_physical);
  bool streamed = false;
  std::vector<unsigned char> buffer;
  const InstanceSource instances = [&](const InstanceSink& sink) {
    streamed = true;
    for_each_piece(lay, sizes, [&](std::size_t q, std::uint64_t at, std::uint64_t count) {
      if (q == 0) {
        sink(bytes + at, count);
      } else {
        recv_stream(static_cast<int>(q), count, sink, buffer);
      }
    });
  };
  save(all, instances);
  // A file that could not even be created: the ranks' pieces are still on their way.
  if (!streamed) instances([](const void*, std::size_t) {});
}

}  // namespace mpi_detail

void mpi_agree_on_stop(int& signal, bool& save) {
  if (!mpi_world().active) return;
  int v[2] = {signal, mpi_world().rank == 0 && save ? 1 : 0};
  check(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  signal = v[0];
  save = v[1] != 0;
}

bool mpi_all(bool ok) {
  if (!mpi_world().active) return ok;
  int v = ok ? 1 : 0;
  check(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  return v != 0;
}

std::optional<std::string> root_file_text(const std::string& path) {
  if (!mpi_world().active) return file_text(path);
  std::optional<std::string> text;
  if (mpi_world().rank == 0) text = file_text(path);
  std::vector<unsigned char> b;
  if (mpi_world().rank == 0 && text) {
    b.push_back(1);
    b.insert(b.end(), text->begin(), text->end());
  }
  broadcast_bytes(b);
  if (b.empty()) return std::nullopt;
  return std::string(b.begin() + 1, b.end());
}

bool root_path_exists(const std::string& path) {
  std::error_code ec;
  int there = mpi_world().rank == 0 && std::filesystem::exists(path, ec) ? 1 : 0;
  if (mpi_world().active) check(MPI_Bcast(&there, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return there != 0;
}

int mpi_read_checkpoint(const std::string& path, std::uint64_t key, std::uint64_t n, std::uint64_t keep,
                        std::optional<CheckpointState>& mine, std::string& error) {
  int status = 0;
  CheckpointState whole;  // rank 0: all of it but the instances
  if (mpi_world().rank == 0) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
      try {  // the first pass checks the whole file and drops the instances
        whole = read_checkpoint(path, key, [](const void*, std::size_t) {});
        if (whole.size != n)
          throw CheckpointError("the checkpoint does not fit this run: " + std::to_string(whole.size) +
                                " instances, this run has " + std::to_string(n));
        instance_layout(whole.backend, whole.instance_bytes);
        status = 1;
      } catch (const std::exception& e) {
        error = e.what();
        status = 2;
      }
    }
  }
  check(MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  if (status != 1) return status;
  std::vector<unsigned char> h;
  if (mpi_world().rank == 0) h = header_bytes(whole);
  broadcast_bytes(h);
  const CheckpointState header = header_of(h);
  const InstanceLayout lay = instance_layout(header.backend, header.instance_bytes);
  std::vector<std::uint64_t> sizes;
  for (int q = 0; q < mpi_world().size; ++q) sizes.push_back(shard_of(n, q, mpi_world().size).size);
  const Shard own = shard_of(n, mpi_world().rank, mpi_world().size);
  std::vector<unsigned char> instances(own.size * header.instance_bytes);
  if (mpi_world().rank == 0) {
    // The second pass: each piece to the rank whose shard it belongs to, as it is read.
    PieceSplitter split(lay, sizes);
    std::size_t at = 0;
    auto deliver = [&](std::size_t q, const unsigned char* b, std::size_t k) {
      if (q == 0) {
        std::memcpy(instances.data() + at, b, k);
        at += k;
      } else {
        check(MPI_Send(b, static_cast<int>(k), MPI_BYTE, static_cast<int>(q), bytes_tag, MPI_COMM_WORLD), "MPI_Send");
      }
    };
    try {
      whole = read_checkpoint(path, key, [&](const void* data, std::size_t m) { split(data, m, deliver); });
    } catch (const std::exception& e) {
      fail(std::string("reading the checkpoint again (was it changed meanwhile?): ") + e.what());
    }
  } else {
    for (std::size_t at = 0; at < instances.size();) {
      MPI_Status st;
      const auto count = static_cast<int>(std::min(checkpoint_piece_bytes, instances.size() - at));
      check(MPI_Recv(instances.data() + at, count, MPI_BYTE, 0, bytes_tag, MPI_COMM_WORLD, &st), "MPI_Recv");
      int got = 0;
      check(MPI_Get_count(&st, MPI_BYTE, &got), "MPI_Get_count");
      if (got <= 0) fail("an empty piece of a checkpoint's instances");
      at += static_cast<std::size_t>(got);
    }
  }
  CheckpointState part = mpi_world().rank == 0 ? CheckpointState{} : header;
  scatter_records(mpi_world().rank == 0 ? whole : header, n, keep, part);
  part.size = own.size;
  part.instances = std::move(instances);
  // Statistics are reduced on rank 0 only; other ranks carry sample times they never read.
  if (mpi_world().rank != 0)
    part.series.assign(static_cast<std::size_t>(std::max<std::int64_t>(0, part.done)), SampleStats{});
  mine = std::move(part);
  return 1;
}

}  // namespace chens
