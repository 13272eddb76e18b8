// chens check's memory count and run-time estimate (docs/study-format.md, "chens check" and
// "Memory"): every per-sample and per-record buffer is counted (one instance with 10^6
// samples was put at 4.5e-7 GB and peaked at 2 GB), what does not fit is refused by run
// and check alike, and the estimate's own calibration is bounded (a DOPRI5 study to
// t = 1e15 never finished). tests/output/test_memory_count.py runs the largest accepted run
// of each kind under a memory limit.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <chrono>
#include <string>

#include "cli/cli.hpp"
#include "cli/cli_internal.hpp"
#include "support/cli_runner.hpp"

namespace chens {
namespace {

using test::CliResult;
using test::run_cli;

Study study_with(const std::vector<std::string>& sets) { return load_runs(std::nullopt, sets).at(0).study; }

// The count grows with the sample times, the groups and the recorded instances as the
// buffers they fill do, not only with the instances.
TEST(MemoryCount, CountsEveryPerSampleAndPerRecordBuffer) {
  const auto memory = [](const std::vector<std::string>& sets) {
    const Study s = study_with(sets);
    return cli::run_memory(s, resolve(s), BackendId::cpu);
  };
  const std::vector<std::string> one = {"ensemble.size=1", "integrator.h=1e-5", "output.sample_dt=1e-5"};
  std::vector<std::string> short_run = one, long_run = one;
  short_run.push_back("integrator.t_end=1");  // 10^5 + 1 sample times
  long_run.push_back("integrator.t_end=10");  // 10^6 + 1
  const cli::RunMemory a = memory(short_run), b = memory(long_run);
  EXPECT_NEAR((b.statistics - a.statistics) / 9e5, 2.0 * sizeof(SampleStats), 1.0);
  EXPECT_GT(b.files, 9e5 * 1000) << "series.csv's text, about 1.4 kB a sample time";
  EXPECT_GT(b.total(), 1e9) << b.text();  // the run peaked at 2.08 GB
  EXPECT_LT(a.instances, 1e3);
  // Groups: the ensemble's statistics and each group's.
  const cli::RunMemory grouped =
      memory({"ensemble.size=1000", "integrator.t_end=10", "output.sample_dt=0.1", "parameters.length=\"uniform(0.5, 1)\"",
              "parameters.group_by=\"length\"", "parameters.group_bins=9"});
  const cli::RunMemory plain = memory({"ensemble.size=1000", "integrator.t_end=10", "output.sample_dt=0.1"});
  EXPECT_NEAR(grouped.statistics / plain.statistics, 10.0, 1e-9);
  // Recorded instances: state, metrics and flag per sample time and instance.
  const cli::RunMemory recorded =
      memory({"ensemble.size=1000", "integrator.t_end=10", "output.sample_dt=0.1", "output.record=[1, 2, 3, 4]"});
  EXPECT_GT(recorded.records, 101 * 4 * (4 + 7) * 8.0);
  EXPECT_EQ(plain.records, 0.0);
  // The text says what holds it.
  EXPECT_NE(b.text().find("for the statistics of every sample time"), std::string::npos) << b.text();
}

// What the count does not fit is refused by check and run alike, before anything runs.
TEST(MemoryCount, ARunThatDoesNotFitIsRefusedByCheckAndRun) {
  ::setenv("CHENS_MEMORY_BYTES", "2e8", 1);  // 200 MB
  const std::vector<std::string> heavy = {"--single",
                                          "--set",
                                          "ensemble.size=1",
                                          "--set",
                                          "integrator.h=1e-5",
                                          "--set",
                                          "output.sample_dt=1e-5",
                                          "--set",
                                          "integrator.t_end=1",
                                          "--backend",
                                          "cpu"};
  std::vector<std::string> check = {"check"}, run = {"run", "--out", "/nonexistent/never"};
  check.insert(check.end(), heavy.begin(), heavy.end());
  run.insert(run.end(), heavy.begin(), heavy.end());
  const CliResult c = run_cli(check), r = run_cli(run);
  ::unsetenv("CHENS_MEMORY_BYTES");
  EXPECT_EQ(c.code, exit_bad_input) << c.err;
  EXPECT_EQ(r.code, exit_bad_input) << r.err;
  EXPECT_NE(c.err.find("the run needs about 0."), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("for the statistics of every sample time"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("more than 80% of the 0.2 GB chens may use here"), std::string::npos) << c.err;
  EXPECT_EQ(c.err.substr(c.err.find(':')), r.err.substr(r.err.find(':'))) << "one rule, one message";
}

// The calibration of an adaptive run to t = 1e15 ran to t_end / 50 and never finished.
TEST(CheckEstimate, ItsCalibrationIsBoundedHoweverLongTheRun) {
  const auto t0 = std::chrono::steady_clock::now();
  const CliResult r = run_cli({"check", "--single", "--set", "integrator.method=dopri5", "--set", "integrator.t_end=1e15",
                               "--set", "ensemble.size=100000", "--backend", "cpu"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.code, exit_ok) << r.err;
  EXPECT_NE(r.out.find("# run time: about "), std::string::npos) << r.out;
  EXPECT_LT(seconds, 60.0) << r.out;  // its budget is 8 s; generous for a loaded machine
  // A fixed-step run: the work is the grid's, exactly.
  const CliResult fixed =
      run_cli({"check", "--single", "--set", "ensemble.size=20000", "--set", "integrator.t_end=500", "--backend", "cpu"});
  EXPECT_EQ(fixed.code, exit_ok) << fixed.err;
  EXPECT_NE(fixed.out.find("# work: 1e+08 instance-steps"), std::string::npos) << fixed.out;  // 20000 x 5000 steps
}

}  // namespace
}  // namespace chens
