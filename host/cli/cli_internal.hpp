// What the files of the chens command line (host/cli/) share: the parsed options, usage
// errors, the help texts, the commands and the steps `run` and `check` have in common.
// Not an interface outside host/cli/ (cli.hpp is).
#pragma once

#include <signal.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/backend_id.hpp"
#include "backends/ensemble_result.hpp"
#include "output/output_lock.hpp"
#include "output/run_directory.hpp"
#include "output/writer.hpp"
#include "study/study.hpp"

namespace chens::cli {

// "1 instance", "2 instances": a count as a message says it.
inline std::string counted(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// ---- Options (cli_args.cpp) ----

enum class Command { run, check, validate };

struct RunArgs {
  std::optional<std::string> study;
  std::vector<std::string> sets;
  std::string out = "chens-output";
  std::string backend = "auto";
  int threads = 0;
  bool force = false;
  bool dry_run = false;
  int progress = -1;  // run: 1 = report, 0 = never, -1 = when stderr is a terminal
  double rtol = -1;   // validate; < 0: the step-scaled default (validate_command.cpp)
  double atol = -1;
  std::optional<std::string> resume;  // run --resume DIR
  double checkpoint_minutes = 10;
  long checkpoint_segments = 0;
  bool out_given = false, backend_given = false;
  bool single = false;   // run, check --single: one run from every key's default, not the default study
  bool compile = false;  // check --compile: the systems compiled on first use compiled into the cache first
  // A library caller's (host/cli/library_run.hpp): false runs in memory, with no output
  // directory, lock, checkpoint or file; on_result gets each run's result once integrated,
  // on_comparison a study's comparison.csv once every run is done.
  bool write_files = true;
  std::function<void(const Study&, const RunParams<double>&, const EnsembleResult&, const RunInfo&)> on_result;
  std::function<void(const std::string&)> on_comparison;
};

// A usage error: printed as one line and the pointer to the command's help (see_help).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The options of `run` and `check` (the same set) or of `validate`; `args` are those after
// the command's name. Throws UsageError.
RunArgs parse_run_args(const std::vector<std::string>& args, Command command);

// Runs `read` (a command's options and study) and reports what it throws: a UsageError with
// the pointer to the command's help, a StudyError followed by hint(). Returns
// exit_bad_input then, nullopt when all was read.
std::optional<int> read_input(const std::string& command, std::ostream& err, const std::function<void()>& read,
                              const std::function<std::string()>& hint = {});

// ---- Help (cli_help.cpp) ----

extern const char* const overview_text;  // chens --help
extern const char* const start_text;     // bare chens

// The text of `chens COMMAND --help`, or nullptr for a name that is no command.
const char* help_text(const std::string& command);

// The line after a usage error: where the command's options are, not the whole help.
std::string see_help(const std::string& command);

// ---- Commands ----

int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int check_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int validate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int plot_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int models_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// ---- What `run` and `check` share (run_plan.cpp) ----

// The runs of `run` and `check`: the study file's, one run from every key's default
// (--single), or the built-in default study's; --set applies to every run.
std::vector<StudyRun> runs_of_args(const RunArgs& ra);

// Whether `chens run` treats the runs as a study (DIR/<run>/, study.json, comparison.csv)
// rather than a single run: several runs, or one named by a [sweep] or [[run]].
inline bool several_runs(const std::vector<StudyRun>& runs) { return runs.size() != 1 || !runs[0].name.empty(); }

// Every run resolved before the first one starts; a StudyError names the run. With
// stop_on_signal (under an InterruptGuard) a signal stops it early: fewer RunParams than
// runs, and the caller checks interrupt_signal_received().
std::vector<RunParams<double>> resolve_runs(const std::vector<StudyRun>& runs, bool stop_on_signal = false);

// A hint after a study error of the built-in default study changed by --set, or "".
std::string default_study_hint(const RunArgs& ra);

// What the runs come from, for study.json, resume.json and chens check.
std::string study_source(const RunArgs& ra);

// The GPU or the CPU for this study, as --backend asks: sets `gpu` and info's backend
// fields; exit_no_backend (with the message, naming `run` when given) when --backend cuda
// cannot be honoured.
std::optional<int> choose_backend(const Study& study, const RunArgs& ra, std::ostream& err, RunInfo& info,
                                  BackendId& backend, const std::string& run = "");

// The resolved study as `--dry-run` and `chens check` print it, after its backend and size.
void print_dry_run(const Study& study, const RunParams<double>& rp, const RunArgs& ra, std::ostream& out);

// The host memory a run needs, by what holds it (docs/study-format.md, "Memory"): what
// `chens check` prints and `chens run` refuses by.
struct RunMemory {
  double instances = 0;   // the instances' states (the CPU's; on the GPU they are the device's)
  double statistics = 0;  // every sample time's statistics, the ensemble's and each group's, and passages
  double records = 0;     // recorded trajectories (output.record, trajectory.csv, phase error, periodogram)
  double files = 0;       // the result files built in memory before they are written
  double base = 0;        // the program itself
  double total() const { return instances + statistics + records + files + base; }
  // "about 2.1 GB: 1.8 GB for 1000001 sample times' statistics, ..." (the parts that matter).
  std::string text() const;
};
RunMemory run_memory(const Study& study, const RunParams<double>& rp, BackendId backend);

// The memory chens plans with: the machine's physical memory, or its cgroup's limit where
// that is lower (a batch job's), or CHENS_MEMORY_BYTES where set (docs/study-format.md).
double usable_memory_bytes();

// Why `chens run` refuses to start this study on this machine (on the GPU when `gpu`), or "".
std::string run_refusal(const Study& study, const RunParams<double>& rp, BackendId backend);

// One chens per output directory (docs/checkpoints.md): takes dir's lock into `lock` on the
// rank that writes; exit_bad_input with the message when another chens holds it.
std::optional<int> lock_output_dir(const std::string& dir, std::ostream& err, std::optional<OutputLock>& lock);

// Throws std::runtime_error naming dir when a file cannot be created in it.
void check_writable_dir(const std::string& dir);

// --force: removes what the earlier run or study wrote in dir and names what it keeps.
// Throws what remove_earlier_results throws.
void remove_earlier_results_noting_kept(const std::string& dir, std::ostream& err);

// ---- Checkpoints and resuming (run_checkpoints.cpp) ----

inline constexpr const char* resume_file_name = "resume.json";

// The signal that interrupted the run (SIGINT, SIGTERM, SIGUSR1) or 0.
int interrupt_signal_received();
// A signal interrupt_signal_received() returned, as messages name it ("SIGTERM", ...), and the
// exit code a run interrupted by it ends with (exit_interrupted_*, cli.hpp).
const char* interrupt_signal_name(int sig);
int interrupted_exit_code(int sig);

// Asked after each segment (EnsembleSpec::checkpoint): the interrupt the run stops at, 0 to
// go on, and whether to save. `stop_for_test` stops as SIGINT would (CHENS_TEST_INTERRUPT_AT).
// Under mpirun every rank gets the same answer (mpi_agree_on_stop): all stop when any rank
// was signalled, and take that signal as their own (its exit code and message); rank 0
// alone decides `save`.
int agree_on_interrupt(bool stop_for_test, bool& save);

// SIGINT, SIGTERM and SIGUSR1 (which mpirun forwards to every rank: docs/checkpoints.md),
// while it lives, stop the run at its next stop point with a checkpoint; a second signal
// ends the process at once.
class InterruptGuard {
 public:
  explicit InterruptGuard(bool install);
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  bool installed_;
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_usr1_ {};
};

// DIR/resume.json: what `chens run --resume DIR` needs to run the same study again.
std::string resume_record(const std::vector<StudyRun>& runs, const std::vector<RunParams<double>>& rps, const RunArgs& ra,
                          bool several);

struct Resumed {
  std::vector<StudyRun> runs;
  bool several = false;
  std::string backend;
};

// Reads DIR/resume.json back; a StudyError says what is wrong with it.
Resumed read_resume_record(const std::string& dir);

// ---- Runs (run_command.cpp, run_study.cpp) ----

// One run into `dir` (run_command.cpp, "SingleRun"); the result is left in `result`.
// `progress_label` prefixes its status lines in a study; `resume_json` (single runs) is
// written to dir/resume.json before the run starts; lock_dir: take dir's lock (a study's
// runs run under the study directory's). Returns the exit code.
int execute_run(const Study& study, const RunParams<double>& rp, const RunArgs& ra, const std::string& dir,
                std::ostream& err, EnsembleResult& result, const std::string& progress_label = "",
                const std::string& resume_json = "", bool lock_dir = true);

// A study of several runs, each into DIR/<run>/, with DIR/study.json and the comparison.
int run_several(const std::vector<StudyRun>& runs, const RunArgs& ra, std::ostream& out, std::ostream& err);

// `chens check` once its runs are read and resolved: the report on out, or why a run would be
// refused on err.
int check_runs(const std::vector<StudyRun>& runs, const std::vector<RunParams<double>>& rps, const RunArgs& ra,
               std::ostream& out, std::ostream& err);

// `chens validate` once its study is read: the study on both backends, compared (exit_ok,
// exit_mismatch; exit_no_backend without a usable GPU).
int validate_study(const Study& study, const RunParams<double>& rp, const RunArgs& ra, std::ostream& out, std::ostream& err);

// `chens run` once its runs are read: SIGINT and SIGTERM stop it at the next stop point
// (with a checkpoint where it writes files); a single run (several false) or a study.
int run_runs(const std::vector<StudyRun>& runs, bool several, const RunArgs& ra, std::ostream& out, std::ostream& err);

}  // namespace chens::cli
