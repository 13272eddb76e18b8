// How many instances the statistics are over is part of every result a person reads
// (backends/live_fraction.hpp, docs/study-format.md "summary.json" live): a naive run that
// lost 99.9 % of its instances had its median of 73 survivors set beside Dirac's median of
// 10^5 with no mark, and a run that lost every instance exited 0.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/live_fraction.hpp"
#include "cli/cli.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace chens {
namespace {

namespace fs = std::filesystem;
using test::CliResult;
using test::run_cli;
using test::write_file;

nlohmann::json read_json(const fs::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f);
}

// Every instance over ensemble.lost_residual at its first measurement: lost, all of them.
const std::vector<std::string> all_lost = {
    "--set", "integrator.formulation=naive", "--set",        "ensemble.lost_residual=1e-300", "--set", "ensemble.size=64",
    "--set", "integrator.t_end=1",           "--no-progress"};

TEST(LiveFraction, ARunThatLosesEveryInstanceExits5WithItsResultsWritten) {
  test::TempDir dir;
  std::vector<std::string> args = {"run", "--single", "--out", dir.str("run")};
  args.insert(args.end(), all_lost.begin(), all_lost.end());
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.code, exit_all_lost) << r.err;
  EXPECT_NE(r.err.find("lost 64 (residual_bound 64)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("every instance was lost (none live from t = "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exit code 5"), std::string::npos) << r.err;
  const nlohmann::json s = read_json(dir.path() / "run/summary.json");
  EXPECT_EQ(s["live"]["final"], 0);
  EXPECT_EQ(s["live"]["final_fraction"], 0.0);
  EXPECT_FALSE(s["live"]["none_from"].is_null());
  EXPECT_TRUE(s["energy_error"]["final_p50"].is_null());
  // The table says how many were live: none.
  EXPECT_NE(r.out.find("0/64*"), std::string::npos) << r.out;
}

TEST(LiveFraction, AStudyRunsOnAndExits5NamingTheRunsThatLostEveryInstance) {
  test::TempDir dir;
  write_file(dir.str("s.toml"),
             "[integrator]\nt_end = 1.0\n[ensemble]\nsize = 64\n"
             "[[run]]\nname = \"kept\"\n"
             "[[run]]\nname = \"gone\"\nintegrator.formulation = \"naive\"\nensemble.lost_residual = 1e-300\n"
             "[[run]]\nname = \"after\"\n");
  const CliResult r = run_cli({"run", dir.str("s.toml"), "--out", dir.str("out"), "--no-progress"});
  EXPECT_EQ(r.code, exit_all_lost) << r.err;
  EXPECT_NE(r.err.find("1 of 3 runs lost every instance (no statistics at t_final): \"gone\"; exit code 5"),
            std::string::npos)
      << r.err;
  const nlohmann::json index = read_json(dir.path() / "out/study.json");
  EXPECT_TRUE(index["complete"].get<bool>());
  for (const auto& run : index["runs"]) EXPECT_EQ(run["status"], "complete") << run["name"];
  EXPECT_EQ(index["runs"][1]["results"]["live_final"], 0);
  EXPECT_EQ(index["runs"][0]["results"]["live_final"], 64);
  EXPECT_TRUE(fs::exists(dir.path() / "out/comparison.csv"));
  EXPECT_NE(r.out.find("0/64*"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("64/64 "), std::string::npos) << r.out;
}

// A quarter of the ensemble (h = 0.01) keeps |phi| under 1e-6; the rest (h = 0.5, naive
// RK4) crosses it at its first sample. Its statistics from then on are the quarter's.
std::string few_survivors_study() {
  return "[integrator]\nformulation = \"naive\"\nt_end = 5.0\n[ensemble]\nsize = 64\nlost_residual = 1e-6\n"
         "[output]\nsample_dt = 0.5\n[parameters]\nh = [0.01, 0.5, 0.5, 0.5]\ngroup_by = \"h\"\n"
         "[first_passage]\nphi = 1e-9\nlost = true\n";
}

TEST(LiveFraction, StatisticsOfAFewSurvivorsAreMarkedInEveryResult) {
  test::TempDir dir;
  write_file(dir.str("few.toml"), few_survivors_study());
  const CliResult r = run_cli({"run", dir.str("few.toml"), "--out", dir.str("run"), "--no-progress", "--backend", "cpu"});
  ASSERT_EQ(r.code, exit_ok) << r.err;
  const nlohmann::json s = read_json(dir.path() / "run/summary.json");
  EXPECT_EQ(s["live"]["final"], 16);
  EXPECT_EQ(s["live"]["final_fraction"], 0.25);
  EXPECT_EQ(s["live"]["threshold"], few_live_fraction);
  EXPECT_EQ(s["live"]["below_threshold_from"], 0.5);  // the first sample after t = 0
  EXPECT_TRUE(s["live"]["none_from"].is_null());
  // Each group's own: h = 0.01 keeps all 16, h = 0.5 none of its 48.
  ASSERT_EQ(s["groups"]["groups"].size(), 2u);
  EXPECT_EQ(s["groups"]["groups"][0]["live"]["final"], 16);
  EXPECT_EQ(s["groups"]["groups"][1]["live"]["final"], 0);
  EXPECT_EQ(s["groups"]["groups"][1]["live"]["none_from"], 0.5);
  // The message says it.
  EXPECT_NE(r.err.find("only 16 of 64 instances were live at t = 5 (fewer than 50 % from t = 0.5): the statistics "
                       "from then on are those of the survivors"),
            std::string::npos)
      << r.err;
  // The table: live/N with the mark and its footnote; the groups and the first passages.
  EXPECT_NE(r.out.find("16/64*"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(* fewer than 50 % of the instances live at t_final"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Groups ([parameters] group_by)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("h=0.01"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("16/16 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0/48*"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("First passages ([first_passage])"), std::string::npos) << r.out;
  // The loss's first-passage entry has every key the levels' have.
  const nlohmann::json lost = s["first_passage"]["lost"];
  ASSERT_TRUE(lost.contains("level") && lost.contains("lost_first")) << lost;
  EXPECT_TRUE(lost["level"].is_null());
  EXPECT_EQ(lost["lost_first"], 0);
  EXPECT_EQ(lost["crossed"], 48);
  for (const auto& [key, value] : s["first_passage"]["phi"].items()) EXPECT_TRUE(lost.contains(key)) << key;
}

// live_fraction() against the series it reads: the first sample below the threshold, the
// first with none, and the last with any.
TEST(LiveFraction, FindsTheSamplesWhereTheEnsembleThinsOut) {
  std::vector<SampleStats> series(5);
  const std::uint64_t live[] = {100, 60, 50, 49, 0};
  for (std::size_t k = 0; k < series.size(); ++k) {
    series[k].t = static_cast<double>(k);
    for (std::uint64_t i = 0; i < live[k]; ++i) series[k].metric[0].add(1.0);
  }
  const LiveFraction f = live_fraction(series, 100);
  EXPECT_EQ(f.final, 0u);
  EXPECT_TRUE(f.all_lost());
  EXPECT_EQ(f.below_t, 3.0);  // 49 < 50; 50 is not below half
  EXPECT_EQ(f.none_t, 4.0);
  EXPECT_EQ(f.last_live_t, 3.0);
  series.pop_back();
  const LiveFraction g = live_fraction(series, 100);
  EXPECT_FALSE(g.all_lost());
  EXPECT_TRUE(g.few());
  EXPECT_EQ(g.fraction(), 0.49);
}

}  // namespace
}  // namespace chens
