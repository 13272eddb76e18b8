// run_for_library (library_run.hpp): chens run's own steps (run_runs), in memory or into a
// directory, with the runs' result files collected as they complete; command_for_library:
// chens check's and validate's own steps (check_runs, validate_study) on the same sources.
#include "cli/library_run.hpp"

#include <filesystem>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "cli/cli.hpp"
#include "cli/cli_internal.hpp"
#include "output/file_text.hpp"

namespace chens {

namespace {

namespace fs = std::filesystem;

// What messages and study.json name a study given as text (or a dict) rather than a file.
constexpr const char* text_origin = "<study text>";

std::string read_bytes(const fs::path& p) {
  if (std::optional<std::string> text = file_text(p.string())) return *std::move(text);
  throw std::runtime_error("cannot read " + p.string());
}

// chens run's options and runs for a request: RunArgs as its command line would set them, the
// runs from the request's source; `several` where a resumed study says. Throws StudyError.
std::vector<StudyRun> request_runs(const LibraryRunRequest& req, cli::RunArgs& ra, std::optional<bool>& several) {
  if (req.backend != "auto" && req.backend != "cpu" && req.backend != "cuda")
    throw StudyError("backend = \"" + req.backend + "\": must be one of \"auto\", \"cpu\", \"cuda\"");
  if (req.threads < 0 || req.threads > 4096)
    throw StudyError("threads = " + std::to_string(req.threads) + ": must be in [1, 4096] (or None: every core)");
  ra.backend = req.backend;
  ra.backend_given = true;
  ra.threads = req.threads;
  ra.sets = req.sets;
  ra.force = req.force;
  ra.progress = req.progress ? 1 : 0;
  if (req.out) {
    ra.out = *req.out;
    ra.out_given = true;
  } else {
    ra.write_files = false;
  }
  switch (req.source) {
    case LibraryRunRequest::Source::default_study: return load_default_runs(req.sets);
    case LibraryRunRequest::Source::single: ra.single = true; return load_runs(std::nullopt, req.sets);
    case LibraryRunRequest::Source::file: ra.study = req.study; return load_runs(req.study, req.sets);
    case LibraryRunRequest::Source::text:
      ra.study = text_origin;  // study.json's "study_file"
      return load_runs_text(req.study, text_origin, req.sets);
    case LibraryRunRequest::Source::resume: break;
  }
  cli::Resumed r = cli::read_resume_record(req.study);
  ra.resume = ra.out = req.study;
  ra.out_given = true;
  ra.write_files = true;
  ra.backend = r.backend;  // the backend that wrote the checkpoints
  several = r.several;
  return std::move(r.runs);
}

}  // namespace

LibraryStudyResult run_for_library(const LibraryRunRequest& req, std::ostream& err) {
  cli::RunArgs ra;
  std::optional<bool> several;  // a resumed study says; otherwise as chens run counts
  const std::vector<StudyRun> runs = request_runs(req, ra, several);
  cli::resolve_runs(runs);  // bad input throws here, before any run
  LibraryStudyResult res;
  res.several = several.value_or(cli::several_runs(runs));
  // The runs complete in order (run_several, one at a time); each one's files as written. A
  // resumed study skips those already complete: its files are read back from DIR instead.
  const bool resuming = req.source == LibraryRunRequest::Source::resume;
  if (!resuming)
    ra.on_result = [&](const Study& s, const RunParams<double>& rp, const EnsembleResult& r, const RunInfo& info) {
      const StudyRun& run = runs[res.runs.size()];
      res.runs.push_back({run.name, run.overrides, output_file_bytes(s, rp, r, info)});
    };
  ra.on_comparison = [&](const std::string& csv) { res.comparison_csv = csv; };
  std::ostringstream out;
  res.code = cli::run_runs(runs, res.several, ra, out, err);
  res.table = out.str();
  if (res.code != exit_ok) return res;
  if (resuming) {
    // The runs the interruption had completed ran before this process: their files, and the
    // others', are what DIR holds now.
    for (const StudyRun& run : runs) {
      LibraryRunResult r{run.name, run.overrides, {}};
      const fs::path dir = fs::path(req.study) / run.name;
      for (const char* f : output_files)
        if (fs::exists(dir / f)) r.files.emplace_back(f, read_bytes(dir / f));
      res.runs.push_back(std::move(r));
    }
  }
  return res;
}

LibraryCommandResult command_for_library(LibraryCommand command, const LibraryRunRequest& req, double rtol, double atol,
                                         std::ostream& err) {
  cli::RunArgs ra;
  std::optional<bool> several;
  const std::vector<StudyRun> runs = request_runs(req, ra, several);
  const std::vector<RunParams<double>> rps = cli::resolve_runs(runs);
  std::ostringstream out;
  LibraryCommandResult res;
  if (command == LibraryCommand::check) {
    res.code = cli::check_runs(runs, rps, ra, out, err);
  } else {
    if (cli::several_runs(runs))  // load_study's refusal (study_files.cpp), for every source
      throw StudyError(cli::study_source(ra) +
                       " holds several runs ([sweep] or [[run]]); this command takes a study with one run");
    ra.rtol = rtol;
    ra.atol = atol;
    res.code = cli::validate_study(runs[0].study, rps[0], ra, out, err);
  }
  res.report = out.str();
  return res;
}

}  // namespace chens
