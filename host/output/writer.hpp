// summary.json, series.csv and (on request) trajectory.csv, periodogram.csv and states.h5 of
// one run. Files are first written under DIR/.chens-partial-<pid>/, each flushed to the
// disk, and renamed into DIR only when all of them are complete (summary.json last), so a
// failed or interrupted write (a full disk) never leaves a partial result: write_outputs
// throws with the file that failed and leaves DIR as it was but for --force's removals.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/ensemble_result.hpp"
#include "output/output_lock.hpp"  // (for the CLI: one writer per output directory)
#include "output/periodogram.hpp"
#include "study/study.hpp"

namespace chens {

struct RunInfo {
  std::string backend_requested;  // auto | cpu | cuda
  std::string backend_note;       // why auto chose what it chose
};

// x, or null when it is not finite (JSON has no inf or nan).
inline nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

struct Instance0Spectrum;
// spectrum: instance 0's periodogram when the study asks for one (computed here when null).
nlohmann::json make_summary(const Study& s, const RunParams<double>& rp, const EnsembleResult& r, const RunInfo& info,
                            const Instance0Spectrum* spectrum = nullptr);
// series.csv; with [parameters] group_by, a first column `group`: "all", then group_label's.
std::string make_series_csv(const Study& s, const EnsembleResult& r);
// A group's label in series.csv and summary.json: "h=0.1" (a list's value), "length=0.5..0.75"
// (a bin [0.5, 0.75)): no commas, so that it is a plain CSV cell.
std::string group_label(const ParameterEnsemble& e, std::size_t g);
std::string make_trajectory_csv(const EnsembleResult& r);

// One physical component of instance 0's recorded trajectory (and of its reference), at the
// equally spaced sample times t = k * sample_dt from t = 0 on: until a shorter last interval
// or until instance 0 is lost (then lost = true).
struct Instance0Series {
  std::vector<double> t, value, reference;
  bool lost = false;
};
Instance0Series instance0_series(const EnsembleResult& r, const std::string& component, double sample_dt);
// summary.json's "phase_error" (output.phase_error): |y(kT) - y_exact(kT)| of instance 0.
nlohmann::json phase_error_table(const Study& s, const RunParams<double>& rp, const EnsembleResult& r);
// Instance 0's periodogram and its reference's (output.periodogram, output/periodogram.hpp),
// computed once for summary.json's "periodogram" and periodogram.csv: the direct DFT costs
// N^2/2 multiply-adds.
struct Instance0Spectrum {
  Instance0Series series;
  Periodogram value, reference;  // reference: empty without a reference solution
};
Instance0Spectrum instance0_spectrum(const Study& s, const RunParams<double>& rp, const EnsembleResult& r);
nlohmann::json periodogram_summary(const Study& s, const RunParams<double>& rp, const Instance0Spectrum& spectrum);
std::string make_periodogram_csv(const Instance0Spectrum& spectrum);

// A run's result files, name and bytes, as write_outputs writes them (summary.json last):
// what a library caller (python/) holds in memory, the files' bytes without a directory.
std::vector<std::pair<std::string, std::string>> output_file_bytes(const Study& s, const RunParams<double>& rp,
                                                                   const EnsembleResult& r, const RunInfo& info);

void write_outputs(const std::string& dir, const Study& s, const RunParams<double>& rp, const EnsembleResult& r,
                   const RunInfo& info);

}  // namespace chens
