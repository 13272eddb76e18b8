// A study's cost comparison (docs/study-format.md, "Cost"): the integration at its median
// pace per instance-step (backends/step_cost.hpp), which a cold start or a busy moment does
// not move, with the median's notch as its noise, and the table saying when two runs are
// within it. Identical runs of the default study's size differed by up to 7x in
// integrate_s; the first was inflated by its cold start.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/step_cost.hpp"
#include "cli/cli.hpp"
#include "output/study_index.hpp"
#include "support/checkpoint_resume.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace chens {
namespace {

namespace fs = std::filesystem;
using test::run_cli;
using test::write_file;

// The histogram's median and quartiles against the exact order statistics of the values it
// was filled with: each within one bin (1.2 %).
TEST(StepCost, QuantilesAreThoseOfTheSamplesToABin) {
  std::mt19937_64 rng(7);  // seed 7
  std::lognormal_distribution<double> pace(std::log(3e-9), 0.3);
  std::vector<double> v(20001);
  std::vector<std::uint64_t> h(StepCostBins::count, 0);
  for (double& x : v) {
    x = pace(rng);
    h[static_cast<std::size_t>(StepCostBins::index(x))] += 1;
  }
  std::sort(v.begin(), v.end());
  const StepCost c = StepCost::of(h);
  EXPECT_EQ(c.samples, v.size());
  const double bin = std::pow(10.0, 1.0 / StepCostBins::per_decade);
  for (const auto& [q, got] : {std::pair{0.25, c.p25}, {0.5, c.p50}, {0.75, c.p75}}) {
    const double exact = v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
    EXPECT_LT(std::max(got / exact, exact / got), bin) << "q = " << q << " (seed 7)";
  }
  // 1.58 IQR / sqrt(n) relative to the median (201 samples: wider than a bin), and never
  // below a bin (20001 samples).
  std::vector<std::uint64_t> few(StepCostBins::count, 0);
  for (int i = 0; i < 201; ++i) few[static_cast<std::size_t>(StepCostBins::index(pace(rng)))] += 1;
  const StepCost f = StepCost::of(few);
  EXPECT_GT(f.relative_notch(), bin - 1);
  EXPECT_NEAR(f.relative_notch(), 1.58 * (f.p75 - f.p25) / std::sqrt(201.0) / f.p50, 1e-12);
  EXPECT_DOUBLE_EQ(c.relative_notch(), bin - 1);
  std::vector<std::uint64_t> one(StepCostBins::count, 0);
  one[1000] = 5;
  EXPECT_DOUBLE_EQ(StepCost::of(one).relative_notch(), bin - 1);
  EXPECT_EQ(StepCost::of(std::vector<std::uint64_t>(StepCostBins::count, 0)).samples, 0u);
}

// A cold start and a busy stretch (a quarter of the samples ten times slower) move the mean
// cost 3.25-fold and the median by less than a bin.
TEST(StepCost, TheMedianIsNotMovedByASlowStretch) {
  std::vector<std::uint64_t> calm(StepCostBins::count, 0), disturbed(StepCostBins::count, 0);
  calm[static_cast<std::size_t>(StepCostBins::index(2e-9))] = 1000;
  disturbed = calm;
  disturbed[static_cast<std::size_t>(StepCostBins::index(2e-9))] = 750;
  disturbed[static_cast<std::size_t>(StepCostBins::index(2e-8))] = 250;
  const double bin = std::pow(10.0, 1.0 / StepCostBins::per_decade);
  const double calm_p50 = StepCost::of(calm).p50, disturbed_p50 = StepCost::of(disturbed).p50;
  EXPECT_LT(std::max(calm_p50 / disturbed_p50, disturbed_p50 / calm_p50), bin);
  EXPECT_EQ(StepCostBins::index(disturbed_p50), StepCostBins::index(2e-9));
}

nlohmann::json digest(const char* name, double cost, double noise) {
  return {{"name", name},
          {"formulation", "dirac"},
          {"method", "rk4"},
          {"h", 0.1},
          {"instances", 64},
          {"live_final", 64},
          {"lost", 0},
          {"steps", 1000},
          {"rhs_evaluations", 4000},
          {"projections", 0},
          {"wall_seconds", 1.0},
          {"integration_seconds", 0.5},
          {"cost_seconds", cost},
          {"cost_noise", noise}};
}

std::string row_of(const std::string& table, const std::string& run) {
  const auto at = table.find("\n  " + run + " ");
  return at == std::string::npos ? "" : table.substr(at + 1, table.find('\n', at + 1) - at - 1);
}

// Runs whose notches overlap the fastest's are marked ~, the others not; comparison.csv
// says the same in a column.
TEST(CostComparison, TheTableSaysWhichCostsAreWithinTheNoise) {
  const std::vector<nlohmann::json> d = {digest("fast", 1.0, 0.02), digest("tied", 1.03, 0.02),
                                         digest("slower", 1.10, 0.02)};
  const std::string table = comparison_table(d);
  EXPECT_NE(table.find("cost_s"), std::string::npos) << table;
  EXPECT_NE(row_of(table, "fast").find(" 1.00"), std::string::npos) << table;
  EXPECT_NE(row_of(table, "tied").find("~1.03"), std::string::npos) << table;
  EXPECT_NE(row_of(table, "slower").find(" 1.10"), std::string::npos) << table;
  EXPECT_EQ(row_of(table, "slower").find("~"), std::string::npos) << table;
  EXPECT_NE(row_of(table, "tied").find("+-2.0%"), std::string::npos) << table;
  const std::string csv = comparison_csv(d);
  EXPECT_NE(csv.find("cost_within_noise_of_fastest"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\ntied,"), std::string::npos);
  std::istringstream lines(csv);
  std::string head, fast, tied, slower;
  std::getline(lines, head);
  std::getline(lines, fast);
  std::getline(lines, tied);
  std::getline(lines, slower);
  EXPECT_NE(tied.find(",true,"), std::string::npos) << tied;
  EXPECT_NE(slower.find(",false,"), std::string::npos) << slower;
  // Without every run's sampled pace (the GPU), the comparison falls back to integrate_s.
  std::vector<nlohmann::json> gpu = d;
  gpu[1]["cost_seconds"] = nullptr;
  EXPECT_EQ(comparison_table(gpu).find("cost_s"), std::string::npos);
  EXPECT_NE(comparison_table(gpu).find("integrate_s"), std::string::npos);
}

// A resumed run's cost_relative used only the part after the resume (naive 5.40x Dirac after
// a resume, 1.00 vs 1.08 uninterrupted). Its costs are now those of all its parts: as many
// timed samples of the pace as the run takes uninterrupted (segments of sample rows, no
// clock-sized passes, so that which samples are timed does not depend on the clock), and
// more integration time than its checkpoint carried.
TEST(CostComparison, AResumedRunsCostIsThatOfAllItsParts) {
  const Study s = load_runs_text("[integrator]\nt_end = 20.0\n[ensemble]\nsize = 1024\n[output]\nsample_dt = 0.5\n",
                                 "resume.toml", {})[0]
                      .study;
  const RunParams<double> rp = resolve(s);
  EnsembleSpec base = ensemble_spec(s, 2);
  base.stop_seconds = 0;
  base.segment_rows = 4;
  const EnsembleResult whole = run_study_cpu(s, rp, base);
  test::Legs legs(s, rp);
  std::int64_t saved = 0;
  EnsembleSpec first = legs.spec(base, saved);
  first.checkpoint = [](std::int64_t done, std::int64_t) {
    CheckpointRequest q;
    q.stop = q.save = done >= 20;
    return q;
  };
  const EnsembleResult part = run_study_cpu(s, rp, first);
  ASSERT_GT(part.stopped_at, 0);
  legs.read_back();
  const EnsembleResult rest = run_study_cpu(s, rp, legs.spec(base, saved));
  ASSERT_EQ(rest.stopped_at, 0);
  EXPECT_GT(StepCost::of(whole.step_cost).samples, 0u);
  EXPECT_GT(StepCost::of(legs.from->step_cost).samples, 0u);
  EXPECT_EQ(StepCost::of(rest.step_cost).samples, StepCost::of(whole.step_cost).samples);
  EXPECT_GT(legs.from->integration_seconds, 0.0);
  EXPECT_GT(rest.integration_seconds, legs.from->integration_seconds);
  EXPECT_GT(rest.measurement_seconds, legs.from->measurement_seconds);
}

// A CPU study: every run samples its pace; summary.json, study.json and comparison.csv carry it.
TEST(CostComparison, ACpuStudySamplesEachRunsPace) {
  test::TempDir dir;
  write_file(dir.str("s.toml"),
             "[integrator]\nt_end = 5.0\n[ensemble]\nsize = 1024\n[[run]]\nname = \"a\"\n[[run]]\nname = \"b\"\n");
  const test::CliResult r =
      run_cli({"run", dir.str("s.toml"), "--out", dir.str("out"), "--no-progress", "--backend", "cpu"});
  ASSERT_EQ(r.code, exit_ok) << r.err;
  std::ifstream f(dir.path() / "out/a/summary.json");
  const nlohmann::json s = nlohmann::json::parse(f);
  ASSERT_TRUE(s["step_cost"].is_object()) << s.dump();
  EXPECT_GT(s["step_cost"]["samples"].get<double>(), 0);
  EXPECT_GT(s["step_cost"]["median_seconds"].get<double>(), 0);
  EXPECT_LE(s["step_cost"]["p25_seconds"].get<double>(), s["step_cost"]["median_seconds"].get<double>());
  EXPECT_LE(s["step_cost"]["median_seconds"].get<double>(), s["step_cost"]["p75_seconds"].get<double>());
  EXPECT_NE(r.out.find("noise"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cost_s"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace chens
