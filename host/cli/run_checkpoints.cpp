// Interrupting and resuming `chens run` (docs/checkpoints.md): SIGINT and SIGTERM stop a run
// at its next stop point with a checkpoint, and DIR/resume.json says what to run again.
#include <unistd.h>

#include <csignal>
#include <filesystem>

#include <nlohmann/json.hpp>

#include <chens/version.hpp>

#include "cli/cli.hpp"
#include "cli/cli_internal.hpp"
#include "mpi/mpi_runtime.hpp"

namespace chens::cli {
namespace {

// The first signal is noted and the run stops at its next stop point (segment_plan.hpp:
// about every 2 s, inside long sample intervals too) with a checkpoint; the handler then
// gives the signal back its default action (SA_RESETHAND), so a second one ends the process
// at once.
volatile std::sig_atomic_t interrupt_signal = 0;
volatile std::sig_atomic_t announce = 1;  // under mpirun rank 0 alone says it was interrupted

extern "C" void note_interrupt(int sig) {
  interrupt_signal = sig;
  static const char msg[] =
      "\nchens: interrupted: the run stops at its next stop point, within a few seconds, and writes a checkpoint "
      "(interrupt again to stop at once, without one)\n";
  if (announce == 0) return;
  const ssize_t ignored = ::write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
}

// One run of resume.json's "runs", with its name and overrides.
StudyRun read_resume_run(const nlohmann::json& run, const std::string& origin) {
  const std::string name = run.at("name").get<std::string>();
  std::vector<StudyRun> one =
      load_runs_text(run.at("study").get<std::string>(), origin + (name.empty() ? "" : " (run " + name + ")"), {});
  if (one.size() != 1) throw StudyError(origin + ": run \"" + name + "\" is not a single run");
  one[0].name = name;
  for (const auto& kv : run.at("overrides"))
    one[0].overrides.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
  return std::move(one[0]);
}

}  // namespace

int interrupt_signal_received() { return interrupt_signal; }

const char* interrupt_signal_name(int sig) { return sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1" : "SIGINT"; }

int interrupted_exit_code(int sig) {
  return sig == SIGTERM ? exit_interrupted_term : sig == SIGUSR1 ? exit_interrupted_usr1 : exit_interrupted_int;
}

int agree_on_interrupt(bool stop_for_test, bool& save) {
  int sig = interrupt_signal != 0 ? static_cast<int>(interrupt_signal) : (stop_for_test ? SIGINT : 0);
  mpi_agree_on_stop(sig, save);
  if (sig != 0 && interrupt_signal == 0) interrupt_signal = sig;  // another rank's signal
  return sig;
}

InterruptGuard::InterruptGuard(bool install) : installed_(install) {
  interrupt_signal = 0;
  announce = mpi_root() ? 1 : 0;
  if (!installed_) return;
  struct sigaction sa {};
  sa.sa_handler = note_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = static_cast<int>(SA_RESETHAND);
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
  sigaction(SIGUSR1, &sa, &old_usr1_);
}

InterruptGuard::~InterruptGuard() {
  if (!installed_) return;
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  sigaction(SIGUSR1, &old_usr1_, nullptr);
  interrupt_signal = 0;
}

// Every run's resolved study (to_toml, which reads back to the same study), its name and
// overrides, and the backend asked for. Written before the first run starts; removed when
// the study is complete.
std::string resume_record(const std::vector<StudyRun>& runs, const std::vector<RunParams<double>>& rps, const RunArgs& ra,
                          bool several) {
  nlohmann::json j;
  j["format"] = 1;
  j["chens_version"] = CHENS_VERSION_STRING;
  j["backend"] = ra.backend;
  j["several"] = several;
  j["study_file"] = study_source(ra);
  j["set"] = ra.sets;
  j["runs"] = nlohmann::json::array();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    nlohmann::json o = nlohmann::json::array();
    for (const auto& [k, v] : runs[i].overrides) o.push_back({k, v});
    j["runs"].push_back({{"name", runs[i].name}, {"overrides", o}, {"study", to_toml(runs[i].study, rps[i])}});
  }
  return j.dump(2) + "\n";
}

Resumed read_resume_record(const std::string& dir) {
  namespace fs = std::filesystem;
  // Rank 0's view of DIR under mpirun: it alone writes there.
  const fs::path path = fs::path(dir) / resume_file_name;
  const std::optional<std::string> text = root_file_text(path.string());
  if (!text) {
    const bool there = root_path_exists(path.string());
    const bool done = root_path_exists((fs::path(dir) / "summary.json").string()) ||
                      root_path_exists((fs::path(dir) / "study.json").string());
    if (there) throw StudyError(path.string() + ": cannot be read");
    throw StudyError("--resume " + dir + ": no " + resume_file_name + " there: " +
                     (done ? "the run or study in it is complete, nothing to resume"
                           : "not the directory of an interrupted chens run"));
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(*text);
  } catch (const std::exception& e) {
    throw StudyError(path.string() + ": cannot be read: " + e.what());
  }
  try {
    if (j.at("format").get<int>() != 1) throw StudyError(path.string() + ": unknown format " + j.at("format").dump());
    const std::string version = j.at("chens_version").get<std::string>();
    if (version != CHENS_VERSION_STRING)
      throw StudyError(path.string() + ": the run was started by chens " + version + ", this is chens " +
                       CHENS_VERSION_STRING +
                       "; resume it with the chens that started it (another version would not "
                       "continue it bit for bit)");
    Resumed r;
    r.several = j.at("several").get<bool>();
    r.backend = j.at("backend").get<std::string>();
    for (const auto& run : j.at("runs")) r.runs.push_back(read_resume_run(run, path.string()));
    if (r.runs.empty() || (!r.several && r.runs.size() != 1))
      throw StudyError(path.string() + ": no runs, or several for a single run");
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw StudyError(path.string() + ": not a chens resume record: " + e.what());
  }
}

}  // namespace chens::cli
