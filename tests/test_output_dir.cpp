// The output directory belongs to one chens at a time (DIR/.chens.lock), and --force
// replaces everything an earlier run or study wrote there and nothing else
// (docs/checkpoints.md, "One chens per directory" and "--force"). The same with real
// processes (kill -9, a full disk): tests/output/test_output_safety.py.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "cli/cli_internal.hpp"
#include "output/output_lock.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace chens {
namespace {

namespace fs = std::filesystem;

using test::CliResult;
using test::run_cli;

using test::write_file;

std::string read_file(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Every file below dir (relative path -> contents), directories as "<dir>".
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    m[fs::relative(e.path(), dir).string()] = e.is_directory() ? "<dir>" : read_file(e.path());
  return m;
}

// One small run from the defaults (--single: not the built-in default study).
std::vector<std::string> small(std::vector<std::string> args) {
  for (const char* a : {"--single", "--no-progress", "--set", "ensemble.size=64", "--set", "integrator.t_end=1"})
    args.push_back(a);
  return args;
}

std::string study_of(const std::vector<std::string>& names) {
  std::string s = "[integrator]\nt_end = 1.0\n[ensemble]\nsize = 64\n";
  for (const auto& n : names) s += "[[run]]\nname = \"" + n + "\"\n";
  return s;
}

TEST(OutputDirLock, ARunIntoADirectoryInUseIsRefusedBeforeAnythingIsTouched) {
  test::TempDir tmp;
  const fs::path out = tmp.path() / "out";
  ASSERT_EQ(run_cli(small({"run", "--out", out.string()})).code, exit_ok);
  write_file(out / "notes.txt", "mine");
  write_file(tmp.path() / "two.toml", study_of({"a", "b"}));
  // An interrupted run, for --resume (a running chens's directory looks like this).
  const fs::path stopped = tmp.path() / "stopped";
  ::setenv("CHENS_TEST_INTERRUPT_AT", "3", 1);
  const CliResult interrupted =
      run_cli(small({"run", "--out", stopped.string(), "--set", "output.sample_dt=0.1", "--checkpoint-segments", "1"}));
  ::unsetenv("CHENS_TEST_INTERRUPT_AT");
  ASSERT_EQ(interrupted.code, exit_interrupted_int) << interrupted.err;
  const auto before = snapshot(out);
  const auto stopped_before = snapshot(stopped);
  {
    const OutputLock held(out.string());  // as a running chens holds it
    const std::string pid = "chens pid " + std::to_string(::getpid()) + " (started ";
    const std::vector<std::vector<std::string>> attempts = {
        small({"run", "--out", out.string()}),
        small({"run", "--out", out.string(), "--force"}),
        {"run", (tmp.path() / "two.toml").string(), "--out", out.string(), "--force", "--no-progress"},
    };
    for (const auto& args : attempts) {
      const CliResult r = run_cli(args);
      EXPECT_EQ(r.code, exit_bad_input) << args[1] << " " << args[2] << ": " << r.err;
      EXPECT_NE(r.err.find(out.string() + " is in use by " + pid), std::string::npos) << r.err;
      auto now = snapshot(out);
      now.erase(output_lock_file_name);
      EXPECT_EQ(now, before) << "a refused run changed " << out << ": " << args[2];
    }
    {  // --resume of a directory in use
      const OutputLock held_too(stopped.string());
      const CliResult r = run_cli({"run", "--resume", stopped.string(), "--no-progress"});
      EXPECT_EQ(r.code, exit_bad_input) << r.err;
      EXPECT_NE(r.err.find(stopped.string() + " is in use by " + pid), std::string::npos) << r.err;
      auto now = snapshot(stopped);
      now.erase(output_lock_file_name);
      EXPECT_EQ(now, stopped_before);
    }
    // The lock file names its holder, and is no output: a second lock is refused too.
    EXPECT_NE(read_file(out / output_lock_file_name).find("pid " + std::to_string(::getpid())), std::string::npos);
    EXPECT_THROW(OutputLock again(out.string()), DirectoryInUse);
  }
  // Released: the lock file is gone, and the directory is usable again.
  EXPECT_FALSE(fs::exists(out / output_lock_file_name));
  const CliResult r = run_cli(small({"run", "--out", out.string(), "--force"}));
  EXPECT_EQ(r.code, exit_ok) << r.err;
  EXPECT_FALSE(fs::exists(out / output_lock_file_name));  // removed at exit, not left among the results
}

// A killed chens (kill -9) leaves its lock file, but its flock went with it.
TEST(OutputDirLock, TheLockFileOfAKilledProcessIsTakenOver) {
  test::TempDir tmp;
  const fs::path out = tmp.path() / "out";
  fs::create_directories(out);
  write_file(out / output_lock_file_name, "pid 999999999\nhost elsewhere\nstarted 2026-01-01 00:00:00 UTC\n");
  const CliResult r = run_cli(small({"run", "--out", out.string()}));
  ASSERT_EQ(r.code, exit_ok) << r.err;
  EXPECT_NE(r.err.find("took over " + (out / output_lock_file_name).string() + " of chens pid 999999999"), std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::exists(out / "summary.json"));
  EXPECT_FALSE(fs::exists(out / output_lock_file_name));
  // The same for a study's directory.
  write_file(out / output_lock_file_name, "pid 999999998\n");
  write_file(tmp.path() / "two.toml", study_of({"a", "b"}));
  const CliResult s =
      run_cli({"run", (tmp.path() / "two.toml").string(), "--out", out.string(), "--force", "--no-progress"});
  ASSERT_EQ(s.code, exit_ok) << s.err;
  EXPECT_NE(s.err.find("of chens pid 999999998, which no longer runs"), std::string::npos) << s.err;
  EXPECT_FALSE(fs::exists(out / output_lock_file_name));
}

// A refused run leaves no directory behind, though the lock made one.
TEST(OutputDirLock, ARefusedRunLeavesNoDirectoryAndNoLockFile) {
  test::TempDir tmp;
  const fs::path out = tmp.path() / "out";
  // Refused in execute_run, after the lock: too large for this machine's memory (the host's:
  // on a machine with a GPU, --backend auto would count the device's).
  const CliResult r = run_cli({"run", "--single", "--out", out.string(), "--no-progress", "--backend", "cpu", "--set",
                               "ensemble.size=1000000000000"});
  EXPECT_NE(r.err.find("the run needs about 4.48e+05 GB (4.48e+05 GB for the instances)"), std::string::npos) << r.err;
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST(ForceOverAStudy, RemovesTheEarlierStudysRunsAndFiguresButNothingItDidNotWrite) {
  test::TempDir tmp;
  const fs::path out = tmp.path() / "out";
  write_file(tmp.path() / "ab.toml", study_of({"a", "b"}));
  write_file(tmp.path() / "c.toml", study_of({"c"}));
  ASSERT_EQ(run_cli({"run", (tmp.path() / "ab.toml").string(), "--out", out.string(), "--no-progress"}).code, exit_ok);
  ASSERT_TRUE(fs::exists(out / "a/summary.json"));
  fs::create_directories(out / "plots");
  write_file(out / "plots/energy_error.png", "figure of a and b");
  write_file(out / "notes.txt", "mine");
  fs::create_directories(out / "mine");
  write_file(out / "mine/data.csv", "1,2\n");

  // Without --force: refused, nothing changed.
  const auto before = snapshot(out);
  const CliResult refused = run_cli({"run", (tmp.path() / "c.toml").string(), "--out", out.string(), "--no-progress"});
  EXPECT_EQ(refused.code, exit_bad_input);
  EXPECT_NE(refused.err.find("holds study.json of an earlier study"), std::string::npos) << refused.err;
  EXPECT_EQ(snapshot(out), before);

  const CliResult r = run_cli({"run", (tmp.path() / "c.toml").string(), "--out", out.string(), "--force", "--no-progress"});
  ASSERT_EQ(r.code, exit_ok) << r.err;
  EXPECT_FALSE(fs::exists(out / "a"));
  EXPECT_FALSE(fs::exists(out / "b"));
  EXPECT_FALSE(fs::exists(out / "plots"));
  EXPECT_TRUE(fs::exists(out / "c/summary.json"));
  const nlohmann::json index = nlohmann::json::parse(read_file(out / "study.json"));
  ASSERT_EQ(index["runs"].size(), 1u);
  EXPECT_EQ(index["runs"][0]["name"], "c");
  EXPECT_TRUE(index["complete"].get<bool>());
  const std::string csv = read_file(out / "comparison.csv");
  EXPECT_EQ(csv.find("\na,"), std::string::npos) << csv;
  EXPECT_EQ(csv.find("\nb,"), std::string::npos) << csv;
  // What chens did not write stays, and the message names it.
  EXPECT_EQ(read_file(out / "notes.txt"), "mine");
  EXPECT_EQ(read_file(out / "mine/data.csv"), "1,2\n");
  EXPECT_NE(r.err.find("kept in " + out.string() + " what chens did not write there (2): mine/data.csv, notes.txt"),
            std::string::npos)
      << r.err;
  std::set<std::string> entries;
  for (const auto& e : fs::directory_iterator(out)) entries.insert(e.path().filename().string());
  std::set<std::string> expected = {"c", "comparison.csv", "mine", "notes.txt", "study.json"};
  if (fs::exists(out / "series_long.csv")) expected.insert("series_long.csv");  // the new study's
  EXPECT_EQ(entries, expected);
}

// --force removed a run directory whole, a user's file inside it too, though it promises to
// remove what chens wrote "and nothing else"; the message named top-level entries only.
TEST(ForceOverAStudy, KeepsAUsersFilesInsideRunDirectoriesAndNamesEachOne) {
  test::TempDir tmp;
  const fs::path out = tmp.path() / "out";
  write_file(tmp.path() / "ab.toml", study_of({"a", "b"}));
  ASSERT_EQ(run_cli({"run", (tmp.path() / "ab.toml").string(), "--out", out.string(), "--no-progress"}).code, exit_ok);
  fs::create_directories(out / "a/extra/deeper");
  write_file(out / "a/extra/important.txt", "keep");
  write_file(out / "a/extra/deeper/more.txt", "keep too");
  fs::create_directories(out / "plots");
  write_file(out / "plots/energy_error.png", "chens plot's");
  write_file(out / "plots/summary.txt", "chens plot's");
  write_file(out / "plots/mine.pdf", "a user's figure");
  fs::create_directories(out / "b/empty-of-mine");
  const CliResult r = run_cli({"run", (tmp.path() / "ab.toml").string(), "--out", out.string(), "--force", "--no-progress"});
  ASSERT_EQ(r.code, exit_ok) << r.err;
  EXPECT_EQ(read_file(out / "a/extra/important.txt"), "keep");
  EXPECT_EQ(read_file(out / "a/extra/deeper/more.txt"), "keep too");
  EXPECT_EQ(read_file(out / "plots/mine.pdf"), "a user's figure");
  EXPECT_FALSE(fs::exists(out / "plots/energy_error.png"));
  EXPECT_FALSE(fs::exists(out / "plots/summary.txt"));
  EXPECT_TRUE(fs::exists(out / "a/summary.json"));  // the new run's
  EXPECT_NE(r.err.find("kept in " + out.string() +
                       " what chens did not write there (4): a/extra/deeper/more.txt, "
                       "a/extra/important.txt, b/empty-of-mine/, plots/mine.pdf"),
            std::string::npos)
      << r.err;
}

// As root, --out / wrote summary.json and series.csv into the filesystem's root (and --force
// there would have cleared it).
TEST(OutputDir, TheFilesystemRootIsRefused) {
  for (const char* root : {"/", "//", "/tmp/.."}) {
    const CliResult r = run_cli(small({"run", "--out", root}));
    EXPECT_EQ(r.code, exit_bad_input) << root << ": " << r.err;
    EXPECT_NE(r.err.find("the root of the filesystem"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists("/summary.json"));
}

// An --out the run cannot write into exited 2 or 1 depending on where it failed; it is now
// found before anything is computed: exit 2, as bad input (docs/study-format.md).
TEST(OutputDir, ADirectoryThatCannotBeWrittenIsRefusedBeforeTheRun) {
  // sysfs takes no new files, not even root's.
  const fs::path dir = "/sys/kernel";
  if (!fs::is_directory(dir)) GTEST_SKIP() << dir << " is not here";
  const std::string probe = (dir / "chens-probe").string();
  if (std::ofstream(probe)) {
    fs::remove(probe);
    GTEST_SKIP() << dir << " is writable here";
  }
  const CliResult r = run_cli(small({"run", "--out", dir.string()}));
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find("--out /sys/kernel: cannot"), std::string::npos) << r.err;  // its lock file, first
  EXPECT_EQ(r.err.find("instances of"), std::string::npos) << "nothing may have run: " << r.err;
  // The probe itself, for a directory whose lock could be taken (elsewhere, e.g. a
  // read-only mount).
  try {
    cli::check_writable_dir(dir.string());
    ADD_FAILURE() << "a file was made in " << dir;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--out /sys/kernel: cannot write there ("), std::string::npos) << e.what();
  }
}

TEST(ForceOverAStudy, AnUnreadableIndexIsRefusedAndNothingIsRemoved) {
  test::TempDir tmp;
  const fs::path out = tmp.path() / "out";
  write_file(tmp.path() / "ab.toml", study_of({"a", "b"}));
  ASSERT_EQ(run_cli({"run", (tmp.path() / "ab.toml").string(), "--out", out.string(), "--no-progress"}).code, exit_ok);
  write_file(out / "study.json", "{ damaged");
  const auto before = snapshot(out);
  const CliResult r = run_cli({"run", (tmp.path() / "ab.toml").string(), "--out", out.string(), "--force", "--no-progress"});
  EXPECT_EQ(r.code, exit_bad_input);
  EXPECT_NE(r.err.find("study.json cannot be read"), std::string::npos) << r.err;
  EXPECT_EQ(snapshot(out), before);
}

TEST(ForceOverARun, RemovesTheEarlierRunsFiguresAndFilesTheNewRunDoesNotWrite) {
  test::TempDir tmp;
  const fs::path out = tmp.path() / "out";
  ASSERT_EQ(run_cli(small({"run", "--out", out.string(), "--set", "output.trajectory=true", "--set",
                           "output.periodogram=\"y\"", "--set", "output.sample_dt=0.1"}))
                .code,
            exit_ok);
  ASSERT_TRUE(fs::exists(out / "periodogram.csv"));
  fs::create_directories(out / "plots");
  write_file(out / "plots/summary.txt", "old");
  const CliResult r = run_cli(small({"run", "--out", out.string(), "--force"}));
  ASSERT_EQ(r.code, exit_ok) << r.err;
  std::set<std::string> entries;
  for (const auto& e : fs::directory_iterator(out)) entries.insert(e.path().filename().string());
  EXPECT_EQ(entries, (std::set<std::string>{"series.csv", "summary.json"}));
}

// A study is not mixed with a single run's results without --force, and with --force the
// single run's files go.
TEST(ForceOverARun, AStudyOverARunsDirectoryNeedsForceAndReplacesIt) {
  test::TempDir tmp;
  const fs::path out = tmp.path() / "out";
  ASSERT_EQ(run_cli(small({"run", "--out", out.string()})).code, exit_ok);
  write_file(tmp.path() / "c.toml", study_of({"c"}));
  const CliResult refused = run_cli({"run", (tmp.path() / "c.toml").string(), "--out", out.string(), "--no-progress"});
  EXPECT_EQ(refused.code, exit_bad_input);
  EXPECT_NE(refused.err.find("holds summary.json of an earlier run"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(out / "c"));
  const CliResult r = run_cli({"run", (tmp.path() / "c.toml").string(), "--out", out.string(), "--force", "--no-progress"});
  ASSERT_EQ(r.code, exit_ok) << r.err;
  EXPECT_FALSE(fs::exists(out / "summary.json"));
  EXPECT_FALSE(fs::exists(out / "series.csv"));
  EXPECT_TRUE(fs::exists(out / "c/summary.json"));
  // And back: a single run with --force over the study removes its runs and index.
  const CliResult back = run_cli(small({"run", "--out", out.string(), "--force"}));
  ASSERT_EQ(back.code, exit_ok) << back.err;
  EXPECT_FALSE(fs::exists(out / "c"));
  EXPECT_FALSE(fs::exists(out / "study.json"));
  EXPECT_FALSE(fs::exists(out / "comparison.csv"));
  EXPECT_TRUE(fs::exists(out / "summary.json"));
}

}  // namespace
}  // namespace chens
