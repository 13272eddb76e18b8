// Checkpoint and resume on the CPU backend (docs/checkpoints.md): the shared test body of
// tests/support/checkpoint_resume.hpp, and the checkpoint file's refusals of damaged,
// truncated, foreign and mismatched files.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "backends/checkpoint_shards.hpp"
#include "support/checkpoint_resume.hpp"

namespace chens {
namespace {

class CheckpointCpu : public ::testing::TestWithParam<std::size_t> {};

TEST_P(CheckpointCpu, AResumedRunEndsBitwiseWhereTheUninterruptedOneEnds) {
  const auto [name, study] = test::resume_studies()[GetParam()];
  const RunParams<double> rp = resolve(study);
  // Stopped once near the start, once in the middle, once at the last segment boundary
  // before the end (segments are ceil(K / 32) sample times, ensemble_spec.hpp).
  const std::int64_t K = rp.samples + 1;
  test::check_resume_is_bitwise(run_study_cpu, study, {2, K / 2, K - 1 - segment_rows(K - 1, std::int64_t(1) << 40)}, name);
  if (name == "pendulum_naive_lost") {  // the lost instances were exercised
    EnsembleSpec spec = ensemble_spec(study, 2);
    EXPECT_GT(run_study_cpu(study, rp, spec).lost_total(), 10u);
  }
}

// Issue 17: a run whose sample interval is long stops, saves and resumes between sample
// times, bit for bit. Passes of 7 steps (DOPRI5: 7 trial steps) over 4 sample intervals.
TEST_P(CheckpointCpu, StopPointsInsideSampleIntervalsChangeNothing) {
  const auto [name, study] = test::resume_studies()[GetParam()];
  test::check_stop_points_are_bitwise(run_study_cpu, study, 4, 7, {3, 9, 10}, name);
}

INSTANTIATE_TEST_SUITE_P(Studies, CheckpointCpu, ::testing::Range<std::size_t>(0, test::resume_studies().size()),
                         [](const auto& p) { return test::resume_studies()[p.param].first; });

// Issue 22, checkpoints under MPI (docs/checkpoints.md): a sharded run saves and resumes one
// checkpoint of the whole ensemble. Here, without MPI: the whole ensemble and each shard of a
// 2- and a 3-way split (whole blocks, as host/mpi/ cuts them) run as separate runs and stop
// at the same sample time. The shard that shard_checkpoint cuts out of the whole run's state
// holds the shard run's recorded and kept instances, and resumed, it ends bit for bit where
// the shard run ends uninterrupted; the shards' instances joined in for_each_piece's order
// (the order in which rank 0 writes what the ranks send) resume the whole run to its
// uninterrupted end. (The
// instances are compared by what they do, not byte by byte: an instance's padding bytes are
// whatever its copy left there.)
// What the GPU resumes (tests/gpu) is each study without its CPU-only parts: a valid study
// (a grouped one without its parameters would be refused), checked here where no GPU is.
TEST_P(CheckpointCpu, TheGpusVersionOfTheStudyResolves) {
  const auto [name, study] = test::resume_studies()[GetParam()];
  const Study gpu = test::on_the_gpu(study);
  EXPECT_FALSE(gpu.varies_parameters()) << name;
  EXPECT_FALSE(gpu.first_passage_on()) << name;
  EXPECT_NO_THROW(resolve(gpu)) << name;
}

TEST_P(CheckpointCpu, EachShardOfTheWholeCheckpointIsTheShardRunsOwn) {
  const auto [name, study] = test::resume_studies()[GetParam()];
  const RunParams<double> rp = resolve(study);
  const std::int64_t stop = (rp.samples + 1) / 2;
  const std::uint64_t n = study.size, keep = n / 2 + 10;  // kept instances across the first cut
  auto stopped = [&](EnsembleSpec spec) {
    spec.segment_rows = 1;  // every run stops at exactly `stop` sample times
    CheckpointState c;
    spec.checkpoint = [stop](std::int64_t done, std::int64_t) { return CheckpointRequest{done >= stop, done >= stop}; };
    spec.save_checkpoint = [&c](const CheckpointState& saved) {
      c = saved;
      const unsigned char* b = saved.instances_view ? saved.instances_view : saved.instances.data();
      c.instances.assign(b, b + saved.size * saved.instance_bytes);
      c.instances_view = nullptr;
    };
    EXPECT_EQ(run_study_cpu(study, rp, spec).stopped_at, stop) << name;
    return c;
  };
  auto resumed = [&](EnsembleSpec spec, const CheckpointState& from) {
    spec.resume_from = &from;
    return run_study_cpu(study, rp, spec);
  };
  EnsembleSpec base = ensemble_spec(study, 2);
  base.keep_instances = keep;
  const CheckpointState whole = stopped(base);
  ASSERT_EQ(whole.size, n) << name;
  const EnsembleResult straight = run_study_cpu(study, rp, base);
  const std::uint64_t blocks = (n + cpu_block_size - 1) / cpu_block_size;
  for (const std::uint64_t ranks : {2, 3}) {
    std::vector<CheckpointState> shards;
    std::vector<std::uint64_t> sizes;
    std::size_t recorded = 0;
    for (std::uint64_t r = 0; r < ranks; ++r) {
      const std::uint64_t first = blocks * r / ranks * cpu_block_size;
      const std::uint64_t size = std::min(n, blocks * (r + 1) / ranks * cpu_block_size) - first;
      const std::string what = name + ", shard " + std::to_string(r) + " of " + std::to_string(ranks);
      EnsembleSpec spec = base;
      spec.first_instance = first;
      spec.size = size;
      spec.total_instances = n;
      spec.keep_instances = keep > first ? std::min(keep - first, size) : 0;
      const CheckpointState own = stopped(spec);
      CheckpointState cut = shard_checkpoint(whole, first, size, keep);
      EXPECT_EQ(cut.size, own.size) << what;
      EXPECT_EQ(cut.done, own.done) << what;
      EXPECT_EQ(cut.instances.size(), own.instances.size()) << what;
      EXPECT_EQ(cut.recorded.instances, own.recorded.instances) << what;
      EXPECT_EQ(cut.recorded.t, own.recorded.t) << what;
      EXPECT_EQ(cut.recorded.state, own.recorded.state) << what;
      EXPECT_EQ(cut.recorded.reference, own.recorded.reference) << what;
      EXPECT_EQ(cut.recorded.metrics, own.recorded.metrics) << what;
      EXPECT_EQ(cut.recorded.measured, own.recorded.measured) << what;
      EXPECT_EQ(cut.kept.initial_state, own.kept.initial_state) << what;
      EXPECT_EQ(cut.kept.initial_physical, own.kept.initial_physical) << what;
      EXPECT_EQ(cut.kept.initial_state.size(), spec.keep_instances * static_cast<std::size_t>(physical_state_size(study)))
          << what;
      // A shard's statistics (the ensemble's and its groups') are reduced across ranks on
      // rank 0, never by the shard: its own stand in for them here.
      cut.series = own.series;
      cut.group_series = own.group_series;
      test::expect_bitwise_equal(run_study_cpu(study, rp, spec), resumed(spec, cut), what + ", resumed from its cut");
      recorded += own.recorded.instances.size();
      sizes.push_back(size);
      shards.push_back(own);
    }
    EXPECT_EQ(recorded, whole.recorded.instances.size()) << name;
    CheckpointState joined = whole;
    joined.instances.clear();
    for_each_piece(instance_layout(whole.backend, whole.instance_bytes), sizes,
                   [&](std::size_t q, std::uint64_t at, std::uint64_t bytes) {
                     const unsigned char* from = shards[q].instances.data() + at;
                     joined.instances.insert(joined.instances.end(), from, from + bytes);
                   });
    ASSERT_EQ(joined.instances.size(), whole.instances.size()) << name;
    test::expect_bitwise_equal(straight, resumed(base, joined),
                               name + ", resumed from " + std::to_string(ranks) + " shards placed back");
  }
}

// The GPU backend saves a structure of arrays of 8-byte words (word w of instance i at
// w * n + i, kernels/cuda_engine.cuh): a shard takes its range of every word, and the
// shards' words in for_each_piece's order make up the whole again.
TEST(CheckpointShards, TheGpuLayoutIsCutAndJoinedWordByWord) {
  const std::uint64_t n = 200, W = 5;
  CheckpointState c;
  c.backend = "cuda";
  c.instance_bytes = W * 8;
  c.size = n;
  std::vector<std::uint64_t> words(W * n);
  for (std::uint64_t w = 0; w < W; ++w)
    for (std::uint64_t i = 0; i < n; ++i) words[w * n + i] = 1000 * w + i;
  c.instances.resize(words.size() * 8);
  std::memcpy(c.instances.data(), words.data(), c.instances.size());
  std::vector<CheckpointState> parts;
  for (const auto& [first, size] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 64}, {64, 128}, {192, 8}}) {
    const CheckpointState part = shard_checkpoint(c, first, size, 0);
    ASSERT_EQ(part.instances.size(), size * W * 8);
    std::vector<std::uint64_t> got(size * W);
    std::memcpy(got.data(), part.instances.data(), part.instances.size());
    for (std::uint64_t w = 0; w < W; ++w)
      for (std::uint64_t j = 0; j < size; ++j) ASSERT_EQ(got[w * size + j], 1000 * w + first + j) << w << " " << j;
    parts.push_back(part);
  }
  std::vector<unsigned char> joined;
  for_each_piece(instance_layout("cuda", c.instance_bytes), {64, 128, 8},
                 [&](std::size_t q, std::uint64_t at, std::uint64_t bytes) {
                   joined.insert(joined.end(), parts[q].instances.data() + at, parts[q].instances.data() + at + bytes);
                 });
  EXPECT_TRUE(joined == c.instances);
  EXPECT_THROW(instance_layout("cuda", 36), std::runtime_error);
  EXPECT_THROW(shard_checkpoint(c, 192, 9, 0), std::runtime_error);
}

// A checkpoint of a real run, written once, for the refusals below.
struct Written {
  test::TempDir dir;
  std::string path = dir.str("checkpoint.chk");
  std::uint64_t key = run_key("test", "study");
  Written() {
    Study s = test::resume_studies()[0].second;
    const RunParams<double> rp = resolve(s);
    EnsembleSpec spec = ensemble_spec(s, 2);
    spec.checkpoint = [](std::int64_t done, std::int64_t) { return CheckpointRequest{done >= 10, done >= 10}; };
    spec.save_checkpoint = [&](const CheckpointState& c) { write_checkpoint(path, key, c); };
    EXPECT_GT(run_study_cpu(s, rp, spec).stopped_at, 0);
  }
  std::uintmax_t size() const { return std::filesystem::file_size(path); }
  void poke(std::uintmax_t at, char x) const {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(at));
    f.put(x);
  }
};

std::string refusal(const std::string& path, std::uint64_t key) {
  try {
    read_checkpoint(path, key);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "(read without complaint)";
}

TEST(CheckpointFile, ReadsBackWhatWasWritten) {
  const Written w;
  const CheckpointState c = read_checkpoint(w.path, w.key);
  EXPECT_EQ(c.backend, "cpu");
  EXPECT_GE(c.done, 10);
  EXPECT_EQ(c.size, 700u);
  EXPECT_EQ(c.instances.size(), c.size * c.instance_bytes);
  EXPECT_EQ(c.series.size(), static_cast<std::size_t>(c.done));
  // No temporary file is left beside it.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(w.dir.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(CheckpointFile, EveryFlippedByteIsRefused) {
  const Written w;
  // Bytes in the header, in the instances, in the statistics and the checksum itself: each
  // flip is found (by the checksum, or by a header check that names the problem).
  for (const double where : {0.0, 0.01, 0.3, 0.6, 0.9, 0.999}) {
    const auto at = static_cast<std::uintmax_t>(where * static_cast<double>(w.size() - 1));
    std::ifstream in(w.path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(at));
    const char old = static_cast<char>(in.get());
    in.close();
    w.poke(at, static_cast<char>(old ^ 0x10));
    const std::string msg = refusal(w.path, w.key);
    EXPECT_TRUE(msg.find("damaged") != std::string::npos || msg.find("not a chens checkpoint") != std::string::npos ||
                msg.find("cut short") != std::string::npos)
        << "byte " << at << ": " << msg;
    w.poke(at, old);
  }
  EXPECT_NO_THROW(read_checkpoint(w.path, w.key));
}

TEST(CheckpointFile, TruncatedForeignAndMismatchedFilesAreRefused) {
  const Written w;
  EXPECT_NE(refusal(w.path, w.key + 1).find("written for another run"), std::string::npos);
  const std::string cut = w.dir.str("cut.chk");
  std::filesystem::copy_file(w.path, cut);
  std::filesystem::resize_file(cut, w.size() / 2);
  EXPECT_NE(refusal(cut, w.key).find("cut short"), std::string::npos) << refusal(cut, w.key);
  std::filesystem::resize_file(cut, 3);
  EXPECT_NE(refusal(cut, w.key).find("cut short"), std::string::npos) << refusal(cut, w.key);
  const std::string other = w.dir.str("other.chk");
  std::ofstream(other) << "[integrator]\nh = 0.1\n";
  EXPECT_NE(refusal(other, w.key).find("not a chens checkpoint"), std::string::npos);
  EXPECT_NE(refusal(w.dir.str("missing.chk"), w.key).find("cannot open"), std::string::npos);
}

// The instances handed over piece by piece (a sharded run's rank 0 writing what the ranks
// send) give the very file the instances in memory give; a source that hands too few bytes
// is refused and leaves no file, and a file that cannot be created never asks for them.
TEST(CheckpointFile, InstancesHandedOverPieceByPieceGiveTheSameFile) {
  const Written w;
  const CheckpointState c = read_checkpoint(w.path, w.key);
  auto bytes_of = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string pieces = w.dir.str("pieces.chk");
  CheckpointState header = c;
  header.instances.clear();
  auto in_pieces = [&c](std::size_t piece, std::size_t drop) {
    return [&c, piece, drop](const InstanceSink& sink) {
      const std::size_t all = c.instances.size() - drop;
      for (std::size_t at = 0; at < all; at += piece) sink(c.instances.data() + at, std::min(piece, all - at));
    };
  };
  write_checkpoint(pieces, w.key, header, in_pieces(1000, 0));
  EXPECT_TRUE(bytes_of(pieces) == bytes_of(w.path));
  try {
    write_checkpoint(w.dir.str("short.chk"), w.key, header, in_pieces(4096, 8));
    ADD_FAILURE() << "a source 8 bytes short was written";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("were handed over"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(w.dir.str("short.chk")));
  bool called = false;
  EXPECT_THROW(write_checkpoint(w.dir.str("missing/dir.chk"), w.key, header,
                                [&called](const InstanceSink&) { called = true; }),
               CheckpointError);
  EXPECT_FALSE(called);  // the file could not be created: the caller drains the pieces itself
}

TEST(CheckpointFile, ABackendRefusesAnotherRunsState) {
  const Written w;
  CheckpointState c = read_checkpoint(w.path, w.key);
  Study s = test::resume_studies()[0].second;
  s.size = 640;  // another ensemble
  s.record = {0, 5};
  const RunParams<double> rp = resolve(s);
  EnsembleSpec spec = ensemble_spec(s, 2);
  spec.resume_from = &c;
  try {
    run_study_cpu(s, rp, spec);
    ADD_FAILURE() << "resumed another run's state";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit this run"), std::string::npos) << e.what();
  }
  c.backend = "cuda";
  s.size = 700;
  spec = ensemble_spec(s, 2);
  spec.resume_from = &c;
  EXPECT_THROW(run_study_cpu(s, resolve(s), spec), std::runtime_error);
}

}  // namespace
}  // namespace chens
