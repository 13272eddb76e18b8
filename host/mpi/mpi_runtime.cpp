// MPI scale-out (docs/scaling.md). Every rank integrates its shard with the ordinary backend;
// per segment of sample times the ranks send rank 0 the block-tree nodes of their shard
// (O(log B) per sample) and sum their quantile histograms (integers: exact); rank 0
// completes the tree. At the end, counters and lost instances are summed (integers), and
// kept and recorded instances are gathered in rank order, which is instance order. The
// ranks' agreement on stops, rank 0's files and checkpoints are mpi_checkpoints.cpp's.
#include "mpi/mpi_runtime.hpp"

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

#include "backends/cuda_backend.hpp"
#include "backends/instance_records.hpp"
#include "backends/memory_bounds.hpp"
#include "dispatch/run_study.hpp"
#include "mpi/mpi_internal.hpp"

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

}  // namespace

namespace mpi_detail {

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

std::vector<unsigned char> gather_bytes(const void* data, std::size_t bytes, std::vector<std::size_t>* offsets) {
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

}  // namespace mpi_detail

namespace {

using namespace mpi_detail;

void sum_to_root(std::uint64_t* data, int n) {
  if (world.rank == 0) {
    check(MPI_Reduce(MPI_IN_PLACE, data, n, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
  } else {
    check(MPI_Reduce(data, nullptr, n, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
  }
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
  all.first_passage = gather_vector(mine.first_passage);
  all.lyapunov_spectrum = gather_vector(mine.lyapunov_spectrum);
  return all;
}

// The segment reducer of one rank: block-tree nodes and histograms to rank 0, which fills
// series[k0 .. k1).
struct SegmentReducer {
  std::uint64_t first_block = 0, total_blocks = 0;
  int fail_rank = -1;  // CHENS_TEST_FAIL_RANK: the rank that throws at its first segment (tests)

  void operator()(std::int64_t k0, std::int64_t k1, const Accumulator* acc, std::int64_t blocks, const std::uint32_t* hist,
                  std::vector<SampleStats>& series) const {
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

Shard shard_of(std::uint64_t n, int rank, int ranks) {
  const std::uint64_t blocks = (n + cpu_block_size - 1) / cpu_block_size;
  const std::uint64_t b0 = blocks * static_cast<std::uint64_t>(rank) / static_cast<std::uint64_t>(ranks);
  const std::uint64_t b1 = blocks * static_cast<std::uint64_t>(rank + 1) / static_cast<std::uint64_t>(ranks);
  const std::uint64_t first = b0 * cpu_block_size;
  return {first, std::min(n, b1 * cpu_block_size) - first};
}

EnsembleResult run_study_sharded(const Study& s, const RunParams<double>& rp, const EnsembleSpec& whole, BackendId backend,
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
  // The same segments on every rank: the engines' own bounds (backends/memory_bounds.hpp) for
  // the largest shard, with the most threads any rank runs and the [parameters] groups.
  std::int64_t threads = whole.threads > 0 ? whole.threads : omp_get_max_threads();
  MPI_Allreduce(MPI_IN_PLACE, &threads, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  // The recorded instances' rows (instance_records.hpp).
  const std::size_t snapshot_row =
      whole.record.size() * static_cast<std::size_t>(recorded_row_width(physical_state_size(s))) * sizeof(double);
  spec.segment_rows = segment_rows(rp.samples, shard_memory_rows(blocks, world.size, threads,
                                                                 1 + static_cast<std::int64_t>(whole.parameters.groups()),
                                                                 cpu_block_size, snapshot_row));
  spec.reduce_segment = SegmentReducer{mine.first / cpu_block_size, blocks, env_int("CHENS_TEST_FAIL_RANK", -1)};
  // Checkpoints: one for the whole ensemble, whatever the number of ranks that wrote it or
  // resumes it (docs/checkpoints.md); spec.resume_from is this rank's shard of it.
  spec.save_checkpoint = nullptr;
  if (save) spec.save_checkpoint = [&save, n](const CheckpointState& local) { save_sharded(local, n, save); };

  EnsembleResult r;
  try {
    r = run_study_on(backend, s, rp, spec);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  // Integers summed exactly; wall time: the slowest rank's.
  constexpr int fields = sizeof(Counters) / sizeof(std::uint64_t);
  // The threads of every rank too: the cost comparison's cost_seconds is the summed steps at
  // rank 0's median pace over all of them (study_index.cpp), not over rank 0's alone.
  std::vector<std::uint64_t> sums(fields + lost_reason_count + 2);
  std::memcpy(sums.data(), &r.totals, sizeof(Counters));
  for (int q = 0; q < lost_reason_count; ++q) sums[static_cast<std::size_t>(fields + q)] = r.lost[q];
  sums[static_cast<std::size_t>(fields + lost_reason_count)] = r.reference_projected;
  sums[static_cast<std::size_t>(fields + lost_reason_count + 1)] = static_cast<std::uint64_t>(std::max(1, r.threads));
  sum_to_root(sums.data(), static_cast<int>(sums.size()));
  // First-passage counts (every rank has the same slots and sample times); the crossing
  // times' statistics were reduced along the block tree by the run (passage_tally.hpp).
  std::vector<std::uint64_t> passage_counts = r.passage.counts();
  if (rp.passage.any()) sum_to_root(passage_counts.data(), count_of(passage_counts.size(), "first-passage counts"));
  // [parameters] group_by: each group's sizes, losses and passage counts (every rank has the
  // same groups); their statistics were reduced along the block tree by the run.
  std::vector<std::uint64_t> group_counts;
  for (const GroupResult& g : r.groups) {
    const std::vector<std::uint64_t> c = g.counts();
    group_counts.insert(group_counts.end(), c.begin(), c.end());
  }
  if (!group_counts.empty()) sum_to_root(group_counts.data(), count_of(group_counts.size(), "group counts"));
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
  r.threads = static_cast<int>(sums[static_cast<std::size_t>(fields + lost_reason_count + 1)]);
  if (rp.passage.any()) r.passage.set_counts(passage_counts);
  for (std::size_t g = 0, at = 0; g < r.groups.size(); ++g) {
    const std::size_t width = r.groups[g].counts().size();
    r.groups[g].set_counts(std::vector<std::uint64_t>(group_counts.begin() + static_cast<std::ptrdiff_t>(at),
                                                      group_counts.begin() + static_cast<std::ptrdiff_t>(at + width)));
    at += width;
  }
  r.wall_seconds = wall;
  r.instances = n;
  r.kept = std::move(kept);
  r.lost_examples.assign(lost_examples.begin(), lost_examples.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                                            lost_examples.size(), lost_examples_max)));
  r.lost_example_reasons.assign(lost_reasons.begin(),
                                lost_reasons.begin() + static_cast<std::ptrdiff_t>(r.lost_examples.size()));
  r.recorded = std::move(recorded);
  r.device = std::to_string(world.size) + " MPI ranks (" + (backend == BackendId::cuda ? "GPU" : "CPU") +
             " each); rank 0: " + r.device;
  return r;
}

}  // namespace chens
