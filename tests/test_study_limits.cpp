// What a study may be, checked before its first run starts (docs/study-format.md, "Limits"):
// a --set never collapses what the runs vary, a study's size and its runs' names are
// bounded, the study text's shape is checked before the TOML parser recurses into it, and a
// message quotes a value by its start, not whole. Every refusal: exit 2, the reason named,
// nothing written.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "backends/cuda_backend.hpp"
#include "cli/cli.hpp"
#include "study/study.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace chens {
namespace {

namespace fs = std::filesystem;
using test::CliResult;
using test::run_cli;
using test::write_file;

// "--set KEY=V" of a swept key used to run every run with V under its swept name: the
// default study's six runs named naive / extended / dirac ran Dirac six times.
TEST(SetOfAVariedKey, IsRefusedNamingTheKeyAndItsValues) {
  test::TempDir dir;
  for (const char* command : {"run", "check"}) {
    const CliResult r = run_cli({command, "--set", "integrator.formulation=dirac", "--out", dir.str("out")});
    EXPECT_EQ(r.code, exit_bad_input) << command << ": " << r.err;
    EXPECT_NE(r.err.find("--set integrator.formulation=dirac: the study sweeps integrator.formulation over "
                         "[ \"naive\", \"extended\", \"dirac\" ]"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(fs::exists(dir.str("out")));
  }
  // The README's own example of old: the default study sweeps projection.momentum too.
  const CliResult momentum = run_cli({"run", "--set", "projection.momentum=true", "--dry-run"});
  EXPECT_EQ(momentum.code, exit_bad_input) << momentum.err;
  EXPECT_NE(momentum.err.find("the study sweeps projection.momentum over [ false, true ]"), std::string::npos)
      << momentum.err;
  // A key of the study that no run varies is still set for every run.
  const CliResult size = run_cli({"run", "--set", "ensemble.size=64", "--dry-run"});
  EXPECT_EQ(size.code, exit_ok) << size.err;
}

TEST(SetOfAVariedKey, SetByARunIsRefusedNamingTheRuns) {
  test::TempDir dir;
  write_file(dir.str("runs.toml"), "[integrator]\nt_end = 1.0\n[[run]]\nname = \"rk4\"\nintegrator.method = \"rk4\"\n"
                                   "[[run]]\nname = \"euler\"\nintegrator.method = \"euler\"\n[[run]]\nname = \"plain\"\n");
  const CliResult r = run_cli({"run", dir.str("runs.toml"), "--set", "integrator.method=rk2", "--out", dir.str("out")});
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find("--set integrator.method=rk2: [[run]] \"rk4\", \"euler\" set integrator.method themselves"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir.str("out")));
  // Keys the [[run]]s leave alone take the --set.
  EXPECT_EQ(run_cli({"run", dir.str("runs.toml"), "--set", "integrator.h=0.05", "--dry-run"}).code, exit_ok);
}

// 10^16 runs hung in the expansion; 10^6 took minutes and hundreds of MB before anything
// was said. The size is computed from the sweep's lengths before any run is built.
TEST(StudySize, TooManyRunsAreRefusedBeforeAnyIsBuilt) {
  test::TempDir dir;
  std::string values = "[";
  for (int i = 0; i < 10000; ++i) values += (i ? ", " : "") + std::to_string(i + 1);
  values += "]";
  write_file(dir.str("huge.toml"), "[sweep]\nensemble.seed = " + values + "\nensemble.size = " + values +
                                       "\nintegrator.t_end = " + values + "\nintegrator.max_steps = " + values + "\n");
  const auto t0 = std::chrono::steady_clock::now();
  const CliResult r = run_cli({"check", dir.str("huge.toml")});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find("the study has 1e+16 runs (10000 values of ensemble.seed x 10000 values of "
                       "ensemble.size x 10000 values of integrator.max_steps x 10000 values of integrator.t_end); one "
                       "study runs at most 1000"),
            std::string::npos)
      << r.err;
  EXPECT_LT(seconds, 30.0) << "the size must be known before the runs are built";
  // 1000 runs are a study (counted, not refused); 2 [[run]] x 1000 values are not.
  std::string thousand = "[";
  for (int i = 0; i < 1000; ++i) thousand += (i ? ", " : "") + std::to_string(i + 1);
  thousand += "]";
  write_file(dir.str("many.toml"),
             "[integrator]\nt_end = 0.1\n[ensemble]\nsize = 1\n[sweep]\nensemble.seed = " + thousand + "\n");
  const std::vector<StudyRun> runs = load_runs(dir.str("many.toml"), {});
  EXPECT_EQ(runs.size(), 1000u);
  write_file(dir.str("more.toml"), "[integrator]\nt_end = 0.1\n[[run]]\nname = \"a\"\n[[run]]\nname = \"b\"\n[sweep]\n"
                                   "ensemble.seed = " +
                                       thousand + "\n");
  const CliResult more = run_cli({"check", dir.str("more.toml")});
  EXPECT_EQ(more.code, exit_bad_input);
  EXPECT_NE(more.err.find("the study has 2000 runs (2 [[run]] x 1000 values of ensemble.seed)"), std::string::npos)
      << more.err;
}

// A run is a directory: a name over NAME_MAX passed check, then failed after the runs before
// it had run, leaving the study interrupted and unresumable.
TEST(RunNames, LongerThanADirectoryNameMayBeAreRefusedBeforeTheFirstRun) {
  test::TempDir dir;
  write_file(dir.str("long.toml"), "[integrator]\nt_end = 0.1\n[ensemble]\nsize = 1\n[[run]]\nname = \"short\"\n"
                                   "[[run]]\nname = \"" +
                                       std::string(300, 'x') + "\"\n");
  for (const char* command : {"run", "check"}) {
    const CliResult r = run_cli({command, dir.str("long.toml"), "--out", dir.str("out")});
    EXPECT_EQ(r.code, exit_bad_input) << r.err;
    EXPECT_NE(r.err.find("its name is 300 bytes, longer than the 255 a directory name may have"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find(std::string(100, 'x')), std::string::npos) << "the name is quoted by its start";
    EXPECT_FALSE(fs::exists(dir.str("out"))) << "the first run must not have run";
  }
  // 255 bytes is a name.
  write_file(dir.str("ok.toml"),
             "[integrator]\nt_end = 0.1\n[ensemble]\nsize = 1\n[[run]]\nname = \"" + std::string(255, 'y') + "\"\n");
  EXPECT_EQ(run_cli({"check", dir.str("ok.toml")}).code, exit_ok);
}

TEST(RunNames, APathLongerThanTheSystemTakesIsRefusedBeforeTheFirstRun) {
  test::TempDir dir;
  write_file(dir.str("two.toml"),
             "[integrator]\nt_end = 0.1\n[ensemble]\nsize = 1\n[[run]]\nname = \"a\"\n[[run]]\nname = \"" +
                 std::string(250, 'z') + "\"\n");
  std::string out = dir.str("");
  while (out.size() < 3900) out += "/" + std::string(200, 'd');
  const CliResult r = run_cli({"run", dir.str("two.toml"), "--out", out, "--no-progress"});
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find("would be longer than the 4096 bytes a path may have"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.str("") + "/" + std::string(200, 'd')));
}

// toml++ parses dotted keys, table headers, arrays and inline tables by recursion: a dotted
// key of 50,000 parts (100 KB) overflowed the stack (SIGSEGV; from Python it killed the
// interpreter). Each shape is refused before the parser sees it.
TEST(StudyText, DeepNestingIsRefusedBeforeTheParserRecursesIntoIt) {
  const auto repeat = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  struct Case {
    std::string text, message;
  };
  const std::vector<Case> cases = {
      {repeat("a.", 49999) + "a = 1\n", "a dotted key of more than 17 parts"},
      {"[" + repeat("a.", 49999) + "a]\n", "a dotted key of more than 17 parts"},
      {"[model]\n" + repeat("a . ", 20) + "b = 1\n", "a dotted key of more than 17 parts"},
      {"v = " + repeat("[", 50000) + "\n", "more than 32 nested arrays, inline tables or table headers"},
      {"v = " + repeat("{a=", 50000) + "1\n", "more than 32 nested arrays, inline tables or table headers"},
  };
  for (const Case& c : cases) {
    try {
      load_runs_text(c.text, "deep.toml", {});
      ADD_FAILURE() << "accepted: " << c.text.substr(0, 40);
    } catch (const StudyError& e) {
      EXPECT_NE(std::string(e.what()).find("deep.toml:"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
  // The same through the command line, a file of 100 KB: exit 2, not SIGSEGV.
  test::TempDir dir;
  write_file(dir.str("d.toml"), repeat("a.", 49999) + "a = 1\n");
  const CliResult r = run_cli({"check", dir.str("d.toml")});
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find("d.toml:1:"), std::string::npos) << r.err;
  // And as a --set value.
  const CliResult set = run_cli({"check", "--single", "--set", "model.initial=" + repeat("[", 1000)});
  EXPECT_EQ(set.code, exit_bad_input) << set.err;
  EXPECT_NE(set.err.find("nested arrays"), std::string::npos) << set.err;
  // What study files hold passes: strings and comments are not counted, numbers have one dot.
  EXPECT_NO_THROW(load_runs_text("# " + repeat("a.", 100) +
                                     "\n[model]\ninitial = [1.0, 0.0, 0.0, -2.0]  # a.b.c\n"
                                     "kind = \"pendulum\"\n[sweep]\nintegrator.h = [0.1, 0.05, 0.025, 0.0125]\n",
                                 "ok.toml", {}));
}

TEST(StudyText, AFileLargerThanAStudyIsRefusedWithoutReadingIt) {
  test::TempDir dir;
  {
    std::ofstream f(dir.str("big.toml"));
    f.seekp((std::streamoff{65} << 20) - 1);
    f.put('\n');
  }
  const CliResult r = run_cli({"check", dir.str("big.toml")});
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(r.err.find("a study file has at most 64 MiB"), std::string::npos) << r.err;
}

// A megabyte of model.kind was echoed whole in the message.
TEST(Messages, QuoteALongValueByItsStartAndLength) {
  const std::string kind(1 << 20, 'k');
  const CliResult r = run_cli({"check", "--single", "--set", "model.kind=" + kind});
  EXPECT_EQ(r.code, exit_bad_input);
  EXPECT_NE(r.err.find("model.kind = \"" + std::string(119, 'k') + "... (1048578 characters): unknown name"),
            std::string::npos)
      << r.err.substr(0, 400);
  EXPECT_LT(r.err.size(), 2000u);
}

// model.initial = [1e200, 0, 0, -2] was refused as "(x, y) = (0, 0) has no constraint
// gradient": x^2 overflowed.
TEST(Messages, AnInitialStateThatOverflowsIsNamedAsSuch) {
  const CliResult r = run_cli({"check", "--single", "--set", "model.initial=[1e200, 0, 0, -2]"});
  EXPECT_EQ(r.code, exit_bad_input);
  EXPECT_NE(r.err.find("model.initial = [1e+200, 0, 0, -2]: x^2 + y^2 overflows a double"), std::string::npos) << r.err;
  const CliResult p = run_cli({"check", "--single", "--set", "model.initial=[1, 0, 0, -2e300]"});
  EXPECT_NE(p.err.find("px^2 + py^2 overflows a double"), std::string::npos) << p.err;
  const CliResult zero = run_cli({"check", "--single", "--set", "model.initial=[0, 0, 0, -2]"});
  EXPECT_NE(zero.err.find("(x, y) = (0, 0) has no constraint gradient"), std::string::npos) << zero.err;
}

// Without a GPU, cudaGetDeviceCount's error 35 was shown as "CUDA driver version is
// insufficient for CUDA runtime version", which reads as if a driver update would help.
TEST(Messages, NoGpuIsNotCalledAnOldDriver) {
  const CudaDeviceInfo dev = cuda_device_info();
  if (dev.available) GTEST_SKIP() << "a GPU is usable here: " << dev.description;
  EXPECT_EQ(dev.description.find("insufficient"), std::string::npos) << dev.description;
  EXPECT_EQ(dev.description.rfind("no usable CUDA device: ", 0) == 0 ||
                dev.description.find("without CUDA") != std::string::npos || dev.description == "no CUDA device found",
            true)
      << dev.description;
  if (dev.description.find("returned 35") != std::string::npos) {
    EXPECT_NE(dev.description.find("no NVIDIA driver is loaded"), std::string::npos) << dev.description;
  }
}

// --dry-run and check run nothing: they say where a run would go, and count in words.
TEST(Messages, ADryRunSaysWhatWouldRun) {
  const CliResult r = run_cli({"run", "--single", "--dry-run", "--backend", "auto"});
  EXPECT_EQ(r.code, exit_ok) << r.err;
  EXPECT_EQ(r.out.find("ran on the"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("would run on the"), std::string::npos) << r.out;
}

TEST(Messages, OneInstanceIsNotInstances) {
  test::TempDir dir;
  const CliResult r = run_cli({"run", "--single", "--set", "ensemble.size=1", "--set", "integrator.t_end=0.5", "--out",
                               dir.str("one"), "--no-progress"});
  EXPECT_EQ(r.code, exit_ok) << r.err;
  EXPECT_NE(r.err.find("chens: 1 instance of dirac + rk4"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("1 instances"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace chens
