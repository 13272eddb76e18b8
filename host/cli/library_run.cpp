// run_for_library (library_run.hpp): chens run's own steps (run_runs), in memory or into a
// directory, with the runs' result files collected as they complete.
#include "cli/library_run.hpp"

#include <sstream>

#include "cli/cli.hpp"
#include "cli/cli_internal.hpp"
#include "output/study_index.hpp"

namespace chens {

namespace {
// What messages and study.json name a study given as text (or a dict) rather than a file.
constexpr const char* text_origin = "<study text>";
}  // namespace

LibraryStudyResult run_for_library(const LibraryRunRequest& req, std::ostream& err) {
  if (req.backend != "auto" && req.backend != "cpu" && req.backend != "cuda")
    throw StudyError("backend = \"" + req.backend + "\": must be one of \"auto\", \"cpu\", \"cuda\"");
  if (req.threads < 0 || req.threads > 4096)
    throw StudyError("threads = " + std::to_string(req.threads) + ": must be in [1, 4096] (or None: every core)");
  cli::RunArgs ra;
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
  std::vector<StudyRun> runs;
  switch (req.source) {
    case LibraryRunRequest::Source::default_study: runs = load_default_runs(req.sets); break;
    case LibraryRunRequest::Source::single:
      ra.single = true;
      runs = load_runs(std::nullopt, req.sets);
      break;
    case LibraryRunRequest::Source::file:
      ra.study = req.study;
      runs = load_runs(req.study, req.sets);
      break;
    case LibraryRunRequest::Source::text:
      ra.study = text_origin;  // study.json's "study_file"
      runs = load_runs_text(req.study, text_origin, req.sets);
      break;
  }
  const std::vector<RunParams<double>> rps = cli::resolve_runs(runs);  // bad input throws here, before any run
  LibraryStudyResult res;
  res.several = runs.size() != 1 || !runs[0].name.empty();
  std::vector<nlohmann::json> digests;
  // The runs complete in order (run_several, one at a time); each one's files as written.
  ra.on_result = [&](const Study& s, const RunParams<double>& rp, const EnsembleResult& r, const RunInfo& info) {
    const StudyRun& run = runs[res.runs.size()];
    res.runs.push_back({run.name, run.overrides, output_file_bytes(s, rp, r, info)});
    if (res.several) digests.push_back(run_digest(run.name, s, rp, r, run.overrides));
  };
  std::ostringstream out;
  res.code = cli::run_runs(runs, res.several, ra, out, err);
  res.table = out.str();
  if (res.code == exit_ok && res.several) res.comparison_csv = comparison_csv(digests);
  return res;
}

}  // namespace chens
