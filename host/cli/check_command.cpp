// chens check: every run resolved, refused as `chens run` would refuse it, and printed with
// its memory and a run-time estimate from a calibration run on the backend `chens run`
// would choose (docs/study-format.md, "chens check").
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "backends/cuda_backend.hpp"
#include "cli/cli.hpp"
#include "cli/cli_internal.hpp"
#include "dispatch/run_study.hpp"

namespace chens::cli {
namespace {

// What chens run would refuse before running, refused here with its exit code and message.
std::optional<int> refuse_as_run_would(const std::vector<StudyRun>& runs, const RunArgs& ra, std::ostream& err) {
  for (const StudyRun& r : runs) {
    RunInfo info;
    bool gpu = false;
    std::ostringstream why;
    if (const auto code = choose_backend(r.study, ra, why, info, gpu, r.name)) {
      std::string m = why.str();
      if (m.rfind("chens run: ", 0) == 0) m = "chens check: " + m.substr(11);
      err << m;
      return code;
    }
    if (const std::string refusal = run_refusal(r.study, gpu); !refusal.empty()) {
      err << "chens check: " << (r.name.empty() ? "" : "run \"" + r.name + "\": ") << refusal << "\n";
      return exit_bad_input;
    }
  }
  return std::nullopt;
}

// The same study, smaller and shorter, nothing recorded. Fixed step: at least 50 steps and
// two sample intervals of the run's own grid (sampling costs as much as stepping when every
// step is sampled), at most ~4e6 instance-steps; dopri5: 4096 instances over 1/50 of t_end.
Study calibration_study(const Study& s, const RunParams<double>& rp) {
  Study c = s;
  if (rp.fixed_step) {
    const index_t steps = std::min<index_t>(rp.total_steps, std::max<index_t>(50, 2 * rp.steps_per_sample));
    c.t_end = static_cast<double>(steps) * rp.h;
    c.sample_dt = static_cast<double>(std::min(rp.steps_per_sample, std::max<index_t>(1, steps))) * rp.h;
    if (s.law(ParameterId::h).varies()) {
      // Each instance's grid divides output.sample_dt: whole sample intervals of the study's.
      const index_t intervals = std::max<index_t>(1, (steps + rp.steps_per_sample - 1) / rp.steps_per_sample);
      c.sample_dt = s.sample_dt;
      c.t_end = std::min(s.t_end, static_cast<double>(intervals) * *s.sample_dt);
    }
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
  return c;
}

// Prints the run's estimated run time (from its calibration run's rate) and returns it in
// seconds; 0 when it cannot be estimated (the line says why).
double estimate_run_time(const Study& s, const RunParams<double>& rp, const RunArgs& ra, std::ostream& out) {
  const Study c = calibration_study(s, rp);
  RunInfo info;
  bool gpu = false;
  std::ostringstream ignored;
  if (choose_backend(s, ra, ignored, info, gpu) || c.t_end <= 0) {
    out << "# run time: not estimated (" << (c.t_end <= 0 ? "t_end = 0" : "backend not available") << ")\n";
    return 0;
  }
  try {
    const RunParams<double> crp = resolve(c);
    EnsembleSpec spec = ensemble_spec(c, ra.threads);
    const EnsembleResult r = gpu ? run_study_cuda(c, crp, spec) : run_study_cpu(c, crp, spec);
    const double rate = static_cast<double>(r.totals.steps) / std::max(r.wall_seconds, 1e-9);
    double steps_per_instance = rp.fixed_step ? static_cast<double>(rp.total_steps)
                                              : static_cast<double>(r.totals.steps) / static_cast<double>(c.size) * 50;
    if (rp.fixed_step && s.law(ParameterId::h).varies()) {
      // parameters.h: t_end / h over the instances' own step sizes (the first 10^5 of them).
      const ParameterEnsemble e = parameter_ensemble(s);
      const std::uint64_t n = std::min<std::uint64_t>(static_cast<std::uint64_t>(s.size), 100000);
      double sum = 0;
      for (std::uint64_t i = 0; i < n; ++i) sum += std::ceil(s.t_end / e.value(ParameterId::h, i) - 1e-9);
      steps_per_instance = sum / static_cast<double>(n);
    }
    const double seconds = steps_per_instance * static_cast<double>(s.size) / rate;
    out << "# work: " << steps_per_instance * static_cast<double>(s.size) << " instance-steps"
        << (rp.fixed_step ? "" : " (dopri5: extrapolated from the calibration)") << "\n# run time: about " << seconds
        << " s (calibration: " << c.size << " instances to t = " << c.t_end << " in " << r.wall_seconds << " s on "
        << r.device << ", " << rate << " instance-steps/s)\n";
    return seconds;
  } catch (const std::exception& e) {
    out << "# run time: not estimated (the calibration run failed: " << e.what() << ")\n";
    return 0;
  }
}

}  // namespace

int check_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  RunArgs ra;
  std::vector<StudyRun> runs;
  std::vector<RunParams<double>> rps;
  const auto read = [&] {
    ra = parse_run_args(args, Command::check);
    runs = runs_of_args(ra);
    rps = resolve_runs(runs);
  };
  if (const auto code = read_input("check", err, read, [&] { return default_study_hint(ra); })) return *code;
  return check_runs(runs, rps, ra, out, err);
}

int check_runs(const std::vector<StudyRun>& runs, const std::vector<RunParams<double>>& rps, const RunArgs& ra,
               std::ostream& out, std::ostream& err) {
  if (const auto code = refuse_as_run_would(runs, ra, err)) return *code;
  const std::string what = (ra.single ? std::string("the defaults of every key (--single)") : study_source(ra)) +
                           (ra.sets.empty() ? "" : " with --set");
  out << "# chens check: " << what << ": valid, " << runs.size() << " run" << (runs.size() == 1 ? "" : "s") << "\n";
  double total_seconds = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Study& s = runs[i].study;
    if (!runs[i].name.empty()) out << "\n# ---- run \"" << runs[i].name << "\"\n";
    print_dry_run(s, rps[i], ra, out);
    const double per = static_cast<double>(bytes_per_instance(s));
    out << "# memory: about " << std::setprecision(3) << per * static_cast<double>(s.size) / 1e9 << " GB for " << s.size
        << " instances (" << per << " bytes each)\n";
    total_seconds += estimate_run_time(s, rps[i], ra, out);
  }
  if (runs.size() > 1) out << "\n# all runs: about " << total_seconds << " s\n";
  return exit_ok;
}

}  // namespace chens::cli
