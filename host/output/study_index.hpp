// What a study with several runs writes besides each run's own files (docs/study-format.md,
// "Several runs"): a digest of every run for DIR/study.json, the comparison of the runs as
// a table (stdout) and as DIR/comparison.csv, and every run's series in one long table,
// DIR/series_long.csv.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "backends/ensemble_result.hpp"
#include "study/study.hpp"

namespace chens {

// The numbers that compare runs: configuration (varied: the run's overrides, i.e. its
// [[run]] keys and swept values; resolved: every key of the resolved study, both typed as
// in summary.json's study), work, cost and final error statistics, growth exponents with
// the reasons of those withheld (output/growth.hpp). overrides: StudyRun::overrides.
nlohmann::json run_digest(const std::string& name, const Study& s, const RunParams<double>& rp, const EnsembleResult& r,
                          const std::vector<std::pair<std::string, std::string>>& overrides = {});

// The comparison on stdout, three tables: work and cost per run (the varied keys, steps,
// RHS evaluations of the integrator and of a numerical reference, projections, wall time,
// relative to the fastest run); final median and maximum of each error metric and the
// growth exponent of its maximum, or why there is none; the phase error of instance 0
// where the runs have one (output.phase_error).
std::string comparison_table(const std::vector<nlohmann::json>& digests);
// comparison.csv: one row per run with all of these and every resolved key, one typed
// column each (numbers unquoted, exactly as read back; booleans true / false; text quoted
// where it must be).
std::string comparison_csv(const std::vector<nlohmann::json>& digests);


}  // namespace chens
