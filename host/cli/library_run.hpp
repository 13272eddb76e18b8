// `chens run` for a library caller (the Python module, python/chens_module.cpp): the same
// study sources, --set overrides, checks, backend choice, interrupt handling and, where an
// output directory is given, the same files as the command line (run_runs, the CLI's own
// code), with every run's result files also returned as bytes (output_file_bytes), so that
// what a caller holds in memory is, byte for byte, what `chens run` writes.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace chens {

struct LibraryRunRequest {
  enum class Source { default_study, single, file, text, resume };
  // The built-in default study, every key's default (--single), a file, a TOML text, or the
  // interrupted run or study in the directory `study` (--resume).
  Source source = Source::default_study;
  std::string study;               // the file's path, the TOML text, the directory to resume
  std::vector<std::string> sets;   // "section.key=value", as --set
  std::string backend = "auto";    // auto | cpu | cuda
  int threads = 0;                 // 0: every core
  std::optional<std::string> out;  // the output directory (--out); none: nothing is written
  bool force = false;              // --force
  bool progress = false;           // progress lines on err
};

struct LibraryRunResult {
  std::string name;                                            // "" for a single run
  std::vector<std::pair<std::string, std::string>> overrides;  // its [sweep] / [[run]] values
  std::vector<std::pair<std::string, std::string>> files;      // name and bytes (summary.json, series.csv, ...)
};

struct LibraryStudyResult {
  int code = 0;          // chens run's exit code (cli.hpp); the message is on err
  bool several = false;  // a study of several runs ([sweep], [[run]], the default study)
  std::vector<LibraryRunResult> runs;
  std::string comparison_csv;  // several runs: DIR/comparison.csv's bytes (SeveralRuns's own)
  std::string table;           // what chens run prints on stdout
};

// Runs the request as `chens run` would (a resumed one: `chens run --resume DIR`, its runs'
// files then read back from DIR, those completed before the interruption included). Throws
// StudyError (study/study.hpp) for bad input,
// with the message chens run prints after "chens run: "; other refusals and failures come
// back as the exit code with the message on err.
LibraryStudyResult run_for_library(const LibraryRunRequest& request, std::ostream& err);

// `chens check` and `chens validate` on the request's study (its out, force and resume are
// not used; validate takes one run, and rtol, atol < 0 are its defaults): the exit code and
// what the command prints on stdout. Bad input throws StudyError as run_for_library does.
enum class LibraryCommand { check, validate };
struct LibraryCommandResult {
  int code = 0;
  std::string report;
};
LibraryCommandResult command_for_library(LibraryCommand command, const LibraryRunRequest& request, double rtol, double atol,
                                         std::ostream& err);

}  // namespace chens
