// User models through the whole program (issue 19; docs/custom-models.md): the examples'
// planar pendulum, spherical pendulum and triatomic molecule, built into this test binary by
// chens_add_model (tests/CMakeLists.txt) exactly as into any chens executable, run by
// run_study and the CLI:
//   - the planar pendulum from V and phi gives the hand-written pendulum's ensemble (final
//     states of every instance to 1e-11 after 1000 steps, statistics alike) for the Hamilton-
//     Dirac equations with RK4 and momentum projection, and for RATTLE;
//   - the spherical pendulum reports angular_momentum_error (not the linear momenta), which
//     RATTLE keeps at round-off over the ensemble;
//   - summary.json, --dry-run and the state columns carry the model's name, parameters and
//     coordinates; results are invariant to the thread count;
//   - bad input: an unknown model (did you mean), an unknown parameter, a parameter of the
//     wrong type, dependent constraints (condition number), non-finite V or phi, a wrong
//     initial size, a formulation the model was not built with: exit 2, nothing written.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <chens/models/auto_model.hpp>

#include "cli/cli.hpp"
#include "dispatch/custom_models.hpp"
#include "dispatch/run_study.hpp"
#include "study/study.hpp"
#include "support/checkpoint_resume.hpp"
#include "support/cli_runner.hpp"
#include "support/exponent_by_central_difference.hpp"
#include "support/spec_defaults.hpp"
#include "support/temp_dir.hpp"
// The examples' triatomic (docs/custom-models.md), as chens_add_model builds it in.
#include "../examples/custom_model/models/triatomic.hpp"

namespace chens {
namespace {

using test::CliResult;
using test::run_cli;

Study study_from(const std::string& toml) {
  const std::vector<StudyRun> runs = load_runs_text(toml, "test", {});
  return runs.at(0).study;
}

EnsembleResult run(const Study& s, int threads = 0) {
  const RunParams<double> rp = resolve(s);
  EnsembleSpec spec = ensemble_spec(s, threads);
  spec.keep_instances = spec.size;
  return run_study_cpu(s, rp, spec);
}

double worst_state_difference(const EnsembleResult& a, const EnsembleResult& b) {
  EXPECT_EQ(a.kept.final_physical.size(), b.kept.final_physical.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.kept.final_physical.size() && i < b.kept.final_physical.size(); ++i)
    worst = std::max(worst, std::fabs(a.kept.final_physical[i] - b.kept.final_physical[i]) /
                                (1.0 + std::fabs(b.kept.final_physical[i])));
  return worst;
}

TEST(CustomModels, TheRegistryHoldsTheExamples) {
  for (const char* name : {"planar-pendulum", "spherical-pendulum", "triatomic"}) {
    const CustomModelInfo* m = find_custom_model(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_FALSE(m->entries.empty()) << name;
  }
  const CustomModelInfo& t = *find_custom_model("triatomic");
  EXPECT_EQ(t.dof, 9);
  EXPECT_EQ(t.constraints, 3);
  EXPECT_EQ(t.parameters.size(), 9u);
  EXPECT_TRUE(find_custom_model("spherical-pendulum")->angular_momentum);
  EXPECT_FALSE(find_custom_model("planar-pendulum")->angular_momentum);
  // METHODS rk4 rattle (tests/CMakeLists.txt): each entry holds those two methods alone.
  for (const CustomEntry& e : t.entries)
    EXPECT_EQ(e.methods, method_bit(MethodId::rk4) | method_bit(MethodId::rattle)) << formulation_name(e.formulation);
  // TANGENTS for the triatomic alone: a tangent entry per formulation, on the CPU, and the
  // memory bound of its tangent system's instance (two tangents of 18 numbers and two slots
  // more in its state, geometry/tangent_system.hpp).
  int tangent_entries = 0;
  for (const CustomEntry& e : t.entries)
    if (e.tangents) {
      tangent_entries += 1;
      EXPECT_STREQ(e.backend, "cpu");
    }
  EXPECT_EQ(tangent_entries, 2);
  EXPECT_GE(t.bytes_per_instance_tangents, t.bytes_per_instance + (2 * 18 + 2) * sizeof(double));
  for (const char* name : {"planar-pendulum", "spherical-pendulum"})
    for (const CustomEntry& e : find_custom_model(name)->entries) EXPECT_FALSE(e.tangents) << name;
}

// A user model built in with its tangent systems (chens_add_model's TANGENTS; issue 43: every
// model): the triatomic's exponent from its built-in tangent unit, against the central
// difference of two runs of its plain unit (tests/support/exponent_by_central_difference.hpp;
// test_lyapunov_runs.cpp asserts the same of it compiled on first use from its header).
TEST(CustomModels, TheTriatomicsBuiltInTangentSystemGivesTheCentralDifferenceExponent) {
  using M = AutoModel<Triatomic, double>;
  const M::Params k = test::spec_default_parameters<Triatomic>();
  const M::State z0 = test::spec_default_initial<Triatomic>();
  const Study base = study_from("[model]\nkind = \"triatomic\"\n");
  const auto triatomic_study = [&](const M::State& z, bool lyapunov) {
    Study s = test::one_instance(base, z, 0.01, lyapunov);
    s.record = {0};
    return s;
  };
  // The built-in units run all three: no compile on first use.
  ASSERT_NE(find_custom_entry(triatomic_study(z0, true), "cpu"), nullptr);
  ASSERT_NE(find_custom_entry(triatomic_study(z0, false), "cpu"), nullptr);
  ASSERT_FALSE(runs_compiled_on_first_use(triatomic_study(z0, true), BackendId::cpu));
  test::expect_exponent_is_central_difference(M::make(k), z0, triatomic_study, "triatomic built in");
}

const char* kPendulumStudy = R"([model]
kind = "KIND"
mass = 1.3
length = 0.8
gravity = 2.0
initial = [0.8, 0.0, 0.0, -2.0]
[integrator]
formulation = "FORMULATION"
method = "METHOD"
h = 0.005
t_end = 5.0
[projection]
momentum = MOMENTUM
[ensemble]
size = 200
perturbation = 1e-3
seed = 7
[output]
sample_dt = 0.5
reference = "none"
)";

std::string pendulum_study(const std::string& kind, const std::string& formulation, const std::string& method,
                           bool momentum) {
  std::string s = kPendulumStudy;
  auto put = [&](const std::string& key, const std::string& value) { s.replace(s.find(key), key.size(), value); };
  put("KIND", kind);
  put("FORMULATION", formulation);
  put("METHOD", method);
  put("MOMENTUM", momentum ? "true" : "false");
  return s;
}

TEST(CustomModels, ThePlanarPendulumFromVAndPhiRunsTheHandWrittenPendulumsEnsemble) {
  for (const auto& [formulation, method, momentum] : std::vector<std::tuple<std::string, std::string, bool>>{
           {"dirac", "rk4", true}, {"constrained", "rattle", false}, {"naive", "rk4", false}}) {
    const Study ad = study_from(pendulum_study("planar-pendulum", formulation, method, momentum));
    const Study hand = study_from(pendulum_study("pendulum", formulation, method, momentum));
    ASSERT_EQ(ad.model_kind, ModelKind::custom);
    const EnsembleResult ra = run(ad), rh = run(hand);
    const double d = worst_state_difference(ra, rh);
    std::printf("[ measured ] planar-pendulum vs pendulum, %s + %s: final states of 200 instances differ by %.2e\n",
                formulation.c_str(), method.c_str(), d);
    EXPECT_LE(d, 1e-11) << formulation << " + " << method;
    EXPECT_EQ(ra.lost_total(), 0u);
    // The statistics of the metrics they share, at the last sample.
    const auto& a = ra.series.back();
    const auto& h = rh.series.back();
    for (int m : {int(MetricId::energy_error), int(MetricId::phi), int(MetricId::psi)})
      EXPECT_NEAR(a.metric[m].max, h.metric[m].max, 1e-12 + 1e-6 * h.metric[m].max) << metric_name(m);
  }
}

TEST(CustomModels, TheSphericalPendulumReportsItsAngularMomentumWhichRattleConserves) {
  const Study s = study_from(R"([model]
kind = "spherical-pendulum"
length = 0.9
gravity = 9.81
[integrator]
method = "rattle"
h = 0.01
t_end = 20.0
[ensemble]
size = 100
perturbation = 1e-2
[output]
reference = "auto"
)");
  const EnsembleResult r = run(s);
  EXPECT_TRUE(r.metric_reported(int(MetricId::angular_momentum_error)));
  EXPECT_FALSE(r.metric_reported(int(MetricId::linear_momentum_error)));
  EXPECT_TRUE(r.metric_reported(int(MetricId::integration_error)));
  const double lz = r.series.back().metric[int(MetricId::angular_momentum_error)].max;
  const double err = r.series.back().metric[int(MetricId::integration_error)].max;
  std::printf("[ measured ] spherical pendulum, RATTLE h = 0.01 to t = 20, 100 instances: max |L_z - L_z(0)| = %.2e, "
              "integration error %.2e\n",
              lz, err);
  EXPECT_LE(lz, 1e-12);
  EXPECT_GT(err, 1e-6);  // RATTLE's O(h^2) error against the DOPRI5 reference: the reference runs
  EXPECT_LT(err, 1.0);
  // Thread counts do not change a bit.
  EXPECT_EQ(worst_state_difference(run(s, 1), run(s, 2)), 0.0);
}

// Checkpoint and resume (docs/checkpoints.md) of a user model with its numerical reference,
// stopped three times: bitwise the uninterrupted run (the test body every backend runs).
TEST(CustomModels, ResumeIsBitwise) {
  Study s = study_from("[model]\nkind = \"triatomic\"\nm2 = 12.0\n[integrator]\nh = 0.01\nt_end = 2.0\n"
                       "[ensemble]\nsize = 150\n[output]\nsample_dt = 0.05\nreference = \"auto\"\n"
                       "record = [0, 5, 17]\n");
  const RunParams<double> rp = resolve(s);
  const std::int64_t K = rp.samples + 1;
  test::check_resume_is_bitwise(run_study_cpu, s, {2, K / 2, K - 2}, "triatomic rk4 with its reference");
}

// An inconsistent ensemble (000 §8): every instance but the nominal one starts on the level
// set phi = +-phi_offset, psi = +-psi_offset of each constraint.
TEST(CustomModels, InconsistentEnsemblesStartAtTheirOffsets) {
  const Study s = study_from(R"([model]
kind = "triatomic"
[integrator]
formulation = "dirac"
h = 0.01
t_end = 0.1
[ensemble]
size = 64
kind = "inconsistent"
phi_offset = 1e-3
psi_offset = 2e-3
[output]
sample_dt = 0.1
)");
  const EnsembleResult r = run(s);
  const auto& t0 = r.series.front();
  EXPECT_NEAR(t0.metric[int(MetricId::phi)].max, 1e-3, 1e-10);
  EXPECT_NEAR(t0.metric[int(MetricId::psi)].max, 2e-3, 1e-10);
  // The Dirac flow keeps phi and psi (002 eq. 47): still at the offsets after 10 steps.
  EXPECT_NEAR(r.series.back().metric[int(MetricId::phi)].max, 1e-3, 1e-9);
  EXPECT_NEAR(r.series.back().metric[int(MetricId::psi)].max, 2e-3, 1e-9);
}

TEST(CustomModels, SummaryDryRunAndStateColumnsCarryTheModel) {
  test::TempDir dir;
  const std::string out = dir.str("out");
  const CliResult r = run_cli({"run", "--single", "--set", "model.kind=triatomic", "--set", "model.m2=12", "--set",
                               "integrator.t_end=1", "--set", "integrator.h=0.01", "--set", "ensemble.size=5", "--set",
                               "output.trajectory=true", "--set", "output.reference=auto", "--out", out, "--no-progress"});
  ASSERT_EQ(r.code, exit_ok) << r.err;
  std::ifstream f(out + "/summary.json");
  const nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_EQ(j["study"]["model"]["kind"], "triatomic");
  EXPECT_EQ(j["study"]["model"]["m2"], 12.0);
  EXPECT_EQ(j["study"]["model"]["b13"], 1.6);  // defaults are printed too
  EXPECT_FALSE(j["study"]["model"].contains("mass"));
  EXPECT_FALSE(j["study"]["model"].contains("length"));
  EXPECT_EQ(j["study"]["model"]["initial"].size(), 18u);
  for (const char* metric : {"integration_error", "energy_error", "phi", "psi"})
    EXPECT_TRUE(j[metric]["final_max"].is_number()) << metric;
  std::ifstream t(out + "/trajectory.csv");
  std::string header;
  std::getline(t, header);
  EXPECT_NE(header.find("x1,y1,z1,x2,y2,z2,x3,y3,z3,px1,py1,pz1"), std::string::npos) << header;
  const CliResult dry =
      run_cli({"run", "--single", "--dry-run", "--set", "model.kind=spherical-pendulum", "--set", "model.length=0.5"});
  ASSERT_EQ(dry.code, exit_ok) << dry.err;
  EXPECT_NE(dry.out.find("kind = \"spherical-pendulum\""), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("length = 0.5\n"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("gravity = 1.0\n"), std::string::npos) << dry.out;
  // The printed study reads back to the same study.
  const Study again = study_from(dry.out);
  EXPECT_EQ(again.custom_model, "spherical-pendulum");
  EXPECT_EQ(again.parameters, (std::vector<double>{1.0, 0.5, 1.0}));
}

TEST(CustomModels, BadInputIsRefusedWithItsReasonAndNothingIsWritten) {
  test::TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"model.kind=spherical-pendulm"}, "model.kind = \"spherical-pendulm\": unknown name; allowed: \"pendulum\""},
      {{"model.kind=spherical-pendulum", "model.lenght=2"},
       "unknown key model.lenght (did you mean model.length?); allowed keys in [model]: kind, source, initial, mass"},
      {{"model.kind=spherical-pendulum", "model.b21=2"}, "unknown key model.b21 (did you mean model.b12?)"},
      {{"model.kind=spherical-pendulum", "model.b12=2"},
       "model.b12 is not a parameter of model.kind = \"spherical-pendulum\"; its parameters: mass, length, gravity"},
      {{"model.kind=spherical-pendulum", "model.atoms=7"}, "model.atoms is not a parameter of model.kind"},
      {{"model.kind=spherical-pendulum", "model.length=\"long\""}, "model.length"},
      {{"model.kind=pendulum", "model.b12=2"},
       "model.b12 is a parameter of a user model; this study's model.kind is "
       "\"pendulum\""},
      // Collinear atoms: the three distance constraints are dependent.
      {{"model.kind=triatomic", "model.b13=2"}, "are dependent at the initial state: Q = J M^-1 J^T has condition number"},
      {{"model.kind=spherical-pendulum", "model.initial=[0, 0, 0, 1, 0, 0]"}, "are dependent at the initial state"},
      {{"model.kind=spherical-pendulum", "model.mass=-1"}, "are dependent at the initial state"},
      // An impossible triangle: the default initial state is not finite.
      {{"model.kind=triatomic", "model.b13=3"}, "has a non-finite component y2"},
      {{"model.kind=planar-pendulum", "model.mass=10", "model.gravity=10", "model.initial=[0, 1e308, 0, 0]"},
       "the potential V of model.kind = \"planar-pendulum\" is not finite at the initial state"},
      {{"model.kind=planar-pendulum", "model.initial=[1, 0, 0]"},
       "model.initial has 3 numbers; model.kind = "
       "\"planar-pendulum\" needs 4"},
      {{"model.kind=planar-pendulum", "integrator.formulation=total"},
       "integrator.formulation = \"total\": model.kind = "
       "\"planar-pendulum\" has \"naive\""},
      {{"model.kind=planar-pendulum", "integrator.formulation=total"},
       "is method \"rattle\"; chens_add_model's "
       "FORMULATIONS)"},
      // tests/CMakeLists.txt builds the example models with METHODS rk4 rattle.
      {{"model.kind=planar-pendulum", "integrator.method=gauss2"},
       "integrator.method = \"gauss2\": model.kind = \"planar-pendulum\" is built with methods \"rk4\" "
       "(chens_add_model's METHODS)"},
      {{"model.kind=planar-pendulum", "integrator.precision=float"},
       "integrator.precision = \"float\" is built for model.kind = "
       "\"pendulum\" and \"chain\" only (model.kind = \"planar-pendulum\")"},
      {{"model.kind=planar-pendulum", "output.wedge=true"},
       "output.wedge is written for model.kind = \"pendulum\" and "
       "\"penalty-pendulum\""},
      // (from a header, model.source, its tangent system is compiled on first use: test_lyapunov_runs.cpp)
      // The triatomic alone is built with TANGENTS (tests/CMakeLists.txt).
      {{"model.kind=planar-pendulum", "output.lyapunov=true"},
       "output.lyapunov: model.kind = \"planar-pendulum\" is built into this executable by chens_add_model without "
       "the tangent system of integrator.formulation = \"dirac\" and method \"rk4\"; build it with "
       "chens_add_model's TANGENTS, or name its header in model.source"},
  };
  for (const auto& [sets, message] : bad) {
    for (const char* command : {"check", "run"}) {
      const std::string out = dir.str(std::string("bad-") + command);
      std::vector<std::string> args = {command, "--single"};
      for (const std::string& set : sets) {
        args.push_back("--set");
        args.push_back(set);
      }
      if (std::string(command) == "run") {
        args.push_back("--out");
        args.push_back(out);
        args.push_back("--no-progress");
      }
      const CliResult r = run_cli(args);
      EXPECT_EQ(r.code, exit_bad_input) << command << " " << sets.back() << ": " << r.err;
      EXPECT_NE(r.err.find(message), std::string::npos) << command << " " << sets.back() << ": stderr was " << r.err;
      EXPECT_FALSE(std::filesystem::exists(out + "/summary.json")) << sets.back();
    }
  }
}

}  // namespace
}  // namespace chens
