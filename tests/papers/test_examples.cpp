// The example studies of the paper reproductions (examples/seiler*.toml) run through the
// same path as `chens run` (load_study, resolve, run_study_cpu) and give the numbers
// the per-instance tests assert (docs/reproductions/pendulum.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "dispatch/run_study.hpp"
#include "output/writer.hpp"
#include "paper_support.hpp"
#include "study/study.hpp"
#include "support/source_dir.hpp"

namespace chens::papers::examples {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> example_files() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(test::source_dir() + "/examples")) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".toml" && name.rfind("seiler", 0) == 0) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string example(const std::string& name) { return test::source_dir() + "/examples/" + name; }

EnsembleResult run_example(const std::string& path) {
  const Study s = load_study(path, {});
  const RunParams<double> rp = resolve(s);
  return run_study_cpu(s, rp, ensemble_spec(s, 1));
}

TEST(PaperExamples, AllExist) { EXPECT_GE(example_files().size(), 23u); }

TEST(PaperExamples, SingleUnperturbedTrajectoryAndNoLoss) {
  for (const auto& f : example_files()) {
    SCOPED_TRACE(f);
    const Study s = load_study(f, {});
    EXPECT_EQ(s.size, 1);
    EXPECT_EQ(s.perturbation, 0.0);
    if (s.model_kind == ModelKind::pendulum) {
      EXPECT_EQ(s.method, MethodId::rk4);  // the pendulum papers use RK4 only
    }
    const auto r = run_example(f);
    EXPECT_EQ(r.lost_total(), 0u);
    EXPECT_EQ(r.recorded.slot(0), 0);
  }
}

TEST(PaperExamples, ChainStudiesGiveTheSec7Numbers) {
  // The CLI path of 002 §7 (docs/reproductions/chain.md): RK4 on the Dirac equations keeps
  // the total linear momentum to rounding, its integration error (numerical reference)
  // ends between 0.1 and 1 (0.583 measured), and RATTLE keeps phi at its tolerance.
  const auto rk4 = run_example(example("seiler2002_sec7_chain_rk4_dirac.toml"));
  ASSERT_TRUE(rk4.reference_available);
  const auto& fin = rk4.series.back();
  EXPECT_EQ(fin.t, 200.0);
  EXPECT_LT(fin.metric[int(MetricId::linear_momentum_error)].max, 1e-13);
  EXPECT_GT(fin.metric[int(MetricId::integration_error)].max, 0.1);
  EXPECT_LT(fin.metric[int(MetricId::integration_error)].max, 1.0);
  const auto rattle = run_example(example("seiler2002_sec7_chain_rattle.toml"));
  for (const auto& st : rattle.series) EXPECT_LE(st.metric[int(MetricId::phi)].max, 1e-12) << "t = " << st.t;
  EXPECT_EQ(rattle.totals.unconverged_steps, 0u);
}

TEST(PaperExamples, Table1StudiesGiveTheTable) {
  // Same values as Seiler2002Table1.* (within the same 5 %); trajectory rows are
  // (t, x, y, px, py, x_ref, ...), one per period.
  const std::vector<std::pair<std::string, std::array<double, 5>>> rows = {
      {"seiler2002_table1_naive.toml", {9.66e-3, 7.28e-2, 9.22e-1, 2.16e-1, 3.05e-1}},
      {"seiler2002_table1_extended.toml", {5.75e-3, 1.77e-2, 8.98e-2, 3.17e-1, 6.21e-1}},
      {"seiler2002_table1_dirac.toml", {8.28e-4, 2.63e-3, 1.39e-2, 5.18e-2, 1.13e-1}}};
  const int k[5] = {2, 4, 10, 20, 30};
  const double T = rotation_period();
  for (const auto& [file, paper] : rows) {
    SCOPED_TRACE(file);
    const auto r = run_example(example(file));
    ASSERT_EQ(r.recorded.samples(), 31u);
    for (int i = 0; i < 5; ++i) {
      const auto row = r.recorded.row(static_cast<std::size_t>(k[i]), 0);
      EXPECT_NEAR(row[0], k[i] * T, 1e-12 * k[i] * T);
      EXPECT_NEAR(std::fabs(row[2]), paper[static_cast<std::size_t>(i)], 0.05 * paper[static_cast<std::size_t>(i)]);
    }
    // The same numbers in summary.json's phase-error table (output.phase_error in the file).
    const Study s = load_study(example(file), {});
    const RunParams<double> rp = resolve(s);
    const nlohmann::json table = phase_error_table(s, rp, r);
    EXPECT_NEAR(table["period"].get<double>(), T, 1e-12 * T);
    ASSERT_EQ(table["rows"].size(), 5u);
    for (int i = 0; i < 5; ++i) {
      const auto& row = table["rows"][static_cast<std::size_t>(i)];
      EXPECT_EQ(row["periods"].get<int>(), k[i]);
      EXPECT_EQ(row["y_exact"].get<double>(), r.recorded.row(static_cast<std::size_t>(k[i]), 0)[6]);
      EXPECT_NEAR(std::fabs(row["y_exact"].get<double>()), 0.0, 1e-12);
      EXPECT_NEAR(row["phase_error"].get<double>(), paper[static_cast<std::size_t>(i)],
                  0.05 * paper[static_cast<std::size_t>(i)]);
    }
  }
}

TEST(PaperExamples, MomentumProjectionStudyCounts155) {
  const auto r = run_example(example("seiler2001_sec6_momentum.toml"));
  EXPECT_NEAR(static_cast<double>(r.totals.momentum_projections), 155.0, 15.5);
  EXPECT_EQ(r.totals.steps, 40920u);
  ASSERT_EQ(r.series.size(), 1024u);
  const double phi_end = r.series.back().metric[int(MetricId::phi)].max;
  EXPECT_GE(phi_end, 4e-4);
  EXPECT_LE(phi_end, 6e-4);
}

TEST(PaperExamples, DiracProjectionStudyAboutEverySecondStep) {
  const auto r = run_example(example("seiler2002_sec11_dirac_projections.toml"));
  ASSERT_EQ(r.totals.steps, 1000u);
  for (const auto n : {r.totals.momentum_projections, r.totals.position_projections}) {
    EXPECT_GE(static_cast<double>(n), 1000.0 / 3.0);
    EXPECT_LE(static_cast<double>(n), 1000.0 * 3.0 / 4.0);
  }
}


TEST(PaperExamples, Sec6StudiesReportThePeriodogram) {
  // summary.json's periodogram (output.periodogram = "y") of the 001 §6 studies, as
  // Seiler2001Periodogram.* asserts on the per-instance path: one spike at 1/T = 0.302 with
  // momentum projections, smeared without.
  auto peak = [](const std::string& file) {
    const Study s = load_study(example(file), {});
    const RunParams<double> rp = resolve(s);
    const nlohmann::json p = periodogram_summary(s, rp, instance0_spectrum(s, rp, run_example(example(file))));
    EXPECT_EQ(p["samples"].get<int>(), 1024);
    return p;
  };
  const nlohmann::json mom = peak("seiler2001_sec6_momentum.toml"), none = peak("seiler2001_sec6_none.toml");
  const double df = 1.0 / 1024;
  EXPECT_NEAR(mom["peak"]["f"].get<double>(), 0.302, df);
  EXPECT_NEAR(mom["peak"]["f"].get<double>(), mom["reference_peak"]["f"].get<double>(), df / 2);
  EXPECT_LE(mom["peak"]["bins_above_quarter_peak"].get<int>(), 3);
  EXPECT_GE(mom["peak"]["amplitude"].get<double>(), 0.8 * mom["reference_peak"]["amplitude"].get<double>());
  EXPECT_GE(none["peak"]["bins_above_quarter_peak"].get<int>(), 10 * mom["peak"]["bins_above_quarter_peak"].get<int>());
  EXPECT_LE(none["peak"]["amplitude"].get<double>(), 0.4 * mom["peak"]["amplitude"].get<double>());
}

}  // namespace
}  // namespace chens::papers::examples
