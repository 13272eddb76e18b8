// What a study of several runs writes for analysis (docs/study-format.md, "Several runs"
// and "Growth exponents"): typed configuration columns in comparison.csv and study.json,
// series_long.csv, and growth exponents withheld, with their reasons, where the errors are
// at rounding level or saturated.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "output/growth.hpp"
#include "output/series_long.hpp"
#include "output/study_index.hpp"
#include "support/cli_runner.hpp"
#include "support/growth_grid.hpp"
#include "support/temp_dir.hpp"

namespace chens {
namespace {

namespace fs = std::filesystem;

std::vector<double> of(const std::vector<double>& t, double (*f)(double)) {
  std::vector<double> v;
  for (double x : t) v.push_back(f(x));
  return v;
}

const GrowthLimits unit_double = growth_limits(DBL_EPSILON, 1.0);

TEST(GrowthVerdict, LimitsFollowPrecisionAndStateSize) {
  EXPECT_DOUBLE_EQ(unit_double.rounding, 1000 * DBL_EPSILON);
  EXPECT_DOUBLE_EQ(unit_double.saturation, 0.5);
  const GrowthLimits f = growth_limits(FLT_EPSILON, 4.0);
  EXPECT_DOUBLE_EQ(f.rounding, 4000 * double(FLT_EPSILON));
  EXPECT_DOUBLE_EQ(f.saturation, 2.0);
  EXPECT_DOUBLE_EQ(growth_limits(DBL_EPSILON, 0.01).saturation, 0.5);  // a state smaller than 1 counts as 1
  // A study's: the default pendulum starts at [1, 0, 0, -2], so its size is 2.
  Study s;
  EXPECT_DOUBLE_EQ(growth_limits(s).rounding, 2000 * DBL_EPSILON);
  EXPECT_DOUBLE_EQ(growth_limits(s).saturation, 1.0);
  s.precision = Precision::single_precision;
  EXPECT_DOUBLE_EQ(growth_limits(s).rounding, 2000 * double(FLT_EPSILON));
}

TEST(GrowthVerdict, PowerLawBetweenTheLimitsGivesItsExponent) {
  const std::vector<double> t = test::growth_grid();
  const GrowthVerdict g = assess_growth(t, of(t, [](double x) { return 1e-8 * x * x; }), 10, 100, unit_double);
  ASSERT_TRUE(g.exponent.has_value()) << g.reason;
  EXPECT_NEAR(*g.exponent, 2.0, 1e-6);
  EXPECT_EQ(g.points, 181);
  EXPECT_EQ(g.reason, "");
  EXPECT_DOUBLE_EQ(g.largest, 1e-4);
}

TEST(GrowthVerdict, RoundingLevelGivesNoExponent) {
  // Round-off of a projected residual: a few ulps, rising as sqrt(t) (a random walk), whose
  // slope 0.5 would otherwise read as "growth".
  const std::vector<double> t = test::growth_grid();
  const auto v = of(t, [](double x) { return 1e-16 * std::sqrt(x); });
  ASSERT_NEAR(growth_exponent(t, v, 10, 100)->exponent, 0.5, 1e-9);
  const GrowthVerdict g = assess_growth(t, v, 10, 100, unit_double);
  EXPECT_FALSE(g.exponent.has_value());
  EXPECT_EQ(g.reason, "at rounding level (max 1e-15 <= 2.22e-13)");
  EXPECT_EQ(g.points, 181);
  // The same values in a float run are rounding too; 1e-9 is not in double but is in float.
  const auto w = of(t, [](double x) { return 1e-13 * x * x; });
  EXPECT_TRUE(assess_growth(t, w, 10, 100, unit_double).exponent.has_value());
  EXPECT_EQ(assess_growth(t, w, 10, 100, growth_limits(FLT_EPSILON, 1.0)).reason,
            "at rounding level (max 1e-09 <= 0.000119)");
}

TEST(GrowthVerdict, SaturatedErrorsGiveNoExponent) {
  const std::vector<double> t = test::growth_grid();
  // A diverging run: the errors reach 1e14.
  const GrowthVerdict d = assess_growth(t, of(t, [](double x) { return 1e-6 * std::pow(x, 10.0); }), 10, 100, unit_double);
  EXPECT_FALSE(d.exponent.has_value());
  EXPECT_EQ(d.reason, "saturated (max 1e+14 >= 0.5)");
  // A phase error that has wrapped around its orbit of radius 1: |2 sin(theta / 2)| with
  // theta = 1e-3 t^2, whose running maximum is 2 from t = 56 on.
  const GrowthVerdict w =
      assess_growth(t, of(t, [](double x) { return std::fabs(2 * std::sin(0.5e-3 * x * x)); }), 10, 100, unit_double);
  EXPECT_FALSE(w.exponent.has_value());
  EXPECT_EQ(w.reason, "saturated (max 2 >= 0.5)");
  // An error that stops growing below the state's size (a small orbit): 1e-6 t^2 up to 1e-3.
  const GrowthVerdict s =
      assess_growth(t, of(t, [](double x) { return std::min(1e-6 * x * x, 1e-3); }), 10, 100, unit_double);
  EXPECT_FALSE(s.exponent.has_value());
  EXPECT_EQ(s.reason.rfind("growth stops within the window (slope 2 over t in [10, 31.6], ", 0), 0u) << s.reason;
  EXPECT_EQ(s.reason.substr(s.reason.size() - 18), " over [31.6, 100])") << s.reason;
}

TEST(GrowthVerdict, BoundedErrorsAreReportedAsNoGrowth) {
  // An energy error of a symplectic method: oscillating, bounded; the running maximum is
  // flat after the first period, an exponent near 0 (not withheld: it is a true statement).
  const std::vector<double> t = test::growth_grid();
  const GrowthVerdict g =
      assess_growth(t, of(t, [](double x) { return 1e-4 * (1 + std::sin(2 * x)); }), 10, 100, unit_double);
  ASSERT_TRUE(g.exponent.has_value()) << g.reason;
  EXPECT_NEAR(*g.exponent, 0.0, 0.01);
}

TEST(GrowthVerdict, NoLiveInstanceAtTheEndGivesNoExponent) {
  const std::vector<double> t = test::growth_grid();
  std::vector<double> v = of(t, [](double x) { return 1e-6 * x; });
  v.back() = NAN;
  const GrowthVerdict g = assess_growth(t, v, 10, 100, unit_double);
  EXPECT_FALSE(g.exponent.has_value());
  EXPECT_EQ(g.reason, "no live instance at the end of the window");
  EXPECT_EQ(assess_growth(t, std::vector<double>(t.size(), 0.0), 10, 100, unit_double).reason,
            "fewer than 3 positive values in the window");
}

// A result of the default pendulum (size 2: limits 4.44e-13 and 1) with known series:
// integration error 1e-6 t^2, energy error 1e-6 t, phi at round-off, psi diverged.
EnsembleResult synthetic_result() {
  EnsembleResult r;
  r.backend = "cpu";
  r.instances = 10;
  r.reference_available = true;
  r.totals.steps = 1000;
  r.totals.rhs_evaluations = 4000;
  r.totals.reference_steps = 300;
  r.totals.reference_rhs_evaluations = 1234;
  r.wall_seconds = 0.5;
  for (double x : test::growth_grid()) {
    SampleStats st;
    st.t = x;
    const double v[4] = {1e-6 * x * x, 1e-6 * x, 3e-17, 1e14};
    for (int m = 0; m < 4; ++m) {
      st.metric[m].count = 10;
      st.metric[m].max = v[m];
      for (int q = 0; q < quantile_count; ++q) st.quantile[m][q] = v[m] / 2;
    }
    r.series.push_back(st);
  }
  return r;
}

TEST(StudyOutputs, SummaryGrowthHasExponentsAndReasons) {
  const nlohmann::json g = growth_summary(synthetic_result(), Study{});
  EXPECT_EQ(g["window"], nlohmann::json({10.0, 100.0}));
  EXPECT_DOUBLE_EQ(g["limits"]["rounding"].get<double>(), 2000 * DBL_EPSILON);
  EXPECT_DOUBLE_EQ(g["limits"]["saturation"].get<double>(), 1.0);
  EXPECT_NEAR(g["integration_error"]["max"].get<double>(), 2.0, 1e-6);
  EXPECT_NEAR(g["integration_error"]["p50"].get<double>(), 2.0, 1e-6);
  EXPECT_FALSE(g["integration_error"].contains("max_reason"));
  EXPECT_NEAR(g["energy_error"]["max"].get<double>(), 1.0, 1e-6);
  EXPECT_TRUE(g["phi"]["max"].is_null());
  EXPECT_EQ(g["phi"]["max_reason"], "at rounding level (max 3e-17 <= 4.44e-13)");
  EXPECT_EQ(g["phi"]["p50_reason"], "at rounding level (max 1.5e-17 <= 4.44e-13)");
  EXPECT_TRUE(g["psi"]["max"].is_null());
  EXPECT_EQ(g["psi"]["max_reason"], "saturated (max 1e+14 >= 1)");
  EXPECT_EQ(g["psi"]["points"], 181);
}

// Cells of a CSV line, quotes undone (RFC 4180).
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// comparison.csv as one map column -> cell per run.
std::vector<std::map<std::string, std::string>> read_csv(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> head = csv_cells(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = csv_cells(line);
    EXPECT_EQ(cells.size(), head.size()) << line;
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < head.size() && c < cells.size(); ++c) row[head[c]] = cells[c];
    rows.push_back(row);
  }
  return rows;
}

TEST(StudyOutputs, DigestAndCsvHoldTypedKeysCostSplitAndGrowthReasons) {
  const auto runs = load_runs_text(
      "[integrator]\nt_end = 100.0\n[[run]]\nname = \"a, tight\"\nprojection.momentum = true\nprojection.tol = 1e-10\n"
      "[[run]]\nname = \"b\"\nintegrator.h = 0.05\n",
      "test.toml", {});
  ASSERT_EQ(runs.size(), 2u);
  std::vector<nlohmann::json> digests;
  // Run names are directory-safe (no ','), but the CSV quotes whatever text a cell holds.
  for (const auto& run : runs)
    digests.push_back(run_digest(run.name == "a--tight" ? "a, tight" : run.name, run.study, resolve(run.study),
                                 synthetic_result(), run.overrides));
  const nlohmann::json& a = digests[0];
  EXPECT_EQ(a["varied"], nlohmann::json({{"projection.momentum", true}, {"projection.tol", 1e-10}}));
  EXPECT_TRUE(a["varied"]["projection.momentum"].is_boolean());
  EXPECT_TRUE(a["varied"]["projection.tol"].is_number_float());
  EXPECT_EQ(digests[1]["varied"], nlohmann::json({{"integrator.h", 0.05}}));
  // Every resolved key, defaults included, typed.
  EXPECT_EQ(a["resolved"]["ensemble.size"], 1024);
  EXPECT_EQ(a["resolved"]["integrator.method"], "rk4");
  EXPECT_EQ(a["resolved"]["output.trajectory"], false);
  EXPECT_EQ(a["resolved"]["model.initial"], nlohmann::json({1.0, 0.0, 0.0, -2.0}));
  EXPECT_EQ(a["reference_rhs_evaluations"], 1234);
  EXPECT_EQ(a["reference_steps"], 300);
  EXPECT_TRUE(a["device_seconds"].is_null());  // measured on the GPU only
  EXPECT_NEAR(a["growth_of_max"]["integration_error"].get<double>(), 2.0, 1e-6);
  EXPECT_TRUE(a["growth_of_max"]["psi"].is_null());
  EXPECT_EQ(a["growth_of_max_reason"]["psi"], "saturated (max 1e+14 >= 1)");
  EXPECT_FALSE(a["growth_of_max_reason"].contains("integration_error"));

  const std::string csv = comparison_csv(digests);
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_EQ(
      header.rfind("run,integrator.h,projection.momentum,projection.tol,formulation,method,h,instances,lost,live_final,"
                   "steps,rhs_evals,reference_rhs_evals,projections,wall_s,integrate_s,measure_s,cost_s,cost_noise,"
                   "cost_relative,cost_within_noise_of_fastest,device_s,setup_s,finish_s,",
                   0),
      0u)
      << header;
  const auto rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("run"), "a, tight");
  EXPECT_NE(csv.find("\n\"a, tight\","), std::string::npos);  // quoted: it holds the separator
  EXPECT_EQ(rows[0].at("projection.momentum"), "true");
  EXPECT_EQ(std::stod(rows[0].at("projection.tol")), 1e-10);
  EXPECT_EQ(rows[0].at("integrator.h"), "");  // not varied in this run: its value is in h
  EXPECT_EQ(rows[1].at("integrator.h"), "0.05");
  EXPECT_EQ(rows[1].at("projection.momentum"), "");
  EXPECT_EQ(std::stod(rows[1].at("h")), 0.05);
  EXPECT_EQ(rows[0].at("reference_rhs_evals"), "1234");
  EXPECT_EQ(rows[0].at("rhs_evals"), "4000");
  EXPECT_EQ(rows[0].at("wall_s"), "0.5");
  EXPECT_EQ(rows[0].at("device_s"), "nan");
  EXPECT_NEAR(std::stod(rows[0].at("integration_error_growth")), 2.0, 1e-6);
  EXPECT_EQ(rows[0].at("integration_error_growth_reason"), "");
  EXPECT_EQ(rows[0].at("psi_growth"), "nan");
  EXPECT_EQ(rows[0].at("psi_growth_reason"), "saturated (max 1e+14 >= 1)");
  EXPECT_EQ(rows[0].at("phi_growth_reason"), "at rounding level (max 3e-17 <= 4.44e-13)");
  // Resolved keys (not varied anywhere) follow, numbers exactly as they read back.
  EXPECT_EQ(rows[0].at("ensemble.size"), "1024");
  EXPECT_EQ(rows[0].at("ensemble.perturbation"), "0.0001");
  EXPECT_EQ(rows[0].at("output.trajectory"), "false");
  EXPECT_EQ(rows[0].at("model.initial"), "[1.0,0.0,0.0,-2.0]");
  EXPECT_EQ(rows[1].at("projection.tol"), "");  // varied keys are not repeated among the resolved
  EXPECT_EQ(header.find(",projection.tol,", header.find("finish_s")), std::string::npos);

  const std::string table = comparison_table(digests);
  EXPECT_NE(table.find("projection.tol"), std::string::npos) << table;
  EXPECT_NE(table.find("1e-10"), std::string::npos) << table;  // %.3g, not %f
  EXPECT_EQ(table.find("0.000000"), std::string::npos) << table;
  EXPECT_NE(table.find("ref_rhs_evals"), std::string::npos) << table;
  EXPECT_NE(table.find("1234"), std::string::npos) << table;
  EXPECT_NE(table.find("rounding"), std::string::npos) << table;
  EXPECT_NE(table.find("saturated"), std::string::npos) << table;
}

TEST(StudyOutputs, SeriesLongHoldsEveryCompleteRunsSeries) {
  test::TempDir dir;
  for (const char* r : {"a", "b"}) {
    fs::create_directories(dir.str(r));
    std::ofstream(dir.str(std::string(r) + "/series.csv"))
        << "t,live,phi_mean,phi_p50,surviving_phi\n0,4,0,0,1\n0.5,3," << (r[0] == 'a' ? "1e-3" : "2e-3") << ",nan,0.75\n";
  }
  nlohmann::json index = {{"runs",
                           {{{"name", "a"}, {"directory", "a"}, {"status", "complete"}},
                            {{"name", "b"}, {"directory", "b"}, {"status", "complete"}},
                            {{"name", "c"}, {"directory", "c"}, {"status", "failed"}}}}};
  EXPECT_EQ(series_long_csv(dir.str(), index),
            "run,time,metric,statistic,value\n"
            "a,0,live,count,4\na,0,phi,mean,0\na,0,phi,p50,0\na,0,phi,surviving,1\n"
            "a,0.5,live,count,3\na,0.5,phi,mean,1e-3\na,0.5,phi,p50,nan\na,0.5,phi,surviving,0.75\n"
            "b,0,live,count,4\nb,0,phi,mean,0\nb,0,phi,p50,0\nb,0,phi,surviving,1\n"
            "b,0.5,live,count,3\nb,0.5,phi,mean,2e-3\nb,0.5,phi,p50,nan\nb,0.5,phi,surviving,0.75\n");
  index["runs"][2]["status"] = "complete";  // but c has no series.csv
  try {
    series_long_csv(dir.str(), index);
    ADD_FAILURE() << "no error for a complete run without series.csv";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("c/series.csv: cannot be read (run \"c\")"), std::string::npos) << e.what();
  }
  // A run with [parameters] group_by (series.csv's first column `group`) beside one without:
  // every row says its group, "all" for the ungrouped run's.
  std::ofstream(dir.str("a/series.csv")) << "group,t,live,phi_mean\nall,0,4,0\nh=0.1,0,2,0\nh=0.05,0,2,0\n";
  index["runs"][2]["status"] = "failed";
  EXPECT_EQ(series_long_csv(dir.str(), index),
            "run,group,time,metric,statistic,value\n"
            "a,all,0,live,count,4\na,all,0,phi,mean,0\na,h=0.1,0,live,count,2\na,h=0.1,0,phi,mean,0\n"
            "a,h=0.05,0,live,count,2\na,h=0.05,0,phi,mean,0\n"
            "b,all,0,live,count,4\nb,all,0,phi,mean,0\nb,all,0,phi,p50,0\nb,all,0,phi,surviving,1\n"
            "b,all,0.5,live,count,3\nb,all,0.5,phi,mean,2e-3\nb,all,0.5,phi,p50,nan\nb,all,0.5,phi,surviving,0.75\n");
}

// The files of a real study: study.json's results typed, comparison.csv's columns, and
// series_long.csv with one row per run, sample, metric and statistic.
TEST(StudyOutputs, StudyWritesTypedComparisonAndLongSeries) {
  test::TempDir dir;
  std::ofstream(dir.str("runs.toml")) << "[integrator]\nt_end = 2.0\n[ensemble]\nsize = 10\n[output]\nsample_dt = 0.5\n"
                                         "[[run]]\nname = \"loose\"\nprojection.momentum = true\nprojection.tol = 1e-4\n"
                                         "[[run]]\nname = \"tight\"\nprojection.momentum = true\nprojection.tol = 1e-10\n";
  const std::string out = dir.str("out");
  const auto r = test::run_cli({"run", dir.str("runs.toml"), "--out", out, "--no-progress"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream f(out + "/study.json");
  const auto index = nlohmann::json::parse(f);
  const auto& results = index["runs"][1]["results"];
  EXPECT_EQ(results["varied"]["projection.tol"].get<double>(), 1e-10);
  EXPECT_EQ(results["varied"]["projection.momentum"], true);
  EXPECT_EQ(results["resolved"]["ensemble.size"], 10);
  EXPECT_EQ(results["resolved"]["integrator.t_end"], 2.0);
  std::ifstream c(out + "/comparison.csv");
  const auto rows = read_csv(std::string(std::istreambuf_iterator<char>(c), {}));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("run"), "loose");
  EXPECT_EQ(rows[0].at("projection.tol"), "0.0001");
  EXPECT_EQ(std::stod(rows[1].at("projection.tol")), 1e-10);
  EXPECT_EQ(rows[1].at("projection.momentum"), "true");
  EXPECT_EQ(rows[1].at("steps"), "200");  // 10 instances x 20 steps
  EXPECT_EQ(rows[1].at("integrator.method"), "rk4");
  EXPECT_NE(r.out.find("1e-10"), std::string::npos) << r.out;
  std::ifstream l(out + "/series_long.csv");
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(l, line)) lines.push_back(line);
  // 2 runs x 5 samples (t = 0, 0.5, ..., 2) x (live + 4 metrics x 8 statistics).
  ASSERT_EQ(lines.size(), 1u + 2 * 5 * 33);
  EXPECT_EQ(lines[0], "run,time,metric,statistic,value");
  EXPECT_EQ(lines[1], "loose,0,live,count,10");
  EXPECT_EQ(lines[2].rfind("loose,0,integration_error,mean,", 0), 0u) << lines[2];
  EXPECT_EQ(lines.back().rfind("tight,2,psi,p99,", 0), 0u) << lines.back();
}

}  // namespace
}  // namespace chens
