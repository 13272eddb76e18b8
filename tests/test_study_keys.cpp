// The study keys' one declaration (host/study/study_keys.cpp) against what chens printed and
// refused before the keys were declared once: to_toml and to_json of several studies byte
// for byte, and the message (or acceptance) of every key given a set of good and bad values,
// both pinned in tests/study_keys/ from the code before the change. And docs/study-format.md's
// key tables are the generated ones.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "study/study.hpp"
#include "study/study_keys.hpp"
#include "support/cli_runner.hpp"
#include "support/source_dir.hpp"

namespace chens {
namespace {

const std::string pinned_dir = test::source_dir() + "/tests/study_keys/";

// CHENS_UPDATE_PINNED=1 rewrites a pinned file with what the code prints now (after a
// deliberate change, e.g. a new model in model.kind's allowed names; review the diff).
void update_if_asked(const std::string& path, const std::string& text) {
  if (!std::getenv("CHENS_UPDATE_PINNED")) return;
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Studies whose printed forms differ in every conditional key: the default pendulum, chains
// with and without per-atom masses, the penalty pendulum (h from steps_per_oscillation), the
// Baumgarte formulation, and an adaptive run with every [ensemble] and [output] key set.
struct PinnedStudy {
  const char* name;
  const char* toml;
};

const std::vector<PinnedStudy>& pinned_studies() {
  static const std::vector<PinnedStudy> studies = {
      {"pendulum_default", ""},
      {"chain_masses", "[model]\nkind = \"chain\"\nlj_epsilon = 0.25\nmasses = [1, 2, 3, 4, 5, 6, 7.5]\n"
                       "[integrator]\nmethod = \"rattle\"\nh = 0.01\nt_end = 1\n"},
      {"chain_mass", "[model]\nkind = \"chain\"\natoms = 16\nmass = 2\n[integrator]\nformulation = \"impetus\"\n"
                     "impetus_reset = 0.5\nt_end = 3.3\n[output]\nreference = \"auto\"\nperiodogram = \"x6\"\n"},
      {"penalty_pendulum",
       "[model]\nkind = \"penalty-pendulum\"\npenalty = 500\nconstraint = \"G1\"\nlength = 2\ngravity = 0\n"
       "[integrator]\nmethod = \"verlet\"\nsteps_per_oscillation = 64\nt_end = 10\n[output]\nsample_dt = 0.5\n"
       "wedge = true\n"},
      {"baumgarte",
       "[integrator]\nformulation = \"baumgarte\"\nbaumgarte_alpha = 2.5\nbaumgarte_beta = 0\nmethod = \"midpoint\"\n"
       "tol = 1e-14\n[projection]\nposition = true\nscheme = \"midpoint\"\ntol = 1e-10\n"},
      {"dopri5_every_key",
       "[model]\ninitial = [0.6, -0.8, 0.1, 0.3]\nmass = 0.5\n[integrator]\nmethod = \"dopri5\"\nformulation = \"total\"\n"
       "rtol = 1e-8\natol = 0\nmax_steps = 12345\nt_end = 50\n"
       "[projection]\nmomentum = true\nposition = true\nevery = 3\nmax_iterations = 7\n"
       "[ensemble]\nsize = 100\nseed = 18446744\nperturbation = 0.001\ndistribution = \"normal\"\nkind = \"inconsistent\"\n"
       "phi_offset = 1e-3\npsi_offset = 0\nlost_residual = 0.5\nlost_unconverged = true\nlost_diverged = 0\n"
       "only = [0, 3, 17]\n[output]\nsample_dt = 0.25\ntrajectory = true\nreference_tol = 1e-10\nrecord = [3, 17]\n"
       "periodogram = \"py\"\n"},
      {"float_rk2", "[integrator]\nprecision = \"float\"\nmethod = \"rk2\"\nformulation = \"naive\"\nh = 0.03125\n"
                    "[output]\nreference = \"none\"\n"},
      // Pinned when the double pendulum was added (issue 18): masses and one length as given in
      // TOML, both resolved in JSON.
      {"double_pendulum",
       "[model]\nkind = \"double-pendulum\"\nmasses = [1.5, 0.5]\nlength = 0.8\ngravity = 9.81\n"
       "[integrator]\nformulation = \"baumgarte\"\nbaumgarte_alpha = 3\n[output]\nreference = \"auto\"\n"},
  };
  return studies;
}

Study pinned(const PinnedStudy& p) { return load_runs_text(p.toml, p.name, {}).at(0).study; }

TEST(StudyKeys, ToTomlIsByteForByteWhatItWas) {
  for (const PinnedStudy& p : pinned_studies()) {
    const Study s = pinned(p);
    update_if_asked(pinned_dir + p.name + ".toml", to_toml(s, resolve(s)));
    EXPECT_EQ(to_toml(s, resolve(s)), read_text(pinned_dir + p.name + ".toml")) << p.name;
  }
}

TEST(StudyKeys, ToJsonIsByteForByteWhatItWas) {
  for (const PinnedStudy& p : pinned_studies()) {
    const Study s = pinned(p);
    update_if_asked(pinned_dir + p.name + ".json", to_json(s, resolve(s)).dump(2) + "\n");
    EXPECT_EQ(to_json(s, resolve(s)).dump(2) + "\n", read_text(pinned_dir + p.name + ".json")) << p.name;
  }
}

// Every key of today's studies, and values that each key's parser or range rule refuses or
// takes: the message (or "ok") of --set KEY=VALUE on the defaults, through load and resolve.
const std::vector<std::string>& every_key() {
  // clang-format off
  static const std::vector<std::string> keys = {
      "model.kind", "model.initial", "model.mass", "model.masses", "model.length", "model.gravity", "model.atoms",
      "model.bond_length", "model.lj_epsilon", "model.penalty", "model.constraint", "model.lengths",
      "integrator.formulation", "integrator.method", "integrator.h", "integrator.t_end", "integrator.rtol",
      "integrator.atol", "integrator.tol", "integrator.max_iterations", "integrator.max_steps",
      "integrator.impetus_reset", "integrator.precision", "integrator.baumgarte_alpha", "integrator.baumgarte_beta",
      "integrator.steps_per_oscillation",
      "projection.momentum", "projection.position", "projection.tol", "projection.max_iterations", "projection.every",
      "projection.scheme",
      "ensemble.size", "ensemble.seed", "ensemble.perturbation", "ensemble.distribution", "ensemble.kind",
      "ensemble.phi_offset", "ensemble.psi_offset", "ensemble.lost_residual", "ensemble.lost_unconverged",
      "ensemble.lost_diverged", "ensemble.only",
      "output.sample_dt", "output.trajectory", "output.reference", "output.reference_tol", "output.states",
      "output.record", "output.phase_error", "output.periodogram", "output.wedge",
      "first_passage.integration_error", "first_passage.energy_error", "first_passage.phi", "first_passage.psi",
      "first_passage.linear_momentum_error", "first_passage.angular_momentum_error", "first_passage.wedge_error",
      "first_passage.lost",
      "parameters.mass", "parameters.length", "parameters.gravity", "parameters.bond_length", "parameters.lj_epsilon",
      "parameters.penalty", "parameters.h", "parameters.group_by", "parameters.group_bins", "parameters.group_edges"};
  // clang-format on
  return keys;
}

const std::vector<std::string> probe_values = {"-1",
                                               "0",
                                               "1",
                                               "2.5",
                                               "1e400",
                                               "nan",
                                               "\"x\"",
                                               "true",
                                               "[]",
                                               "[1, -2]",
                                               "[0, 2, 1]",
                                               "[1, 1]",
                                               "[0, 1, 2, 3]",
                                               "9223372036854775807",
                                               "\"G1\"",
                                               "\"float\"",
                                               "\"midpoint\"",
                                               "\"inconsistent\"",
                                               "\"none\"",
                                               "\"y\""};

std::string outcome(const std::vector<std::string>& sets) {
  try {
    for (const StudyRun& run : load_runs_text("", "study", sets)) resolve(run.study);
    return "ok";
  } catch (const StudyError& e) {
    return e.what();
  }
}

// Unknown keys (the allowed keys listed), and keys given together whose checks come in an order.
const std::vector<std::vector<std::string>> probe_sets = {
    // [parameters]: laws, and the rules between keys
    {"parameters.length=\"uniform(0.5, 2)\""},
    {"parameters.mass=\"normal(1, 0.2)\""},
    {"parameters.gravity=\"log-uniform(0, 1)\""},
    {"parameters.gravity=\"log-uniform(0.1, 10)\""},
    {"parameters.h=[0.1, 0.05]", "output.sample_dt=1"},
    {"parameters.h=[0.1, 0.05]", "integrator.method=dopri5"},
    {"parameters.h=\"uniform(0.01, 0.1)\"", "output.sample_dt=1", "integrator.t_end=10.5"},
    {"parameters.h=[0.1]", "output.sample_dt=1", "integrator.precision=float"},
    {"model.kind=chain", "parameters.bond_length=\"normal(1, 0.01)\"", "parameters.lj_epsilon=[0, 0.1]"},
    {"model.kind=chain", "model.masses=[1, 2, 1, 2, 1, 2, 1]", "parameters.mass=[1, 2]"},
    {"model.kind=penalty-pendulum", "parameters.penalty=\"log-uniform(10, 1000)\""},
    {"model.kind=double-pendulum", "parameters.mass=[1, 2]"},
    {"parameters.length=[1, 2]", "output.phase_error=[1]"},
    {"parameters.length=\"uniform (1 , 2)\""},
    // [parameters] group_by: the groups each law takes, and the rules between the keys
    {"parameters.length=\"uniform(0.5, 2)\"", "parameters.group_by=\"length\"", "parameters.group_bins=4"},
    {"parameters.length=\"log-uniform(0.5, 2)\"", "parameters.group_by=\"length\"", "parameters.group_edges=[0.5, 1, 2]"},
    {"parameters.h=[0.1, 0.05, 0.1]", "output.sample_dt=1", "parameters.group_by=\"h\""},
    {"parameters.h=\"uniform(0.01, 0.1)\"", "output.sample_dt=1", "parameters.group_by=\"h\"", "parameters.group_bins=3"},
    {"parameters.h=\"uniform(0.011, 0.019)\"", "output.sample_dt=0.1", "parameters.group_by=\"h\"",
     "parameters.group_edges=[0.011, 0.019]"},
    {"parameters.mass=\"normal(1, 0.2)\"", "parameters.group_by=\"mass\"", "parameters.group_edges=[0.5, 1, 1.5]"},
    {"parameters.length=[1, 2, 1]", "parameters.group_by=\"length\"", "parameters.group_edges=[0, 3]"},
    {"parameters.length=\"uniform(0.5, 2)\"", "parameters.group_by=\"length\"", "parameters.group_bins=2",
     "parameters.group_edges=[0.5, 2]"},
    {"parameters.length=\"uniform(0.5, 2)\"", "parameters.group_by=\"length\"", "parameters.group_edges=[1]"},
    {"parameters.length=\"uniform(0.5, 2)\"", "parameters.group_by=\"mass\""},
    {"parameters.length=\"uniform(1, 2, 3)\""},
    {"parameters.length=\"uniform(1,\""},
    {"parameters.length=\"()\""},
    {"model.zz=1"},
    {"integrator.zz=1"},
    {"projection.zz=1"},
    {"ensemble.zz=1"},
    {"output.zz=1"},
    {"model.mases=1"},
    {"model.atoms=7", "model.length=2"},
    {"model.kind=chain", "model.mass=-1", "model.atoms=1"},
    {"integrator.steps_per_oscillation=10", "integrator.method=verlet"},
    {"integrator.baumgarte_alpha=1", "integrator.method=verlet"},
    {"integrator.baumgarte_alpha=1", "model.kind=penalty-pendulum", "projection.momentum=true"},
    {"model.penalty=5", "integrator.steps_per_oscillation=10"},
    {"model.kind=chain", "model.gravity=1", "model.penalty=1"},
    {"model.kind=penalty-pendulum", "integrator.steps_per_oscillation=10", "integrator.h=0.1"},
    {"model.kind=double-pendulum", "model.masses=[1, 2, 3]"},
    {"model.kind=double-pendulum", "model.lengths=[1]"},
    {"model.kind=double-pendulum", "model.length=2", "model.lengths=[1, 2]"},
    {"model.kind=double-pendulum", "model.atoms=7"}};

std::string every_key_outcome() {
  std::string out;
  for (const std::string& key : every_key())
    for (const std::string& value : probe_values) out += key + "=" + value + " -> " + outcome({key + "=" + value}) + "\n";
  for (const std::vector<std::string>& sets : probe_sets) {
    for (const std::string& set : sets) out += set + " ";
    out += "-> " + outcome(sets) + "\n";
  }
  return out;
}

TEST(StudyKeys, EveryKeyRefusesAndTakesWhatItDid) {
  update_if_asked(pinned_dir + "messages.txt", every_key_outcome());
  EXPECT_EQ(every_key_outcome(), read_text(pinned_dir + "messages.txt"));
}

// docs/study-format.md's key tables: each after its marker line (a markdown comment), the
// table up to the first line that is not a table row.
std::map<std::string, std::string> documented_tables() {
  std::istringstream doc(read_text(test::source_dir() + "/docs/study-format.md"));
  std::map<std::string, std::string> tables;
  std::string line, marker;
  while (std::getline(doc, line)) {
    if (line.rfind("<!-- keys [", 0) == 0) {
      EXPECT_EQ(tables.count(line), 0u) << line << " twice";
      marker = line;
      tables[marker];
    } else if (!marker.empty() && line.rfind("|", 0) == 0) {
      tables[marker] += line + "\n";
    } else {
      marker.clear();
    }
  }
  return tables;
}

TEST(StudyKeys, TheDocsKeyTablesAreTheGeneratedOnes) {
  const std::map<std::string, std::string> documented = documented_tables();
  const std::vector<KeyTable> generated = key_tables();
  EXPECT_EQ(documented.size(), generated.size());
  for (const KeyTable& t : generated) {
    const auto doc = documented.find(t.marker);
    ASSERT_NE(doc, documented.end()) << "docs/study-format.md has no table after " << t.marker
                                     << "; `chens keys --markdown` prints it";
    EXPECT_EQ(doc->second, t.markdown) << "docs/study-format.md's table after " << t.marker
                                       << " is not the generated one; `chens keys --markdown` prints it";
  }
}

TEST(StudyKeys, ChensKeysPrintsTheTables) {
  const test::CliResult r = test::run_cli({"keys", "--markdown"});
  EXPECT_EQ(r.code, exit_ok);
  EXPECT_EQ(r.out, key_tables_markdown());
  EXPECT_EQ(test::run_cli({"keys"}).code, exit_bad_input);
  EXPECT_EQ(test::run_cli({"keys", "--help"}).code, exit_ok);
}

// Every exit code of cli.hpp is in the exit-code table of docs/study-format.md (138, SIGUSR1's,
// was missing; 5 is new).
TEST(ExitCodes, EveryOneIsInTheDocsTable) {
  const std::string doc = read_text(test::source_dir() + "/docs/study-format.md");
  const auto table = doc.find("## Exit codes");
  ASSERT_NE(table, std::string::npos);
  const std::string rows = doc.substr(table, doc.find("\n## ", table + 1) - table);
  for (int code : {exit_ok, exit_failure, exit_bad_input, exit_no_backend, exit_mismatch, exit_all_lost,
                   exit_interrupted_int, exit_interrupted_term, exit_interrupted_usr1}) {
    const std::string c = std::to_string(code);
    EXPECT_TRUE(rows.find("\n| " + c + " |") != std::string::npos || rows.find("\n| " + c + ",") != std::string::npos ||
                rows.find(", " + c + " |") != std::string::npos || rows.find(", " + c + ",") != std::string::npos)
        << "exit code " << c << " is not in docs/study-format.md's table";
  }
}

}  // namespace
}  // namespace chens
