// MPI scale-out (docs/scaling.md). Every rank integrates its shard with the ordinary backend;
// per segment of sample times the ranks send rank 0 the block-tree nodes of their shard
// (O(log B) per sample) and sum their quantile histograms (integers: exact); rank 0
// completes the tree. At the end, counters and lost instances are summed (integers), and
// kept and recorded instances are gathered in rank order, which is instance order.
#include "mpi/mpi_runtime.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

#include "backends/checkpoint_shards.hpp"
#include "backends/cuda_backend.hpp"
#include "backends/instance_records.hpp"
#include "dispatch/run_study.hpp"

namespace chens {

namespace {

MpiWorld world;
bool started = false;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

bool launched_with_several_ranks() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (env_int(var, 1) > 1) return true;
  return false;
}

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "chens: rank " << world.rank << " of " << world.size << " failed: " << what
            << "; stopping every rank (no results are written)" << std::endl;
  // mpirun forwards a rank's stderr asynchronously, and MPI_Abort kills the forwarding with
  // the job: give the message a moment to reach the terminal first.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

void check(int rc, const char* call) {
  if (rc != MPI_SUCCESS) fail(std::string(call) + " returned " + std::to_string(rc));
}

int count_of(std::size_t n, const char* what) {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    fail(std::string(what) + ": more than 2^31 elements on one rank; use more ranks");
  return static_cast<int>(n);
}

// Gathers each rank's bytes on rank 0, concatenated in rank order; offsets[r] where rank
// r's part starts (rank 0 only).
std::vector<unsigned char> gather_bytes(const void* data, std::size_t bytes, std::vector<std::size_t>* offsets = nullptr) {
  const int mine = count_of(bytes, "gather");
  std::vector<int> counts(static_cast<std::size_t>(world.size)), displs(static_cast<std::size_t>(world.size));
  check(MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::vector<unsigned char> all;
  if (world.rank == 0) {
    std::size_t total = 0;
    for (int r = 0; r < world.size; ++r) {
      displs[static_cast<std::size_t>(r)] = count_of(total, "gather");
      total += static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]);
    }
    all.resize(std::max<std::size_t>(total, 1));
    if (offsets) offsets->assign(displs.begin(), displs.end());
  }
  check(MPI_Gatherv(data, mine, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0, MPI_COMM_WORLD),
        "MPI_Gatherv");
  return all;
}

template <class T>
std::vector<T> gather_vector(const std::vector<T>& v) {
  const std::vector<unsigned char> bytes = gather_bytes(v.data(), v.size() * sizeof(T));
  std::vector<T> out;
  if (world.rank == 0) {
    out.resize(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  }
  return out;
}

void sum_to_root(std::uint64_t* data, int n) {
  if (world.rank == 0) {
    check(MPI_Reduce(MPI_IN_PLACE, data, n, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
  } else {
    check(MPI_Reduce(data, nullptr, n, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
  }
}

// Rank 0: the recorded instances of every rank, in rank (= instance) order.
RecordedTrajectories gather_recorded(const RecordedTrajectories& mine) {
  const std::vector<std::uint64_t> instances = gather_vector(mine.instances);
  std::vector<std::uint64_t> per_rank = gather_vector(std::vector<std::uint64_t>{mine.instances.size()});
  const std::vector<double> state = gather_vector(mine.state), reference = gather_vector(mine.reference),
                            metrics = gather_vector(mine.metrics);
  const std::vector<unsigned char> measured = gather_vector(mine.measured);
  // The sample times are set with the rows (instance_records.hpp): those of the first rank
  // that records an instance (rank 0 need not: output.record = [n - 1]).
  const std::vector<double> times = gather_vector(mine.t);
  RecordedTrajectories all;
  if (world.rank != 0) return all;
  all.instances = instances;
  all.state_size = mine.state_size;
  all.has_reference = mine.has_reference;
  const std::size_t K = mine.t.size(), R = instances.size(), S = static_cast<std::size_t>(mine.state_size);
  all.t = mine.t;
  for (int q = 0; q < world.size; ++q)
    if (per_rank[static_cast<std::size_t>(q)] > 0) {
      all.t.assign(times.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(q) * K),
                   times.begin() + static_cast<std::ptrdiff_t>((static_cast<std::size_t>(q) + 1) * K));
      break;
    }
  all.state.resize(K * R * S);
  if (all.has_reference) all.reference.resize(K * R * S);
  all.metrics.resize(K * R * metric_count);
  all.measured.resize(K * R);
  // Rank q's arrays are [k][r][c] over its own R_q instances; they go to slots o_q + r.
  std::size_t slot0 = 0, base = 0;
  for (int q = 0; q < world.size; ++q) {
    const std::size_t Rq = per_rank[static_cast<std::size_t>(q)];
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t r = 0; r < Rq; ++r) {
        const std::size_t from = base + k * Rq + r, to = k * R + slot0 + r;
        std::copy_n(&state[from * S], S, &all.state[to * S]);
        if (all.has_reference) std::copy_n(&reference[from * S], S, &all.reference[to * S]);
        std::copy_n(&metrics[from * metric_count], metric_count, &all.metrics[to * metric_count]);
        all.measured[to] = measured[from];
      }
    slot0 += Rq;
    base += K * Rq;
  }
  return all;
}

PerInstanceResult gather_kept(const PerInstanceResult& mine) {
  PerInstanceResult all;
  all.initial_state = gather_vector(mine.initial_state);
  all.initial_physical = gather_vector(mine.initial_physical);
  all.final_state = gather_vector(mine.final_state);
  all.final_physical = gather_vector(mine.final_physical);
  all.metrics = gather_vector(mine.metrics);
  all.lost = gather_vector(mine.lost);
  all.counters = gather_vector(mine.counters);
  return all;
}

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
    check(MPI_Bcast(v.data() + at, static_cast<int>(std::min<std::size_t>(chunk_bytes, n - at)), MPI_BYTE, 0, MPI_COMM_WORLD),
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
}

std::vector<unsigned char> header_bytes(const CheckpointState& c) {
  std::vector<unsigned char> b;
  auto put = [&b](const void* p, std::size_t n) {
    const auto* q = static_cast<const unsigned char*>(p);
    b.insert(b.end(), q, q + n);
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
  for (int q = 0; q < world.size; ++q) sizes.push_back(shard_of(n, q, world.size).size);
  if (world.rank != 0) {
    for_each_piece(lay, sizes, [&](std::size_t q, std::uint64_t at, std::uint64_t count) {
      if (static_cast<int>(q) == world.rank) send_bytes(bytes + at, count, 0, stream_chunk);
    });
    return;
  }
  CheckpointState all = header_of(header_bytes(mine));
  all.size = n;
  all.series = mine.series;
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

// Resuming: the recorded and kept instances of each rank's shard of `whole` (rank 0; other
// ranks: its header), sent from rank 0, into `part`, whose instances come separately.
void scatter_records(const CheckpointState& whole, std::uint64_t n, std::uint64_t keep, CheckpointState& part) {
  if (world.rank == 0) {
    for (int q = 1; q < world.size; ++q) {
      const Shard theirs = shard_of(n, q, world.size);
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
    const Shard own = shard_of(n, 0, world.size);
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

// The segment reducer of one rank: block-tree nodes and histograms to rank 0, which fills
// series[k0 .. k1).
struct SegmentReducer {
  std::uint64_t first_block = 0, total_blocks = 0;
  int fail_rank = -1;  // CHENS_TEST_FAIL_RANK: the rank that throws at its first segment (tests)

  void operator()(std::int64_t k0, std::int64_t k1, const Accumulator* acc, std::int64_t blocks,
                  const std::uint32_t* hist, std::vector<SampleStats>& series) const {
    if (world.rank == fail_rank && k0 == 0)
      throw std::runtime_error("injected failure (CHENS_TEST_FAIL_RANK=" + std::to_string(fail_rank) + ")");
    const std::int64_t rows = k1 - k0;
    // Nodes of every row: [count, nodes...] per row.
    std::vector<TreeNode> nodes;
    std::vector<std::uint64_t> per_row(static_cast<std::size_t>(rows));
    for (std::int64_t row = 0; row < rows; ++row) {
      const auto mine = tree_nodes(acc + static_cast<std::size_t>(row * blocks) * metric_count, first_block,
                                   static_cast<std::uint64_t>(blocks), total_blocks);
      per_row[static_cast<std::size_t>(row)] = mine.size();
      nodes.insert(nodes.end(), mine.begin(), mine.end());
    }
    const std::vector<std::uint64_t> all_counts = gather_vector(per_row);
    const std::vector<TreeNode> all_nodes = gather_vector(nodes);
    constexpr std::size_t hist_row = static_cast<std::size_t>(metric_count) * LogBins::count;
    std::vector<std::uint64_t> h(hist, hist + static_cast<std::size_t>(rows) * hist_row);
    sum_to_root(h.data(), count_of(h.size(), "histograms"));
    if (world.rank != 0) return;
    // all_counts holds rank 0's rows, then rank 1's, ...; all_nodes likewise.
    std::vector<std::size_t> node_start(static_cast<std::size_t>(world.size) + 1, 0);
    for (int q = 0; q < world.size; ++q) {
      std::size_t c = 0;
      for (std::int64_t row = 0; row < rows; ++row) c += all_counts[static_cast<std::size_t>(q * rows + row)];
      node_start[static_cast<std::size_t>(q) + 1] = node_start[static_cast<std::size_t>(q)] + c;
    }
    std::vector<std::size_t> cursor(node_start.begin(), node_start.end() - 1);
    for (std::int64_t row = 0; row < rows; ++row) {
      std::vector<TreeNode> row_nodes;
      for (int q = 0; q < world.size; ++q) {
        const std::size_t c = all_counts[static_cast<std::size_t>(q * rows + row)];
        std::size_t& at = cursor[static_cast<std::size_t>(q)];
        row_nodes.insert(row_nodes.end(), all_nodes.begin() + static_cast<std::ptrdiff_t>(at),
                         all_nodes.begin() + static_cast<std::ptrdiff_t>(at + c));
        at += c;
      }
      SampleStats& st = series[static_cast<std::size_t>(k0 + row)];
      tree_root(std::move(row_nodes), total_blocks, st.metric);
      set_quantiles(st, h.data() + static_cast<std::size_t>(row) * hist_row);
    }
  }
};

}  // namespace

const MpiWorld& mpi_start(int* argc, char*** argv) {
  if (!launched_with_several_ranks()) return world;
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw std::runtime_error("MPI_Init_thread failed");
  started = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
  world.local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK", env_int("MPI_LOCALRANKID", world.rank));
  world.active = world.size > 1;
  cuda_select_device(world.local_rank);
  return world;
}

const MpiWorld& mpi_world() { return world; }

void mpi_barrier() {
  if (world.active) check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

void mpi_stop() {
  if (started) MPI_Finalize();
  started = false;
}

void mpi_agree_on_stop(int& signal, bool& save) {
  if (!world.active) return;
  int v[2] = {signal, world.rank == 0 && save ? 1 : 0};
  check(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  signal = v[0];
  save = v[1] != 0;
}

bool mpi_all(bool ok) {
  if (!world.active) return ok;
  int v = ok ? 1 : 0;
  check(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  return v != 0;
}

std::optional<std::string> root_file_text(const std::string& path) {
  if (!world.active) return local_file_text(path);
  std::optional<std::string> text;
  if (world.rank == 0) text = local_file_text(path);
  std::vector<unsigned char> b;
  if (world.rank == 0 && text) {
    b.push_back(1);
    b.insert(b.end(), text->begin(), text->end());
  }
  broadcast_bytes(b);
  if (b.empty()) return std::nullopt;
  return std::string(b.begin() + 1, b.end());
}

bool root_path_exists(const std::string& path) {
  std::error_code ec;
  int there = world.rank == 0 && std::filesystem::exists(path, ec) ? 1 : 0;
  if (world.active) check(MPI_Bcast(&there, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return there != 0;
}

namespace {

// Rank 0 resuming: the instances as read from the file, in for_each_piece's pieces (rank,
// bytes), each part kept (rank 0's own) or sent to its rank as it comes.
struct PieceRouter {
  std::vector<unsigned char>& own;
  std::vector<std::pair<std::size_t, std::uint64_t>> pieces;
  std::size_t piece = 0;
  std::uint64_t left = 0, at = 0;
  bool started = false;

  void operator()(const void* data, std::size_t m) {
    const auto* b = static_cast<const unsigned char*>(data);
    if (!started && !pieces.empty()) left = pieces[0].second;
    started = true;
    while (m > 0) {
      while (left == 0 && piece + 1 < pieces.size()) left = pieces[++piece].second;
      if (left == 0) throw CheckpointError("more instances than the ranks' shards hold");
      const auto k = static_cast<std::size_t>(std::min<std::uint64_t>(m, left));
      if (pieces[piece].first == 0) {
        std::memcpy(own.data() + at, b, k);
        at += k;
      } else {
        check(MPI_Send(b, static_cast<int>(k), MPI_BYTE, static_cast<int>(pieces[piece].first), bytes_tag, MPI_COMM_WORLD),
              "MPI_Send");
      }
      b += k;
      m -= k;
      left -= k;
    }
  }
};

}  // namespace

int mpi_read_checkpoint(const std::string& path, std::uint64_t key, std::uint64_t n, std::uint64_t keep,
                        std::optional<CheckpointState>& mine, std::string& error) {
  int status = 0;
  CheckpointState whole;  // rank 0: all of it but the instances
  if (world.rank == 0) {
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
  if (world.rank == 0) h = header_bytes(whole);
  broadcast_bytes(h);
  const CheckpointState header = header_of(h);
  const InstanceLayout lay = instance_layout(header.backend, header.instance_bytes);
  std::vector<std::uint64_t> sizes;
  for (int q = 0; q < world.size; ++q) sizes.push_back(shard_of(n, q, world.size).size);
  const Shard own = shard_of(n, world.rank, world.size);
  std::vector<unsigned char> instances(own.size * header.instance_bytes);
  if (world.rank == 0) {
    // The second pass: each piece (for_each_piece) to the rank whose shard it belongs to.
    PieceRouter route{instances};
    for_each_piece(lay, sizes, [&](std::size_t q, std::uint64_t, std::uint64_t count) { route.pieces.emplace_back(q, count); });
    try {
      whole = read_checkpoint(path, key, [&route](const void* data, std::size_t m) { route(data, m); });
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
  CheckpointState part = world.rank == 0 ? CheckpointState{} : header;
  scatter_records(world.rank == 0 ? whole : header, n, keep, part);
  part.size = own.size;
  part.instances = std::move(instances);
  // Statistics are reduced on rank 0 only; other ranks carry sample times they never read.
  if (world.rank != 0) part.series.assign(static_cast<std::size_t>(std::max<std::int64_t>(0, part.done)), SampleStats{});
  mine = std::move(part);
  return 1;
}

Shard shard_of(std::uint64_t n, int rank, int ranks) {
  const std::uint64_t blocks = (n + cpu_block_size - 1) / cpu_block_size;
  const std::uint64_t b0 = blocks * static_cast<std::uint64_t>(rank) / static_cast<std::uint64_t>(ranks);
  const std::uint64_t b1 = blocks * static_cast<std::uint64_t>(rank + 1) / static_cast<std::uint64_t>(ranks);
  const std::uint64_t first = b0 * cpu_block_size;
  return {first, std::min(n, b1 * cpu_block_size) - first};
}

EnsembleResult run_study_sharded(const Study& s, const RunParams<double>& rp, const EnsembleSpec& whole, bool gpu,
                                 const ShardedSave& save) {
  const std::uint64_t n = whole.size;
  const std::uint64_t blocks = (n + cpu_block_size - 1) / cpu_block_size;
  const Shard mine = shard_of(n, world.rank, world.size);
  EnsembleSpec spec = whole;
  spec.first_instance = mine.first;
  spec.size = mine.size;
  spec.total_instances = n;
  // Kept instances: the global first keep_instances, each rank its part of them.
  const std::uint64_t keep = std::min(whole.keep_instances, n);
  spec.keep_instances = keep > mine.first ? std::min(keep - mine.first, mine.size) : 0;
  if (world.rank != 0) spec.progress = nullptr;
  // The same segments on every rank, from the largest shard's memory (the CPU backend's and
  // the CUDA backend's bounds, ensemble_spec.hpp and kernels/cuda_engine.cuh).
  const std::uint64_t largest = ((blocks + static_cast<std::uint64_t>(world.size) - 1) / static_cast<std::uint64_t>(world.size)) *
                                cpu_block_size;
  const std::int64_t cpu_row = static_cast<std::int64_t>(largest / cpu_block_size + 1) * metric_count *
                                   static_cast<std::int64_t>(sizeof(Accumulator)) +
                               64 * metric_count * LogBins::count * 4;
  const std::int64_t gpu_row = static_cast<std::int64_t>(largest) * (metric_count * 8 + 1);
  // The recorded instances' rows (instance_records.hpp).
  const std::int64_t snapshot_row = static_cast<std::int64_t>(
      whole.record.size() * static_cast<std::size_t>(recorded_row_width(physical_state_size(s))) * sizeof(double));
  spec.segment_rows = segment_rows(
      rp.samples, std::min<std::int64_t>({65535, (64ll << 20) / cpu_row, (512ll << 20) / std::max<std::int64_t>(1, gpu_row),
                                          (256ll << 20) / std::max<std::int64_t>(1, snapshot_row)}));
  spec.reduce_segment = SegmentReducer{mine.first / cpu_block_size, blocks, env_int("CHENS_TEST_FAIL_RANK", -1)};
  // Checkpoints: one for the whole ensemble, whatever the number of ranks that wrote it or
  // resumes it (docs/checkpoints.md); spec.resume_from is this rank's shard of it.
  spec.save_checkpoint = nullptr;
  if (save) spec.save_checkpoint = [&save, n](const CheckpointState& local) { save_sharded(local, n, save); };

  EnsembleResult r;
  try {
    r = gpu ? run_study_cuda(s, rp, spec) : run_study_cpu(s, rp, spec);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  // Integers summed exactly; wall time: the slowest rank's.
  constexpr int fields = sizeof(Counters) / sizeof(std::uint64_t);
  std::vector<std::uint64_t> sums(fields + lost_reason_count + 1);
  std::memcpy(sums.data(), &r.totals, sizeof(Counters));
  for (int q = 0; q < lost_reason_count; ++q) sums[static_cast<std::size_t>(fields + q)] = r.lost[q];
  sums[static_cast<std::size_t>(fields + lost_reason_count)] = r.reference_projected;
  sum_to_root(sums.data(), static_cast<int>(sums.size()));
  double wall = r.wall_seconds;
  check(MPI_Reduce(world.rank == 0 ? MPI_IN_PLACE : &wall, &wall, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
  PerInstanceResult kept = whole.keep_instances > 0 ? gather_kept(r.kept) : PerInstanceResult{};
  // The first lost instances: each rank's first ones, in rank (= index) order.
  const std::vector<std::uint64_t> lost_examples = gather_vector(r.lost_examples);
  const std::vector<int> lost_reasons = gather_vector(r.lost_example_reasons);
  RecordedTrajectories recorded = gather_recorded(r.recorded);
  if (world.rank != 0) return r;
  std::memcpy(static_cast<void*>(&r.totals), sums.data(), sizeof(Counters));
  for (int q = 0; q < lost_reason_count; ++q) r.lost[q] = sums[static_cast<std::size_t>(fields + q)];
  r.reference_projected = sums[static_cast<std::size_t>(fields + lost_reason_count)];
  r.wall_seconds = wall;
  r.instances = n;
  r.kept = std::move(kept);
  r.lost_examples.assign(lost_examples.begin(), lost_examples.begin() + static_cast<std::ptrdiff_t>(
                                                                          std::min(lost_examples.size(), lost_examples_max)));
  r.lost_example_reasons.assign(lost_reasons.begin(), lost_reasons.begin() + static_cast<std::ptrdiff_t>(r.lost_examples.size()));
  r.recorded = std::move(recorded);
  r.device = std::to_string(world.size) + " MPI ranks (" + (gpu ? "GPU" : "CPU") + " each); rank 0: " + r.device;
  return r;
}

}  // namespace chens
