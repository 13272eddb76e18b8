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
  enum class Source { default_study, single, file, text };
  Source source = Source::default_study;  // the built-in default study, every key's default (--single), a file, TOML
  std::string study;                      // the file's path or the TOML text
  std::vector<std::string> sets;          // "section.key=value", as --set
  std::string backend = "auto";           // auto | cpu | cuda
  int threads = 0;                        // 0: every core
  std::optional<std::string> out;         // the output directory (--out); none: nothing is written
  bool force = false;                     // --force
  bool progress = false;                  // progress lines on err
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
  std::string comparison_csv;  // several runs: DIR/comparison.csv's bytes
  std::string table;           // what chens run prints on stdout
};

// Runs the request as `chens run` would. Throws StudyError (study/study.hpp) for bad input,
// with the message chens run prints after "chens run: "; other refusals and failures come
// back as the exit code with the message on err.
LibraryStudyResult run_for_library(const LibraryRunRequest& request, std::ostream& err);

}  // namespace chens
