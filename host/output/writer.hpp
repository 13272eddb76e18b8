// summary.json, series.csv and (on request) trajectory.csv of one run. Files are first
// written under DIR/.chens-partial-<pid>/ and renamed into DIR only when all of them
// are complete, so a failed or interrupted write never leaves a partial result.
#pragma once

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/ensemble_result.hpp"
#include "study/study.hpp"

namespace chens {

struct RunInfo {
  std::string backend_requested;  // auto | cpu | cuda
  std::string backend_note;       // why auto chose what it chose
};

// x, or null when it is not finite (JSON has no inf or nan).
inline nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

nlohmann::json make_summary(const Study& s, const RunParams<double>& rp, const EnsembleResult& r, const RunInfo& info);
std::string make_series_csv(const EnsembleResult& r);
// Growth exponents (output/growth.hpp) of each metric's ensemble maximum and median over
// the last decade of the run, [t_final / 10, t_final].
nlohmann::json growth_exponents(const EnsembleResult& r);
std::string make_trajectory_csv(const EnsembleResult& r);

// Names of the files a run writes into DIR.
inline const char* const output_files[] = {"summary.json", "series.csv", "trajectory.csv"};

// Throws std::runtime_error when DIR holds results of an earlier run and !force.
void check_output_dir(const std::string& dir, bool force);
// Writes text to path through a temporary file in the same directory, then a rename: the
// file is either the old one or complete.
void write_file_atomically(const std::string& path, const std::string& text);

void write_outputs(const std::string& dir, const Study& s, const RunParams<double>& rp, const EnsembleResult& r,
                   const RunInfo& info);

}  // namespace chens
