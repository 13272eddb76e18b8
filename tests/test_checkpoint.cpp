// Checkpoint and resume on the CPU backend (docs/checkpoints.md): the shared test body of
// tests/support/checkpoint_resume.hpp, and the checkpoint file's refusals of damaged,
// truncated, foreign and mismatched files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

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
