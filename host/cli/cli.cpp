#include "cli/cli.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <iomanip>
#include <sstream>
#include <string>

#include <chens/version.hpp>

#include "backends/cuda_backend.hpp"
#include "dispatch/run_study.hpp"
#include "output/checkpoint_file.hpp"
#include "output/number_text.hpp"
#include "output/study_index.hpp"
#include "output/writer.hpp"
#include "mpi/mpi_runtime.hpp"
#include "study/default_study.hpp"
#include "study/study.hpp"
#include "study/study_keys.hpp"

namespace chens {

namespace {

// `chens --help`: every command's usage line and what it does; `chens COMMAND --help`: that
// command's own text below.
const char* overview_text =
    "usage: chens run [STUDY.toml | --single] [--set SECTION.KEY=VALUE]... [--out DIR] [OPTIONS]\n"
    "       chens run --resume DIR [OPTIONS]\n"
    "       chens check [STUDY.toml | --single] [--set SECTION.KEY=VALUE]... [OPTIONS]\n"
    "       chens validate [STUDY.toml] [--set SECTION.KEY=VALUE]... [--threads N] [--rtol R] [--atol A]\n"
    "       chens plot DIR [--out PLOTDIR] [OPTIONS]\n"
    "       chens keys --markdown\n"
    "       chens --version | --help | COMMAND --help\n"
    "\n"
    "  run       integrate the ensemble a study describes and write its results into DIR\n"
    "            (without a study file: the built-in default study, 6 runs, with any --set;\n"
    "            --single: one run from every key's default)\n"
    "  check     validate a study without running it; print its memory and a run-time estimate\n"
    "  validate  run one study on the CPU and on the GPU and compare the results\n"
    "  plot      draw the figures of a run or study directory into DIR/plots/\n"
    "  keys      print every study key (default, allowed values, meaning) as markdown tables\n"
    "\n"
    "  'chens COMMAND --help' lists the command's options. Study keys: docs/study-format.md.\n"
    "  Exit codes: 0 ok, 1 the run failed, 2 bad input, 3 backend not available,\n"
    "  4 validate: CPU and GPU differ, 130/143 interrupted with a checkpoint.\n";

// Bare `chens`: what to do first.
const char* start_text =
    "chens: no command given. To start:\n"
    "  chens run                 run the built-in default study (6 runs, about a second)\n"
    "  chens run STUDY.toml      run a study file (examples/*.toml)\n"
    "  chens --help              the commands; chens COMMAND --help: a command's options\n";

const char* run_help =
    "usage: chens run [STUDY.toml | --single] [--set SECTION.KEY=VALUE]... [--out DIR]\n"
    "                 [--backend auto|cpu|cuda] [--threads N] [--force] [--dry-run]\n"
    "                 [--progress | --no-progress] [--checkpoint-minutes M] [--checkpoint-segments N]\n"
    "       chens run --resume DIR [--threads N] [--progress | --no-progress] [--checkpoint-...]\n"
    "\n"
    "  Integrates the ensemble a study describes and writes DIR/summary.json and\n"
    "  DIR/series.csv (and trajectory.csv, periodogram.csv, states.h5 when the study's [output]\n"
    "  asks), and prints its results table. A study with [sweep] or [[run]] writes DIR/<run>/\n"
    "  per run, DIR/study.json and DIR/comparison.csv, and prints the comparison tables.\n"
    "  Without a study file it runs the built-in default study (examples/default_study.toml:\n"
    "  6 runs), --set applied to every run; with --single, one run from the defaults of every\n"
    "  key (and --set). Tables go to stdout, progress and status lines to stderr. Keys:\n"
    "  docs/study-format.md.\n"
    "\n"
    "  --set SECTION.KEY=VALUE  override one key in every run (VALUE is a TOML value; a bare word\n"
    "                           is a string; quote it for the shell: --set 'ensemble.only=[3,5]')\n"
    "  --single                 one run from every key's default instead of the default study;\n"
    "                           not with a study file or --resume\n"
    "  --out DIR                output directory (default: chens-output)\n"
    "  --backend B              auto (default), cpu or cuda\n"
    "  --threads N              CPU threads (default: all)\n"
    "  --force                  replace the results of an earlier run in DIR\n"
    "  --dry-run                validate, print the resolved study as TOML, write nothing\n"
    "  --progress               report progress on stderr after each segment of sample times\n"
    "                           (the default when stderr is a terminal; --no-progress: never)\n"
    "  --checkpoint-minutes M   write DIR/checkpoint.chk at the first stop point M minutes after\n"
    "                           the last one (default 10; 0: only when interrupted); stop points\n"
    "                           are about 2 s apart, inside long sample intervals too\n"
    "  --checkpoint-segments N  also at every N-th stop point (default 0: off)\n"
    "  --resume DIR             continue the interrupted run or study in DIR from its checkpoints;\n"
    "                           the result is bitwise that of an uninterrupted run. SIGINT and\n"
    "                           SIGTERM stop a run at its next stop point with a checkpoint\n"
    "                           (exit 130 / 143); docs/checkpoints.md\n";

const char* check_help =
    "usage: chens check [STUDY.toml | --single] [--set SECTION.KEY=VALUE]... [--backend auto|cpu|cuda]\n"
    "                   [--threads N]\n"
    "\n"
    "  Validates a study without running it and refuses what chens run would refuse before\n"
    "  running (exit 2 and the message; exit 3 for --backend cuda without a usable GPU), then\n"
    "  prints every run's resolved study, its memory and an estimate of its run time from a\n"
    "  short calibration run on the backend it would use. Nothing is written. Without a\n"
    "  study file it checks the built-in default study (6 runs), as chens run would run it.\n"
    "\n"
    "  --set SECTION.KEY=VALUE  override one key in every run, as for chens run\n"
    "  --single                 one run from every key's default, as for chens run\n"
    "  --backend B              the backend to estimate for: auto (default), cpu or cuda\n"
    "  --threads N              CPU threads of the calibration run (default: all)\n";

const char* validate_help =
    "usage: chens validate [STUDY.toml] [--set SECTION.KEY=VALUE]... [--threads N] [--rtol R] [--atol A]\n"
    "\n"
    "  Runs the study on the CPU and on the GPU and reports, per metric, the largest relative\n"
    "  difference of the statistics and of the instances' final states; exit 4 above the\n"
    "  tolerance, exit 3 without a usable GPU. Nothing is written. It compares one run:\n"
    "  a study file with a single run, or without one the defaults of every key (as\n"
    "  chens run --single, not the built-in default study), with --set applied.\n"
    "\n"
    "  --set SECTION.KEY=VALUE  override one key, as for chens run\n"
    "  --threads N              CPU threads (default: all)\n"
    "  --rtol R                 relative tolerance (default max(1e-8, 1e-11 * steps))\n"
    "  --atol A                 differences below it count as 0 (default max(1e-12, 1e-15 * steps))\n";

const char* plot_help =
    "usage: chens plot DIR [--out PLOTDIR] [--format png,svg] [--metrics M1,M2]\n"
    "                      [--runs R1,R2] [--color-by KEY] [--style-by KEY|none]\n"
    "\n"
    "  Draws the figures of a run or a study directory (one curve per run): each metric\n"
    "  against t (log-log, median with a p10-p90 band and the maximum), the error against h\n"
    "  (studies over integrator.h), the periodogram of instance 0 (output.periodogram, or y\n"
    "  of a pendulum's trajectory.csv), the phase error |y(kT)| (output.phase_error), the end\n"
    "  atom's path (chains), and DIR/plots/summary.txt (final values, growth exponents,\n"
    "  phase-error table); PNG and SVG in DIR/plots/. docs/study-format.md, \"chens plot\".\n"
    "\n"
    "  --out PLOTDIR            where the figures go (default: DIR/plots)\n"
    "  --format png,svg         the file formats (default: both)\n"
    "  --metrics M1,M2          the metrics to draw (default: every metric in series.csv)\n"
    "  --runs R1,R2             studies: only these runs, by name or shell pattern (quote it:\n"
    "                           --runs 'h=0.1_*')\n"
    "  --color-by KEY           studies: the swept key shown by colour\n"
    "  --style-by KEY|none      studies: the swept key shown by line style\n";

const char* keys_help =
    "usage: chens keys --markdown\n"
    "\n"
    "  Prints every study key, section by section, with its default, the values it allows and\n"
    "  what it means, as the markdown tables of docs/study-format.md (each after the comment\n"
    "  line that marks it there), generated from the keys' declarations.\n";

// A usage error: the message and where the command's options are, not the whole help.
std::string see_help(const std::string& command) {
  return "see 'chens " + (command.empty() ? std::string() : command + " ") + "--help'\n";
}

struct RunArgs {
  std::optional<std::string> study;
  std::vector<std::string> sets;
  std::string out = "chens-output";
  std::string backend = "auto";
  int threads = 0;
  bool force = false;
  bool dry_run = false;
  int progress = -1;  // run: 1 = report, 0 = never, -1 = when stderr is a terminal
  double rtol = -1;  // validate; < 0: the step-scaled default (validate_command)
  double atol = -1;
  std::optional<std::string> resume;  // run --resume DIR
  double checkpoint_minutes = 10;
  long checkpoint_segments = 0;
  bool out_given = false, backend_given = false;
  bool single = false;  // run, check --single: one run from every key's default, not the default study
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An option's number: the whole of v read as a double / a long, or nullopt.
std::optional<double> whole_double(const std::string& v) {
  std::size_t pos = 0;
  try {
    const double x = std::stod(v, &pos);
    if (pos == v.size()) return x;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::optional<long> whole_long(const std::string& v) {
  std::size_t pos = 0;
  try {
    const long n = std::stol(v, &pos);
    if (pos == v.size()) return n;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}


// Options of `run` and `validate`; `validate` takes --set, --threads, --rtol, --atol.
RunArgs parse_run_args(const std::vector<std::string>& a, bool validate = false) {
  RunArgs r;
  // An option's value: --opt=V or --opt V. A value beginning with "--" is the next option,
  // not a value (`--set --force` would otherwise swallow --force as a key).
  auto value = [&](std::size_t& i, const std::string& opt) -> std::string {
    const std::string& s = a[i];
    std::string v;
    if (s.size() > opt.size() && s.compare(0, opt.size() + 1, opt + "=") == 0) {
      v = s.substr(opt.size() + 1);
    } else {
      if (i + 1 >= a.size()) throw UsageError(opt + " needs a value");
      v = a[++i];
    }
    if (v.compare(0, 2, "--") == 0) throw UsageError(opt + " needs a value (got the option " + v + ")");
    return v;
  };
  auto is = [&](const std::string& s, const std::string& opt) {
    return s == opt || s.compare(0, opt.size() + 1, opt + "=") == 0;
  };
  for (std::size_t i = 1; i < a.size(); ++i) {
    const std::string& s = a[i];
    if (is(s, "--set")) {
      r.sets.push_back(value(i, "--set"));
    } else if (validate && (is(s, "--rtol") || is(s, "--atol"))) {
      const std::string opt = is(s, "--rtol") ? "--rtol" : "--atol";
      const std::string v = value(i, opt);
      const double x = whole_double(v).value_or(-1);
      if (!(x >= 0) || !std::isfinite(x)) throw UsageError(opt + " " + v + ": must be a finite number >= 0");
      (opt == "--rtol" ? r.rtol : r.atol) = x;
    } else if (!validate && is(s, "--out")) {
      r.out = value(i, "--out");
      r.out_given = true;
      if (r.out.empty()) throw UsageError("--out needs a directory");
    } else if (!validate && is(s, "--resume")) {
      r.resume = value(i, "--resume");
      if (r.resume->empty()) throw UsageError("--resume needs the directory of an interrupted run");
    } else if (!validate && is(s, "--checkpoint-minutes")) {
      const std::string v = value(i, "--checkpoint-minutes");
      const double x = whole_double(v).value_or(-1);
      if (!(x >= 0) || !std::isfinite(x))
        throw UsageError("--checkpoint-minutes " + v + ": must be a finite number of minutes >= 0 (0: only when interrupted)");
      r.checkpoint_minutes = x;
    } else if (!validate && is(s, "--checkpoint-segments")) {
      const std::string v = value(i, "--checkpoint-segments");
      const long n = whole_long(v).value_or(-1);
      if (n < 0) throw UsageError("--checkpoint-segments " + v + ": must be an integer >= 0 (0: off)");
      r.checkpoint_segments = n;
    } else if (!validate && is(s, "--backend")) {
      r.backend_given = true;
      r.backend = value(i, "--backend");
      if (r.backend != "auto" && r.backend != "cpu" && r.backend != "cuda")
        throw UsageError("--backend " + r.backend + ": unknown backend; allowed: auto, cpu, cuda");
    } else if (is(s, "--threads")) {
      const std::string v = value(i, "--threads");
      const long n = whole_long(v).value_or(-1);
      if (n < 1 || n > 4096) throw UsageError("--threads " + v + ": must be an integer in [1, 4096]");
      r.threads = static_cast<int>(n);
    } else if (!validate && s == "--force") {
      r.force = true;
    } else if (!validate && s == "--dry-run") {
      r.dry_run = true;
    } else if (!validate && (s == "--progress" || s == "--no-progress")) {
      r.progress = s == "--progress" ? 1 : 0;
    } else if (!validate && s == "--single") {
      r.single = true;
    } else if (!s.empty() && s[0] == '-') {
      throw UsageError("unknown option " + s);
    } else if (!r.study) {
      r.study = s;
    } else {
      throw UsageError("more than one study file given: " + *r.study + " and " + s);
    }
  }
  // --single replaces the built-in default study by the defaults of every key; a study file
  // or an interrupted study already says what runs.
  if (r.single && r.resume)
    throw UsageError("--single and --resume " + *r.resume + " exclude each other: --resume continues the study saved in " +
                     *r.resume + "/resume.json");
  if (r.single && r.study)
    throw UsageError("--single and the study file " + *r.study + " exclude each other: --single runs the defaults of "
                     "every key (with --set) instead of a study file");
  if (r.resume) {
    // The study, its directory and backend are the interrupted run's (DIR/resume.json).
    if (r.study || !r.sets.empty())
      throw UsageError("--resume " + *r.resume + " continues the study saved in " + *r.resume +
                       "/resume.json: give no study file and no --set");
    if (r.out_given) throw UsageError("--resume " + *r.resume + " writes into " + *r.resume + ": give no --out");
    if (r.backend_given)
      throw UsageError("--resume " + *r.resume + " runs on the backend that wrote the checkpoints: give no --backend");
    if (r.force || r.dry_run) throw UsageError("--resume takes neither --force nor --dry-run");
    r.out = *r.resume;
  }
  return r;
}

// The arguments, study and run parameters of `run` or `validate`; on bad input the message
// (naming the command) goes to err and the exit code is returned.
struct Parsed {
  RunArgs args;
  Study study;
  RunParams<double> rp;
};

std::optional<int> parse_command(const std::vector<std::string>& args, bool validate, std::ostream& err, Parsed& p) {
  const char* cmd = validate ? "chens validate: " : "chens run: ";
  try {
    p.args = parse_run_args(args, validate);
    p.study = load_study(p.args.study, p.args.sets);
    p.rp = resolve(p.study);
  } catch (const UsageError& e) {
    err << cmd << e.what() << "\n" << see_help(validate ? "validate" : "run");
    return exit_bad_input;
  } catch (const StudyError& e) {
    err << cmd << e.what() << "\n";
    return exit_bad_input;
  }
  return std::nullopt;
}

// The GPU or the CPU for this study, as --backend asks; exit_no_backend (with the message,
// naming the run when `run` is given) when --backend cuda cannot be honoured.
std::optional<int> choose_backend(const Study& study, const RunArgs& ra, std::ostream& err, RunInfo& info, bool& gpu,
                                  const std::string& run = "") {
  info.backend_requested = ra.backend;
  // auto: the GPU where one is usable and has kernels for the study, else the CPU, and
  // summary.json says why; cuda: the GPU or a clear refusal (exit 3).
  gpu = false;
  if (ra.backend == "cpu") return std::nullopt;
  const std::string why = gpu_unusable_reason(study);
  if (why.empty()) {
    gpu = true;
    cuda_initialize();  // before the run's clock starts (cuda_backend.hpp)
    if (ra.backend == "auto") info.backend_note = "auto: ran on the GPU, " + cuda_device_info().description;
  } else if (ra.backend == "cuda") {
    err << "chens run: " << (run.empty() ? "" : "run \"" + run + "\": ") << "--backend cuda: " << why
        << "; use --backend cpu or auto\n";
    return exit_no_backend;
  } else {
    info.backend_note = "auto: " + why + "; ran on the CPU";
  }
  return std::nullopt;
}

void print_dry_run(const Study& study, const RunParams<double>& rp, const RunArgs& ra, std::ostream& out) {
  RunInfo info;
  bool gpu = false;
  std::ostringstream ignored;
  choose_backend(study, ra, ignored, info, gpu);
  out << "# backend: " << (gpu ? "cuda" : "cpu") << (info.backend_note.empty() ? "" : " (" + info.backend_note + ")")
      << "\n# steps per instance: " << (rp.fixed_step ? std::to_string(rp.total_steps) : std::string("adaptive"))
      << ", sample times: " << rp.samples + 1 << "\n"
      << to_toml(study, rp);
}

// Why `chens run` refuses to start this study on this machine (on the GPU when `gpu`), or
// "": the one rule for `chens run` and `chens check`, so that a study check passes is not
// refused by run.
std::string run_refusal(const Study& study, bool gpu) {
  // Instances live in memory for the whole run (at most bytes_per_instance each, checked at
  // compile time in the dispatch): refuse ensembles that cannot fit instead of being killed.
  // (On the GPU the backend compares with the device's free memory before launch.)
  if (!gpu) {
    const double phys = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
    const double need = static_cast<double>(study.size) * static_cast<double>(bytes_per_instance(study));
    if (phys > 0 && need > 0.8 * phys)
      return "ensemble.size = " + std::to_string(study.size) + " needs about " + number_text(need / 1e9) +
             " GB for its states, more than 80% of this machine's " + number_text(phys / 1e9) + " GB; use a smaller ensemble";
  }
  if (mpi_world().active && !study.only.empty())
    return "ensemble.only runs a handful of instances alone: not under mpirun (run it as one process)";
  if (mpi_world().active) {
    // Every rank needs at least one block of cpu_block_size instances (docs/scaling.md).
    const std::uint64_t blocks = (static_cast<std::uint64_t>(study.size) + cpu_block_size - 1) / cpu_block_size;
    if (blocks < static_cast<std::uint64_t>(mpi_world().size))
      return "ensemble.size = " + std::to_string(study.size) + " is " + std::to_string(blocks) + " block(s) of " +
             std::to_string(cpu_block_size) + " instances, fewer than the " + std::to_string(mpi_world().size) +
             " MPI ranks; use at least " + std::to_string(cpu_block_size) + " instances per rank or fewer ranks";
  }
  return "";
}

// SIGINT and SIGTERM during `chens run` (docs/checkpoints.md): the first one is noted and
// the run stops at its next stop point (host/backends/segment_plan.hpp: about every 2 s,
// inside long sample intervals too) with a checkpoint; the handler then gives the
// signal back its default action, so a second one ends the process at once.
volatile std::sig_atomic_t interrupt_signal = 0;

extern "C" void note_interrupt(int sig) {
  interrupt_signal = sig;
  static const char msg[] =
      "\nchens: interrupted: the run stops at its next stop point, within a few seconds, and writes a checkpoint "
      "(interrupt again to stop at once, without one)\n";
  const ssize_t ignored = ::write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
}

class InterruptGuard {
 public:
  explicit InterruptGuard(bool install) : installed_(install) {
    interrupt_signal = 0;
    if (!installed_) return;
    struct sigaction sa {};
    sa.sa_handler = note_interrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = static_cast<int>(SA_RESETHAND);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptGuard() {
    if (!installed_) return;
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    interrupt_signal = 0;
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  bool installed_;
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

constexpr const char* resume_file_name = "resume.json";

// The runs of `run` and `check`: the study file's, one run from every key's default
// (--single), or the built-in default study's; --set applies to every run.
std::vector<StudyRun> runs_of_args(const RunArgs& ra) {
  if (ra.study || ra.single) return load_runs(ra.study, ra.sets);
  return load_default_runs(ra.sets);
}

// A study error of the built-in default study with --set: the user may have meant one run
// from the defaults (before issue 17, --set alone meant that), so the message says how.
std::string default_study_hint(const RunArgs& ra) {
  if (ra.study || ra.single || ra.resume || ra.sets.empty()) return "";
  return std::string("\n  (without a study file --set changes every run of the built-in default study, ") +
         "examples/default_study.toml; --single runs one study from the defaults of every key instead)";
}

// What the runs come from, for study.json, resume.json and chens check.
std::string study_source(const RunArgs& ra) {
  if (ra.study) return *ra.study;
  return ra.single ? "" : builtin_default_study_name;
}

// DIR/resume.json: what `chens run --resume DIR` needs to run the same study again: every
// run's resolved study (to_toml, which reads back to the same study), its name and
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

struct Resumed {
  std::vector<StudyRun> runs;
  bool several = false;
  std::string backend;
};

// Reads DIR/resume.json back; a StudyError says what is wrong with it.
Resumed read_resume_record(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path path = fs::path(dir) / resume_file_name;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    const bool done = fs::exists(fs::path(dir) / "summary.json", ec) || fs::exists(fs::path(dir) / "study.json", ec);
    throw StudyError("--resume " + dir + ": no " + resume_file_name + " there: " +
                     (done ? "the run or study in it is complete, nothing to resume"
                           : "not the directory of an interrupted chens run"));
  }
  nlohmann::json j;
  try {
    std::ifstream in(path);
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw StudyError(path.string() + ": cannot be read: " + e.what());
  }
  try {
    if (j.at("format").get<int>() != 1) throw StudyError(path.string() + ": unknown format " + j.at("format").dump());
    const std::string version = j.at("chens_version").get<std::string>();
    if (version != CHENS_VERSION_STRING)
      throw StudyError(path.string() + ": the run was started by chens " + version + ", this is chens " +
                       CHENS_VERSION_STRING + "; resume it with the chens that started it (another version would not "
                       "continue it bit for bit)");
    Resumed r;
    r.several = j.at("several").get<bool>();
    r.backend = j.at("backend").get<std::string>();
    for (const auto& run : j.at("runs")) {
      const std::string name = run.at("name").get<std::string>();
      std::vector<StudyRun> one =
          load_runs_text(run.at("study").get<std::string>(), path.string() + (name.empty() ? "" : " (run " + name + ")"), {});
      if (one.size() != 1) throw StudyError(path.string() + ": run \"" + name + "\" is not a single run");
      one[0].name = name;
      for (const auto& kv : run.at("overrides")) one[0].overrides.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
      r.runs.push_back(std::move(one[0]));
    }
    if (r.runs.empty() || (!r.several && r.runs.size() != 1)) throw StudyError(path.string() + ": no runs, or several for a single run");
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw StudyError(path.string() + ": not a chens resume record: " + e.what());
  }
}

long env_long(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::strtol(v, nullptr, 10) : 0;
}

// One run: integrate, write its files into dir (checked first), print one line. The
// result is left in *result. Returns the exit code. `resume_json` (single runs): written to
// dir/resume.json before the run starts and removed when its results are written. With
// ra.resume the run continues from dir/checkpoint.chk where there is one. lock_dir: take
// dir's lock (a study's runs run under the lock of the study's directory).
int execute_run(const Study& study, const RunParams<double>& rp, const RunArgs& ra, const std::string& dir,
                std::ostream& out, std::ostream& err, EnsembleResult& result, const std::string& progress_label = "",
                const std::string& resume_json = "", bool lock_dir = true) {
  namespace fs = std::filesystem;
  static_cast<void>(out);  // a run's own lines are status (stderr); stdout is the caller's tables
  // One chens per directory (docs/checkpoints.md), before anything in dir is read, written
  // or removed. Under mpirun rank 0, the only rank that writes, holds it.
  std::optional<OutputLock> lock;
  if (lock_dir && mpi_root()) {
    try {
      lock.emplace(dir);
    } catch (const std::exception& e) {
      err << "chens run: " << e.what() << "\n";
      // The other ranks cannot be told (no broadcast here): leaving without MPI_Finalize
      // makes mpirun end the job.
      if (mpi_world().active) std::exit(exit_bad_input);
      return exit_bad_input;
    }
    if (!lock->note().empty()) err << "chens run: " << lock->note() << "\n";
  }
  RunInfo info;
  bool gpu = false;
  const bool checkpoints = !mpi_world().active;
  const std::string ck_path = (fs::path(dir) / checkpoint_file_name).string();
  const std::uint64_t key = run_key(CHENS_VERSION_STRING, to_toml(study, rp));
  std::optional<CheckpointState> from;
  if (ra.resume) {
    std::error_code ec;
    if (fs::exists(ck_path, ec)) {
      try {
        from = read_checkpoint(ck_path, key);
      } catch (const std::exception& e) {
        err << "chens run: --resume: " << e.what() << "\n";
        return exit_bad_input;
      }
      // The checkpoint continues on the backend that wrote it.
      if (from->backend == "cuda") {
        const std::string why = gpu_unusable_reason(study);
        if (!why.empty()) {
          err << "chens run: --resume: " << ck_path << " was written by the GPU backend and continues only on a GPU: "
              << why << "\n";
          return exit_no_backend;
        }
      }
      err << "chens: " << progress_label << "resuming " << dir << " at t = " << rp.sample_time(from->done - 1) << " ("
          << from->done << " of " << rp.samples + 1 << " sample times done, " << from->wall_seconds << " s computed)\n";
    } else if (fs::exists(dir, ec)) {
      err << "chens: " << progress_label << "no checkpoint in " << dir << ": the run starts again from t = 0\n";
    }
  }
  if (const auto code = choose_backend(study, ra, err, info, gpu)) return *code;
  if (from && gpu != (from->backend == "cuda")) {  // e.g. auto, and a GPU appeared or went away
    gpu = from->backend == "cuda";
    info.backend_note = "resumed on the " + from->backend + " backend, which wrote the checkpoint";
  }
  try {
    // A resumed run's directory holds its own resume.json and checkpoint.
    check_output_dir(dir, ra.force || ra.resume.has_value());
  } catch (const std::exception& e) {
    err << "chens run: " << e.what() << "\n";
    return exit_bad_input;
  }
  if (const std::string why = run_refusal(study, gpu); !why.empty()) {
    err << "chens run: " << why << "\n";
    return exit_bad_input;
  }
  EnsembleSpec spec = ensemble_spec(study, ra.threads);
  if (ra.progress == 1 || (ra.progress < 0 && ::isatty(STDERR_FILENO))) {
    // On a terminal one line rewritten in place; otherwise (--progress into a log) a line
    // per segment. Rates and the time left count this process's share of a resumed run.
    const bool tty = ::isatty(STDERR_FILENO) != 0;
    const auto t0 = std::chrono::steady_clock::now();
    const double t_end = rp.t_end;
    const double instances = static_cast<double>(study.size);
    const std::int64_t done0 = from ? from->done : 0;
    spec.progress = [&err, tty, t0, t_end, instances, &rp, progress_label, done0](std::int64_t done, std::int64_t total) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double frac = static_cast<double>(done - done0) / static_cast<double>(total - done0);
      char rate[64] = "";
      if (rp.fixed_step && elapsed > 0)  // steps so far, all instances: the sample's step index
        std::snprintf(rate, sizeof rate, ", %.3g instance-steps/s",
                      instances *
                          static_cast<double>(rp.sample_step(done - 1) - (done0 > 0 ? rp.sample_step(done0 - 1) : 0)) /
                          elapsed);
      char buf[300];
      std::snprintf(buf, sizeof buf, "chens: %st = %.6g of %.6g (%lld of %lld sample times, %.0f %%)%s, %.1f s, about %.0f s left",
                    progress_label.c_str(), rp.sample_time(done - 1), t_end, static_cast<long long>(done),
                    static_cast<long long>(total), 100.0 * static_cast<double>(done) / static_cast<double>(total), rate, elapsed,
                    frac > 0 ? elapsed * (1.0 - frac) / frac : 0.0);
      err << (tty ? "\r" : "") << buf << (tty && done < total ? "" : "\n") << std::flush;
    };
  }
  // Checkpoints (docs/checkpoints.md): at the stop point (segment_plan.hpp) that comes
  // checkpoint_minutes after the last one, at every checkpoint_segments-th stop point, and
  // when interrupted (then the run stops). Not under MPI: ranks would have to agree on when, and write shards.
  std::int64_t saved_done = 0;
  std::string save_error;
  std::error_code exists_ec;
  const bool created_dir = !fs::exists(dir, exists_ec);
  if (ra.force && !ra.resume && mpi_root()) {
    // What the replaced run wrote (plots/, a checkpoint, files this run does not write) must
    // not outlive it next to the new results.
    try {
      const std::vector<std::string> left = remove_earlier_results(dir);
      if (!left.empty()) {
        std::string names;
        for (const std::string& n : left) names += (names.empty() ? "" : ", ") + n;
        err << "chens run: --force: kept in " << dir << " what chens did not write there: " << names << "\n";
      }
    } catch (const std::exception& e) {
      err << "chens run: " << e.what() << "\n";
      return exit_bad_input;
    }
  }
  if (checkpoints) {
    try {
      fs::create_directories(dir);
    } catch (const std::exception& e) {
      err << "chens run: --out " << dir << ": " << e.what() << "\n";
      return exit_bad_input;
    }
    if (!resume_json.empty() && !ra.resume) {
      try {
        write_file_atomically((fs::path(dir) / resume_file_name).string(), resume_json);
      } catch (const std::exception& e) {  // a full disk: nothing computed yet, nothing lost
        err << "chens run: " << e.what() << "\n";
        return exit_failure;
      }
    }
    spec.resume_from = from ? &*from : nullptr;
    const long test_at = env_long("CHENS_TEST_INTERRUPT_AT");  // tests: interrupt once this many samples are done
    auto last = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
    auto segments = std::make_shared<long>(0);
    spec.checkpoint = [&ra, test_at, last, segments](std::int64_t done, std::int64_t) {
      CheckpointRequest q;
      *segments += 1;
      q.stop = interrupt_signal != 0 || (test_at > 0 && done >= test_at);
      const double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - *last).count() / 60.0;
      q.save = q.stop || (ra.checkpoint_segments > 0 && *segments % ra.checkpoint_segments == 0) ||
               (ra.checkpoint_minutes > 0 && minutes >= ra.checkpoint_minutes);
      return q;
    };
    spec.save_checkpoint = [&err, &ck_path, key, last, &saved_done, &save_error](const CheckpointState& c) {
      try {
        write_checkpoint(ck_path, key, c);
        saved_done = c.done;
        save_error.clear();
      } catch (const std::exception& e) {
        // A failed checkpoint must not cost the run: it goes on, and says so.
        save_error = e.what();
        err << "chens run: could not write a checkpoint: " << e.what() << "; the run goes on\n";
      }
      *last = std::chrono::steady_clock::now();
    };
  }
  // A run that fails before its first checkpoint leaves nothing to resume.
  auto forget_resume = [&]() {
    std::error_code ec;
    if (!resume_json.empty() && !fs::exists(ck_path, ec)) fs::remove(fs::path(dir) / resume_file_name, ec);
    if (created_dir && fs::is_empty(dir, ec)) fs::remove(dir, ec);
  };
  try {
    if (mpi_world().active) {
      result = run_study_sharded(study, rp, spec, gpu);
    } else {
      result = gpu ? run_study_cuda(study, rp, spec) : run_study_cpu(study, rp, spec);
    }
  } catch (const DeviceMemoryError& e) {
    err << "chens run: " << e.what() << "\n";
    forget_resume();
    return exit_bad_input;
  } catch (const std::bad_alloc&) {
    err << "chens run: out of memory for ensemble.size = " << study.size << " instances; use a smaller ensemble\n";
    forget_resume();
    return exit_failure;
  } catch (const std::exception& e) {
    err << "chens run: the run failed: " << e.what() << "\n";
    forget_resume();
    return exit_failure;
  }
  if (result.stopped_at > 0) {
    const int sig = interrupt_signal == SIGTERM ? SIGTERM : SIGINT;
    err << "chens run: " << progress_label << "interrupted (" << (sig == SIGTERM ? "SIGTERM" : "SIGINT") << ") "
        << (result.stopped_inside_interval ? "inside sample interval " + std::to_string(result.stopped_at) + ", after "
                                           : std::string("at "))
        << "t = " << rp.sample_time(result.stopped_at - 1) << ", " << result.stopped_at << " of " << rp.samples + 1
        << " sample times done\n";
    if (saved_done == result.stopped_at) {
      err << "chens run: checkpoint written to " << ck_path << "; continue with: chens run --resume " << ra.out << "\n";
    } else {
      err << "chens run: the checkpoint could not be written (" << save_error << "); "
          << (fs::exists(ck_path) ? "an earlier checkpoint in " + ck_path + " can be resumed with: chens run --resume " + ra.out
                                  : std::string("the run must be started again"))
          << "\n";
    }
    return sig == SIGTERM ? exit_interrupted_term : exit_interrupted_int;
  }
  if (!mpi_root()) return exit_ok;  // rank 0 writes the results of every rank
  // Once the results are written, the checkpoint (and a single run's resume record) are
  // done with.
  auto retire_checkpoint = [&]() {
    std::error_code ec;
    fs::remove(ck_path, ec);
    if (!resume_json.empty()) fs::remove(fs::path(dir) / resume_file_name, ec);
  };
  try {
    write_outputs(dir, study, rp, result, info);
  } catch (const std::exception& e) {
    // Never lose a computed result: put it somewhere writable and say where.
    err << "chens run: could not write the results to " << dir << ": " << e.what() << "\n";
    // A new directory of its own each time: a study (or an in-process caller) may rescue
    // more than once, and must not replace what it rescued before.
    std::error_code ec;
    const fs::path tmp = fs::temp_directory_path(ec);
    fs::path rescue;
    for (int k = 0; !ec && rescue.empty() && k < 1000; ++k) {
      const fs::path p = tmp / ("chens-rescue-" + std::to_string(::getpid()) + (k ? "-" + std::to_string(k) : ""));
      if (fs::create_directory(p, ec)) rescue = p;
    }
    try {
      if (rescue.empty())
        throw std::runtime_error("no directory can be made in " + tmp.string() + (ec ? ": " + ec.message() : ""));
      write_outputs(rescue.string(), study, rp, result, info);
      err << "chens run: the results were saved to " << rescue.string() << "/ instead\n";
      retire_checkpoint();
    } catch (const std::exception& e2) {
      if (!rescue.empty()) fs::remove(rescue, ec);  // write_outputs left it empty
      err << "chens run: saving them to the temporary directory (TMPDIR) failed too: " << e2.what()
          << "\nchens run: the results of this run are lost; make room";
      if (checkpoints)
        err << ", then chens run --resume " << ra.out
            << (fs::exists(ck_path, ec) ? " continues from its last checkpoint" : " runs it again from t = 0");
      err << "\n";
    }
    if (created_dir && fs::is_empty(dir, ec)) fs::remove(dir, ec);  // a study's run directory
    return exit_failure;
  }
  retire_checkpoint();
  err << "chens: " << result.instances << " instances of " << formulation_name(study.formulation) << " + "
      << method_name(study.method) << " to t = " << rp.t_end << " on " << result.device << " in " << result.wall_seconds
      << " s; lost " << result.lost_total() << "; results in " << dir << "/\n";
  if (!result.lost_examples.empty()) {  // summary.json's lost_examples, ready to rerun alone
    std::string list;
    for (std::size_t q = 0; q < result.lost_examples.size(); ++q)
      list += (q ? ", " : "") + std::to_string(result.lost_examples[q]);
    err << "chens: the first lost instances (summary.json lost_examples) can be rerun alone with --set "
        << "'ensemble.only=[" << list << "]' (and output.record to follow them)\n";
  }
  return exit_ok;
}

// Every run resolved before the first one starts; a StudyError names the run.
std::vector<RunParams<double>> resolve_runs(const std::vector<StudyRun>& runs) {
  std::vector<RunParams<double>> rps;
  for (const StudyRun& r : runs) {
    try {
      rps.push_back(resolve(r.study));
    } catch (const StudyError& e) {
      throw StudyError(r.name.empty() ? std::string(e.what()) : "run \"" + r.name + "\": " + e.what());
    }
  }
  return rps;
}

// A study file with several runs: each into DIR/<run>/, with DIR/study.json (the index,
// rewritten after every run: complete, failed or pending) and DIR/comparison.csv plus a
// table on stdout at the end. Every run is resolved before the first one starts.
int run_several(const std::vector<StudyRun>& runs, const RunArgs& ra, std::ostream& out, std::ostream& err) {
  namespace fs = std::filesystem;
  std::vector<RunParams<double>> rps;
  try {
    rps = resolve_runs(runs);
  } catch (const StudyError& e) {
    err << "chens run: " << e.what() << default_study_hint(ra) << "\n";
    return exit_bad_input;
  }
  if (ra.dry_run) {
    out << "# chens " << CHENS_VERSION_STRING << ": " << runs.size() << " runs (dry run, nothing written)\n";
    for (std::size_t i = 0; i < runs.size(); ++i) {
      out << "\n# ---- run \"" << runs[i].name << "\" -> " << (fs::path(ra.out) / runs[i].name).string() << "/\n";
      print_dry_run(runs[i].study, rps[i], ra, out);
    }
    return exit_ok;
  }
  // --backend cuda without a usable GPU (or kernels for a run): refused before anything is
  // written, as for a single run.
  for (const StudyRun& r : runs) {
    RunInfo info;
    bool gpu = false;
    if (const auto code = choose_backend(r.study, ra, err, info, gpu, r.name)) return *code;
  }
  const fs::path dir(ra.out);
  std::error_code ec;
  nlohmann::json index;
  // Rank 0 keeps the index; every rank runs every run (its shard).
  const bool root = mpi_root();
  // One chens per directory: the study's for the whole study (its runs take none of their
  // own), before anything in it is read, written or removed.
  std::optional<OutputLock> lock;
  if (root) {
    try {
      lock.emplace(ra.out);
    } catch (const std::exception& e) {
      err << "chens run: " << e.what() << "\n";
      if (mpi_world().active) std::exit(exit_bad_input);  // as in execute_run
      return exit_bad_input;
    }
    if (!lock->note().empty()) err << "chens run: " << lock->note() << "\n";
  }
  if (ra.resume) {
    // The interrupted study's index: complete runs stay as they are, the others run again
    // from their checkpoints.
    try {
      std::ifstream in(dir / "study.json");
      index = nlohmann::json::parse(in);
      bool same = index.at("runs").size() == runs.size();
      for (std::size_t i = 0; same && i < runs.size(); ++i) same = index["runs"][i].at("name") == runs[i].name;
      if (!same) throw std::runtime_error("its runs are not those of resume.json");
    } catch (const std::exception& e) {
      err << "chens run: --resume " << ra.out << ": study.json cannot be used: " << e.what() << "\n";
      return exit_bad_input;
    }
  } else {
    if (!ra.force && fs::exists(dir / "study.json", ec)) {
      err << "chens run: --out " << ra.out << ": holds study.json of an earlier study"
          << (fs::exists(dir / resume_file_name, ec) ? " that was interrupted; continue it with chens run --resume " + ra.out + ", "
                                                     : "; ")
          << "choose another directory or pass --force to replace it\n";
      return exit_bad_input;
    }
    try {
      // --force: the earlier study's run directories, index and figures go (or a single
      // run's files), so that no stale result stands next to the new ones.
      if (ra.force && root) {
        const std::vector<std::string> left = remove_earlier_results(ra.out);
        if (!left.empty()) {
          std::string names;
          for (const std::string& n : left) names += (names.empty() ? "" : ", ") + n;
          err << "chens run: --force: kept in " << ra.out << " what chens did not write there: " << names << "\n";
        }
      }
      check_output_dir(ra.out, ra.force);  // a single run's results are not mixed with a study's
      for (const StudyRun& r : runs) check_output_dir((dir / r.name).string(), ra.force);
      fs::create_directories(dir);
    } catch (const std::exception& e) {
      err << "chens run: " << e.what() << "\n";
      return exit_bad_input;
    }
    try {
      if (!mpi_world().active) write_file_atomically((dir / resume_file_name).string(), resume_record(runs, rps, ra, true));
    } catch (const std::exception& e) {  // a full disk: nothing computed yet, nothing lost
      err << "chens run: " << e.what() << "\n";
      return exit_failure;
    }
    mpi_barrier();  // every rank has checked DIR before rank 0 writes study.json
    index["chens_version"] = CHENS_VERSION_STRING;
    index["study_file"] = study_source(ra);
    index["set"] = ra.sets;  // the --set overrides, applied to every run after its own
    index["complete"] = false;
    index["runs"] = nlohmann::json::array();
    for (const StudyRun& r : runs) {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& [k, v] : r.overrides) o[k] = v;
      index["runs"].push_back({{"name", r.name}, {"directory", r.name}, {"overrides", o}, {"status", "pending"}});
    }
  }
  auto save_index = [&]() {
    if (root) write_file_atomically((dir / "study.json").string(), index.dump(2) + "\n");
  };
  std::vector<nlohmann::json> digests;
  try {
    save_index();
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (ra.resume && index["runs"][i].value("status", "") == "complete" && index["runs"][i].contains("results")) {
        err << "chens: run " << i + 1 << " of " << runs.size() << ": " << runs[i].name << " (complete)\n";
        digests.push_back(index["runs"][i]["results"]);
        continue;
      }
      err << "chens: run " << i + 1 << " of " << runs.size() << ": " << runs[i].name << "\n";
      // "running" stays in study.json if the process dies: the run is marked incomplete.
      index["runs"][i]["status"] = "running";
      save_index();
      EnsembleResult result;
      const std::string label = "run " + std::to_string(i + 1) + " of " + std::to_string(runs.size()) + " (" +
                                runs[i].name + "): ";
      const int code =
          execute_run(runs[i].study, rps[i], ra, (dir / runs[i].name).string(), out, err, result, label, "", false);
      if (code == exit_interrupted_int || code == exit_interrupted_term) {
        index["runs"][i]["status"] = "interrupted";
        save_index();
        return code;
      }
      if (code != exit_ok) {
        index["runs"][i]["status"] = "failed";
        index["runs"][i]["exit_code"] = code;
        save_index();
        err << "chens run: run \"" << runs[i].name << "\" failed; the runs before it are complete in " << ra.out
            << "/ (study.json says which)\n";
        return code;
      }
      digests.push_back(run_digest(runs[i].name, runs[i].study, rps[i], result, runs[i].overrides));
      index["runs"][i]["status"] = "complete";
      index["runs"][i]["results"] = digests.back();
      save_index();
    }
    const std::string table = comparison_table(digests);
    // The study's tables stand only next to a study.json marked complete: on a failure none
    // stays (--resume writes them all).
    try {
      if (root) {
        write_file_atomically((dir / "comparison.csv").string(), comparison_csv(digests));
        write_file_atomically((dir / "series_long.csv").string(), series_long_csv(dir.string(), index));
      }
      index["complete"] = true;
      save_index();
    } catch (...) {
      for (const char* f : {"comparison.csv", "series_long.csv"}) fs::remove(dir / f, ec);
      throw;
    }
    fs::remove(dir / resume_file_name, ec);
    // The tables are the result (stdout); where the files are is status (stderr).
    out << table << std::flush;
    err << "chens: results in " << ra.out << "/ (study.json, comparison.csv, series_long.csv, one directory per run)\n";
  } catch (const std::exception& e) {
    err << "chens run: could not write the study index in " << ra.out << ": " << e.what() << "\n";
    if (!fs::exists(dir / "study.json", ec)) {
      fs::remove(dir / resume_file_name, ec);  // no run has started: nothing to resume
    } else if (!mpi_world().active) {
      err << "chens run: the runs that study.json marks complete are in " << ra.out
          << "/; make room, then chens run --resume " << ra.out << " finishes the study\n";
    }
    return exit_failure;
  }
  return exit_ok;
}

// chens check: every run resolved, printed with its memory and a run-time estimate from a
// calibration run (a few million instance-steps on the run's own sampling grid, or 4096
// instances over 1/50 of t_end for dopri5) on the backend `chens run` would choose.
int check_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  RunArgs ra;
  std::vector<StudyRun> runs;
  std::vector<RunParams<double>> rps;
  try {
    ra = parse_run_args(args, false);
    runs = runs_of_args(ra);
    rps = resolve_runs(runs);
  } catch (const UsageError& e) {
    err << "chens check: " << e.what() << "\n" << see_help("check");
    return exit_bad_input;
  } catch (const StudyError& e) {
    err << "chens check: " << e.what() << default_study_hint(ra) << "\n";
    return exit_bad_input;
  }
  // What chens run would refuse before running, refused here with its exit code and message.
  for (const StudyRun& r : runs) {
    RunInfo info;
    bool gpu = false;
    std::ostringstream why;
    if (const auto code = choose_backend(r.study, ra, why, info, gpu, r.name)) {
      std::string m = why.str();
      if (m.rfind("chens run: ", 0) == 0) m = "chens check: " + m.substr(11);
      err << m;
      return *code;
    }
    if (const std::string refusal = run_refusal(r.study, gpu); !refusal.empty()) {
      err << "chens check: " << (r.name.empty() ? "" : "run \"" + r.name + "\": ") << refusal << "\n";
      return exit_bad_input;
    }
  }
  const std::string what = (ra.single ? std::string("the defaults of every key (--single)") : study_source(ra)) +
                           (ra.sets.empty() ? "" : " with --set");
  out << "# chens check: " << what << ": valid, " << runs.size() << " run" << (runs.size() == 1 ? "" : "s") << "\n";
  double total_seconds = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Study& s = runs[i].study;
    const RunParams<double>& rp = rps[i];
    if (!runs[i].name.empty()) out << "\n# ---- run \"" << runs[i].name << "\"\n";
    print_dry_run(s, rp, ra, out);
    const double per = static_cast<double>(bytes_per_instance(s));
    out << "# memory: about " << std::setprecision(3) << per * static_cast<double>(s.size) / 1e9 << " GB for "
        << s.size << " instances (" << per << " bytes each)\n";
    // Calibration: the same study, smaller and shorter, nothing recorded.
    // Fixed step: at least 50 steps and two sample intervals of the run's own grid (sampling
    // costs as much as stepping when every step is sampled), at most ~4e6 instance-steps.
    Study c = s;
    if (rp.fixed_step) {
      const index_t steps = std::min<index_t>(rp.total_steps, std::max<index_t>(50, 2 * rp.steps_per_sample));
      c.t_end = static_cast<double>(steps) * rp.h;
      c.sample_dt = static_cast<double>(std::min(rp.steps_per_sample, std::max<index_t>(1, steps))) * rp.h;
      c.size = std::min<std::int64_t>(s.size, std::max<std::int64_t>(64, 4000000 / std::max<index_t>(1, steps)));
    } else {
      c.t_end = s.t_end / 50;
      c.sample_dt.reset();
      c.size = std::min<std::int64_t>(s.size, 4096);
    }
    c.trajectory = c.states = false;
    c.record.clear();
    c.phase_error.clear();
    c.periodogram.clear();
    RunInfo info;
    bool gpu = false;
    std::ostringstream ignored;
    if (choose_backend(s, ra, ignored, info, gpu) || c.t_end <= 0) {
      out << "# run time: not estimated (" << (c.t_end <= 0 ? "t_end = 0" : "backend not available") << ")\n";
      continue;
    }
    try {
      const RunParams<double> crp = resolve(c);
      EnsembleSpec spec = ensemble_spec(c, ra.threads);
      const EnsembleResult r = gpu ? run_study_cuda(c, crp, spec) : run_study_cpu(c, crp, spec);
      const double rate = static_cast<double>(r.totals.steps) / std::max(r.wall_seconds, 1e-9);
      const double steps_per_instance = rp.fixed_step ? static_cast<double>(rp.total_steps)
                                                      : static_cast<double>(r.totals.steps) / static_cast<double>(c.size) * 50;
      const double seconds = steps_per_instance * static_cast<double>(s.size) / rate;
      total_seconds += seconds;
      out << "# work: " << steps_per_instance * static_cast<double>(s.size) << " instance-steps"
          << (rp.fixed_step ? "" : " (dopri5: extrapolated from the calibration)") << "\n# run time: about " << seconds
          << " s (calibration: " << c.size << " instances to t = " << c.t_end << " in " << r.wall_seconds << " s on "
          << r.device << ", " << rate << " instance-steps/s)\n";
    } catch (const std::exception& e) {
      out << "# run time: not estimated (the calibration run failed: " << e.what() << ")\n";
    }
  }
  if (runs.size() > 1) out << "\n# all runs: about " << total_seconds << " s\n";
  return exit_ok;
}

int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  RunArgs ra;
  std::vector<StudyRun> runs;
  bool several = false;
  try {
    ra = parse_run_args(args, false);
    if (ra.resume) {
      if (mpi_world().active) throw StudyError("--resume: not available under mpirun (docs/checkpoints.md)");
      Resumed r = read_resume_record(*ra.resume);
      runs = std::move(r.runs);
      several = r.several;
      ra.backend = r.backend;
    } else {
      runs = runs_of_args(ra);
      several = runs.size() != 1 || !runs[0].name.empty();
    }
  } catch (const UsageError& e) {
    err << "chens run: " << e.what() << "\n" << see_help("run");
    return exit_bad_input;
  } catch (const StudyError& e) {
    err << "chens run: " << e.what() << default_study_hint(ra) << "\n";
    return exit_bad_input;
  }
  // SIGINT and SIGTERM stop the run with a checkpoint (not under MPI, not for a dry run).
  const InterruptGuard guard(!ra.dry_run && !mpi_world().active);
  if (several) return run_several(runs, ra, out, err);
  const Study& study = runs[0].study;
  RunParams<double> rp;
  try {
    rp = resolve(study);
  } catch (const StudyError& e) {
    err << "chens run: " << e.what() << "\n";
    return exit_bad_input;
  }
  if (ra.dry_run) {
    out << "# chens " << CHENS_VERSION_STRING << ": resolved study (dry run, nothing written)\n";
    print_dry_run(study, rp, ra, out);
    return exit_ok;
  }
  EnsembleResult result;
  std::string record;
  if (!mpi_world().active) {
    if (ra.resume) {
      std::ifstream in(std::filesystem::path(ra.out) / resume_file_name);
      record.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    } else {
      record = resume_record(runs, {rp}, ra, false);
    }
  }
  const int code = execute_run(study, rp, ra, ra.out, out, err, result, "", record);
  // A single run's result on stdout as a study prints its runs': the same tables, one row
  // named after its directory.
  if (code == exit_ok && mpi_root()) {
    const std::filesystem::path dir = std::filesystem::path(ra.out).lexically_normal();
    std::string name = (dir.has_filename() ? dir.filename() : dir.parent_path().filename()).string();
    if (name.empty() || name == "." || name == "..") name = "run";
    out << comparison_table({run_digest(name, study, rp, result)}) << std::flush;
  }
  return code;
}

// |a - b| relative to the larger of |a|, |b| and `scale`; differences up to atol count as 0
// (rounding noise of quantities that are themselves at rounding level, e.g. psi of the
// Dirac flow). Metrics are small differences of state-sized numbers (z - z_ref, H - H0),
// so their rounding differences scale with the state, not with themselves: statistics are
// judged relative to the size of the state (scale = max |z|).
double relative_difference(double a, double b, double atol, double scale = 0.0) {
  const double d = std::fabs(a - b);
  if (d <= atol) return 0.0;
  if (!std::isfinite(d)) return std::isnan(a) && std::isnan(b) ? 0.0 : INFINITY;
  return d / std::max({std::fabs(a), std::fabs(b), scale});
}

int validate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Parsed p;
  if (const auto code = parse_command(args, true, err, p)) return *code;
  const RunArgs& ra = p.args;
  const Study& study = p.study;
  const RunParams<double>& rp = p.rp;
  if (mpi_world().active) {
    err << "chens validate: runs in one process; start it without mpirun\n";
    return exit_bad_input;
  }
  const std::string why = gpu_unusable_reason(study);
  if (!why.empty()) {
    err << "chens validate: cannot compare with the GPU: " << why << "\n";
    return exit_no_backend;
  }
  EnsembleSpec spec = ensemble_spec(study, ra.threads);
  spec.record.clear();  // validate compares statistics and states, writes nothing
  // Instance by instance: the first (at most 65536) instances' final states.
  const std::uint64_t n_states = std::min<std::uint64_t>(spec.size, 65536);
  spec.keep_instances = n_states;
  EnsembleResult cpu, gpu;
  try {
    cpu = run_study_cpu(study, rp, spec);
    gpu = run_study_cuda(study, rp, spec);
  } catch (const DeviceMemoryError& e) {
    err << "chens validate: " << e.what() << "\n";
    return exit_bad_input;
  } catch (const std::exception& e) {
    err << "chens validate: the run failed: " << e.what() << "\n";
    return exit_failure;
  }
  // Tolerance (docs/study-format.md, "chens validate"): nvcc contracts a*b + c into fused
  // multiply-adds and g++ on x86-64 does not, so the backends differ by rounding from the
  // first step on, and on the (non-chaotic) orbits of the papers' studies the difference
  // grows about linearly with the number of steps: measured on an H200, 4.6e-8 relative
  // after 40920 RK4 steps (1.1e-12 per step). The defaults allow 10x that growth, with a
  // floor; differences below atol (rounding noise of O(1) quantities over as many steps)
  // count as 0. Chaotic studies need an explicit --rtol.
  const double steps = std::max(1.0, static_cast<double>(cpu.totals.steps) / static_cast<double>(spec.size));
  // Float runs: float rounding (1.2e-7) a few times per step, growing linearly; not yet
  // measured on a device (docs/study-format.md).
  const bool single = study.precision == "float";
  const double rtol = ra.rtol >= 0 ? ra.rtol : single ? std::max(1e-4, 1e-6 * steps) : std::max(1e-8, 1e-11 * steps);
  const double atol = ra.atol >= 0 ? ra.atol : single ? std::max(1e-6, 1e-8 * steps) : std::max(1e-12, 1e-15 * steps);
  const PerInstanceResult& cpu_i = cpu.kept;
  const PerInstanceResult& gpu_i = gpu.kept;
  bool ok = true;
  char line[320];
  auto row = [&](const std::string& what, double worst, const std::string& where, double tol) {
    const bool pass = worst <= tol;
    ok = ok && pass;
    std::snprintf(line, sizeof line, "%-26s %12.3g  %-8s %s\n", what.c_str(), worst, pass ? "ok" : "MISMATCH",
                  where.c_str());
    out << line;
  };
  auto pair_text = [](double a, double b) {
    char buf[96];
    std::snprintf(buf, sizeof buf, ": CPU %.17g, GPU %.17g", a, b);
    return std::string(buf);
  };
  out << "chens validate: " << spec.size << " instances of " << formulation_name(study.formulation) << " + "
      << method_name(study.method) << " to t = " << rp.t_end << " (" << steps << " steps per instance)\n  GPU: "
      << gpu.device << " (" << gpu.wall_seconds << " s)\n  CPU: " << cpu.device << " (" << cpu.wall_seconds
      << " s)\n  tolerance: relative " << rtol << " (statistics: relative to the larger value or the state's size), "
      << "differences <= " << atol << " count as 0; quantiles: two histogram bins (18.9 %)\n\n";
  std::snprintf(line, sizeof line, "%-26s %12s  %-8s %s\n", "quantity", "largest rel.", "verdict", "where");
  out << line;
  double state_size = 0;  // max |z| over the compared instances' final states
  {  // final states, norm-wise per instance: max_c |a_c - b_c| / max_c max(|a_c|, |b_c|)
    const std::size_t S = cpu_i.final_state.size() / std::max<std::uint64_t>(1, n_states);
    double worst = 0;
    std::string where = "-";
    for (std::uint64_t i = 0; i < n_states; ++i) {
      for (std::size_t c = 0; c < S; ++c)
        if (std::isfinite(cpu_i.final_state[i * S + c])) state_size = std::max(state_size, std::fabs(cpu_i.final_state[i * S + c]));
      double diff = 0, size = 0;
      for (std::size_t c = 0; c < S; ++c) {
        const double a = cpu_i.final_state[i * S + c], b = gpu_i.final_state[i * S + c];
        diff = std::max(diff, std::fabs(a - b));
        size = std::max({size, std::fabs(a), std::fabs(b)});
      }
      const double d = diff <= atol ? 0.0 : (std::isfinite(diff) ? diff / size : INFINITY);
      if (d > worst) {
        worst = d;
        char buf[96];
        std::snprintf(buf, sizeof buf, ": max |CPU - GPU| %.3g of max |z| %.3g", diff, size);
        where = "instance " + std::to_string(i) + buf;
      }
    }
    row("final states (" + std::to_string(n_states) + ")", worst, where, rtol);
  }
  for (int m = 0; m < metric_count; ++m) {
    if (!cpu.metric_reported(m)) continue;
    double worst = 0;
    std::string where = "-";
    for (std::size_t k = 0; k < cpu.series.size(); ++k) {
      const Accumulator &a = cpu.series[k].metric[m], &b = gpu.series[k].metric[m];
      if (a.count != b.count) {
        worst = INFINITY;
        where = "live counts differ at t = " + number_text(cpu.series[k].t, "%.6g");
        break;
      }
      const double stats[4][2] = {{a.mean, b.mean}, {a.rms(), b.rms()}, {a.min, b.min}, {a.max, b.max}};
      const char* names[4] = {"mean", "rms", "min", "max"};
      for (int q = 0; q < 4; ++q) {
        const double d = relative_difference(stats[q][0], stats[q][1], atol, state_size);
        if (d > worst) {
          worst = d;
          where = std::string(names[q]) + " at t = " + number_text(cpu.series[k].t, "%.6g") + pair_text(stats[q][0], stats[q][1]);
        }
      }
    }
    row(metric_name(m), worst, where, rtol);
  }
  // Quantiles come from histogram bins of ratio 2^(1/8) (quantiles.hpp), each estimate
  // inside its exact value's bin: a value that an FMA moves across a bin edge can move a
  // quantile into the neighbouring bin, so they are judged against two bins, not rtol.
  const double bin_tol = LogBins::step(2) - 1.0 + 1e-12;
  for (int m = 0; m < metric_count; ++m) {
    if (!cpu.metric_reported(m)) continue;
    double worst = 0;
    std::string where = "-";
    for (std::size_t k = 0; k < cpu.series.size(); ++k)
      for (int q = 0; q < quantile_count; ++q) {
        const double a = cpu.series[k].quantile[m][q], b = gpu.series[k].quantile[m][q];
        const double d = std::fabs(a - b) <= atol ? 0.0 : std::fabs(a - b) / std::min(std::fabs(a), std::fabs(b));
        if (d > worst || d != d) {
          worst = d != d ? INFINITY : d;
          where = std::string(quantile_name[q]) + " at t = " + number_text(cpu.series[k].t, "%.6g") + pair_text(a, b);
        }
      }
    row(std::string(metric_name(m)) + " quantiles", worst, where, bin_tol);
  }
  const bool same_lost = cpu.lost_total() == gpu.lost_total();
  ok = ok && same_lost;
  out << "lost instances: CPU " << cpu.lost_total() << ", GPU " << gpu.lost_total() << (same_lost ? "" : "  MISMATCH")
      << "\nsteps: CPU " << cpu.totals.steps << ", GPU " << gpu.totals.steps << "; projections (momentum, position): CPU "
      << cpu.totals.momentum_projections << ", " << cpu.totals.position_projections << ", GPU "
      << gpu.totals.momentum_projections << ", " << gpu.totals.position_projections << "\n"
      << (ok ? "chens validate: CPU and GPU agree within the tolerance\n"
             : "chens validate: CPU and GPU differ beyond the tolerance\n");
  return ok ? exit_ok : exit_mismatch;
}

}  // namespace

// chens plot DIR [options]: the figures of a run or a study (scripts/plot_study.py, run by
// Debian's /usr/bin/python3 with matplotlib); its exit code is passed on.
int plot_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  namespace fs = std::filesystem;
  if (args.size() >= 2 && (args[1] == "--help" || args[1] == "-h")) {
    out << plot_help;
    return exit_ok;
  }
  if (args.size() < 2) {
    err << "chens plot: needs the directory of a run or a study\n" << see_help("plot");
    return exit_bad_input;
  }
  const char* python = "/usr/bin/python3";
  const fs::path script = CHENS_PLOT_SCRIPT;
  std::error_code ec;
  if (!fs::exists(python, ec) || !fs::exists(script, ec)) {
    err << "chens plot: needs " << python << " and " << script.string()
        << " (scripts/bootstrap.sh installs python3-matplotlib)\n";
    return exit_no_backend;
  }
  auto quoted = [](const std::string& a) {  // for the shell: '...' with ' written as '\''
    std::string q(1, '\'');
    for (char c : a) {
      if (c == '\'') {
        q.append("'\\''");
      } else {
        q.push_back(c);
      }
    }
    q.push_back('\'');
    return q;
  };
  std::string cmd = quoted(python);
  cmd.append(" ").append(quoted(script.string()));
  for (std::size_t i = 1; i < args.size(); ++i) cmd.append(" ").append(quoted(args[i]));
  out << std::flush;
  const int status = std::system(cmd.c_str());
  if (status == -1 || !WIFEXITED(status)) {
    err << "chens plot: could not run " << script.string() << "\n";
    return exit_failure;
  }
  return WEXITSTATUS(status);
}

int cli_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() < 2) {
    err << start_text;
    return exit_bad_input;
  }
  if (args[1] == "--help" || args[1] == "-h" || (args[1] == "help" && args.size() == 2)) {
    out << overview_text;
    return exit_ok;
  }
  if (args[1] == "--version") {
    out << "chens " << CHENS_VERSION_STRING << "\n";
    return exit_ok;
  }
  const auto help_of = [](const std::string& command) -> const char* {
    if (command == "run") return run_help;
    if (command == "check") return check_help;
    if (command == "validate") return validate_help;
    if (command == "plot") return plot_help;
    if (command == "keys") return keys_help;
    return nullptr;
  };
  if (args[1] == "help") {  // chens help COMMAND
    if (const char* text = help_of(args[2])) {
      out << text;
      return exit_ok;
    }
    err << "chens help: unknown command '" << args[2] << "'\n" << see_help("");
    return exit_bad_input;
  }
  if (args[1] == "keys") {
    if (args.size() == 3 && (args[2] == "--help" || args[2] == "-h")) {
      out << keys_help;
      return exit_ok;
    }
    if (args.size() != 3 || args[2] != "--markdown") {
      err << "chens keys: " << (args.size() == 2 ? "--markdown" : "only --markdown") << " is needed (the one format)\n"
          << see_help("keys");
      return exit_bad_input;
    }
    out << key_tables_markdown();
    return exit_ok;
  }
  if (args[1] == "plot") return plot_command(std::vector<std::string>(args.begin() + 1, args.end()), out, err);
  if (args[1] == "run" || args[1] == "validate" || args[1] == "check") {
    // --help anywhere among the options asks for this command's help, not a run.
    for (std::size_t i = 2; i < args.size(); ++i)
      if (args[i] == "--help" || args[i] == "-h") {
        out << help_of(args[1]);
        return exit_ok;
      }
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[1] == "check") return check_command(rest, out, err);
    return args[1] == "run" ? run_command(rest, out, err) : validate_command(rest, out, err);
  }
  err << "chens: unknown command '" << args[1] << "'\n" << see_help("");
  return exit_bad_input;
}

}  // namespace chens
