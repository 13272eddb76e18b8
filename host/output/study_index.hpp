// What a study with several runs writes besides each run's own files (docs/study-format.md,
// "Several runs"): a digest of every run for DIR/study.json, and the comparison of the runs
// as a table (stdout) and as DIR/comparison.csv.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/ensemble_result.hpp"
#include "study/study.hpp"

namespace chens {

// The numbers that compare runs: configuration, work, cost and final error statistics.
nlohmann::json run_digest(const std::string& name, const Study& s, const RunParams<double>& rp, const EnsembleResult& r);

// The comparison on stdout, three tables: work and cost per run (steps, RHS evaluations,
// projections, wall time, relative to the fastest run); final median and maximum of each
// error metric and the growth exponent of its maximum (summary.json's growth_exponents);
// the phase error of instance 0 where the runs have one (output.phase_error).
// comparison.csv: one row per run with all of these, every number in full precision.
std::string comparison_table(const std::vector<nlohmann::json>& digests);
std::string comparison_csv(const std::vector<nlohmann::json>& digests);

}  // namespace chens
