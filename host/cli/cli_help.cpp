// The help texts of the chens command line, printed verbatim: chens --help, bare chens and
// chens COMMAND --help (tests compare them; docs/study-format.md describes the options).
#include "cli/cli_internal.hpp"

namespace chens::cli {

// `chens --help`: every command's usage line and what it does; `chens COMMAND --help`: that
// command's own text below.
// (one printed line a source line: the layout is the text's)
// clang-format off
const char* const overview_text =
    "usage: chens run [STUDY.toml | --single] [--set SECTION.KEY=VALUE]... [--out DIR] [OPTIONS]\n"
    "       chens run --resume DIR [OPTIONS]\n"
    "       chens check [STUDY.toml | --single] [--set SECTION.KEY=VALUE]... [OPTIONS]\n"
    "       chens validate [STUDY.toml] [--set SECTION.KEY=VALUE]... [--threads N] [--rtol R] [--atol A]\n"
    "       chens plot DIR [--out PLOTDIR] [OPTIONS]\n"
    "       chens keys --markdown\n"
    "       chens models [--source HEADER]\n"
    "       chens --version | --help | COMMAND --help\n"
    "\n"
    "  run       integrate the ensemble a study describes and write its results into DIR\n"
    "            (without a study file: the built-in default study, 6 runs, with any --set;\n"
    "            --single: one run from every key's default)\n"
    "  check     validate a study without running it; print its memory and a run-time estimate\n"
    "  validate  run one study on the CPU and on the GPU and compare the results\n"
    "  plot      draw the figures of a run or study directory into DIR/plots/\n"
    "  keys      print every study key (default, allowed values, meaning) as markdown tables\n"
    "  models    list the models this chens runs: keys, formulations, state, reference\n"
    "\n"
    "  'chens COMMAND --help' lists the command's options. Study keys: docs/study-format.md.\n"
    "  Exit codes: 0 ok, 1 the run failed, 2 bad input, 3 backend not available,\n"
    "  4 validate: CPU and GPU differ, 130/143 interrupted with a checkpoint.\n";

// Bare `chens`: what to do first.
const char* const start_text =
    "chens: no command given. To start:\n"
    "  chens run                 run the built-in default study (6 runs, about a second)\n"
    "  chens run STUDY.toml      run a study file (examples/*.toml)\n"
    "  chens --help              the commands; chens COMMAND --help: a command's options\n";

namespace {

const char* const run_help =
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
    "                           the result is bitwise that of an uninterrupted run, on any number\n"
    "                           of MPI ranks. SIGINT, SIGTERM and SIGUSR1 (which mpirun forwards\n"
    "                           to every rank) stop a run at its next stop point with a checkpoint\n"
    "                           (exit 130 / 143 / 138); docs/checkpoints.md\n";

const char* const check_help =
    "usage: chens check [STUDY.toml | --single] [--set SECTION.KEY=VALUE]... [--backend auto|cpu|cuda]\n"
    "                   [--threads N] [--compile]\n"
    "\n"
    "  Validates a study without running it and refuses what chens run would refuse before\n"
    "  running (exit 2 and the message; exit 3 for --backend cuda without a usable GPU), then\n"
    "  prints every run's resolved study, its memory and an estimate of its run time from a\n"
    "  short calibration run on the backend it would use. Nothing is written but, with\n"
    "  --compile, the cache of systems compiled on first use. Without a study file it checks\n"
    "  the built-in default study (6 runs), as chens run would run it.\n"
    "\n"
    "  --set SECTION.KEY=VALUE  override one key in every run, as for chens run\n"
    "  --single                 one run from every key's default, as for chens run\n"
    "  --backend B              the backend to estimate for: auto (default), cpu or cuda\n"
    "  --threads N              CPU threads of the calibration run (default: all), and compiles\n"
    "                           at once with --compile\n"
    "  --compile                first compile every system the runs compile on first use and the\n"
    "                           cache lacks (several at once; docs/jit.md), then estimate them\n";

const char* const validate_help =
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

const char* const plot_help =
    "usage: chens plot DIR [--out PLOTDIR] [--format png,svg] [--metrics M1,M2]\n"
    "                      [--runs R1,R2] [--color-by KEY] [--style-by KEY|none]\n"
    "                      [--min-live FRACTION]\n"
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
    "  --style-by KEY|none      studies: the swept key shown by line style\n"
    "  --min-live FRACTION      where fewer than this fraction of a run's instances are live,\n"
    "                           its statistics are the survivors': drawn dotted, without band\n"
    "                           and maximum, marked, and left out of convergence fits (0.5)\n";

const char* const keys_help =
    "usage: chens keys --markdown\n"
    "\n"
    "  Prints every study key, section by section, with its default, the values it allows and\n"
    "  what it means, as the markdown tables of docs/study-format.md (each after the comment\n"
    "  line that marks it there), generated from the keys' declarations.\n";

const char* const models_help =
    "usage: chens models [--source HEADER]\n"
    "\n"
    "  Lists every model this chens runs (model.kind): the built-in models, the user models\n"
    "  built into the executable (chens_add_model) and, with --source, those HEADER defines\n"
    "  (model.source: compiled on first use, docs/custom-models.md). For each: the keys it\n"
    "  takes beyond every study's, its formulations, its state's components (at the keys'\n"
    "  defaults), its reference solution's default, and the options only some models have.\n";

// clang-format on
}  // namespace

const char* help_text(const std::string& command) {
  if (command == "run") return run_help;
  if (command == "check") return check_help;
  if (command == "validate") return validate_help;
  if (command == "plot") return plot_help;
  if (command == "keys") return keys_help;
  if (command == "models") return models_help;
  return nullptr;
}

std::string see_help(const std::string& command) {
  return "see 'chens " + (command.empty() ? std::string() : command + " ") + "--help'\n";
}

}  // namespace chens::cli
