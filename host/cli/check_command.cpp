// chens check: every run resolved, refused as `chens run` would refuse it, and printed with
// its memory and a run-time estimate from a calibration run on the backend `chens run`
// would choose (docs/study-format.md, "chens check").
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>
#include <thread>

#include "backends/cuda_backend.hpp"
#include "cli/cli.hpp"
#include "cli/cli_internal.hpp"
#include "dispatch/jit_systems.hpp"
#include "dispatch/run_study.hpp"
#include "output/number_text.hpp"

namespace chens::cli {
namespace {

// What chens run would refuse before running, refused here with its exit code and message.
std::optional<int> refuse_as_run_would(const std::vector<StudyRun>& runs, const std::vector<RunParams<double>>& rps,
                                       const RunArgs& ra, std::ostream& err) {
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const StudyRun& r = runs[i];
    RunInfo info;
    BackendId backend = BackendId::cpu;
    std::ostringstream why;
    if (const auto code = choose_backend(r.study, ra, why, info, backend, r.name)) {
      std::string m = why.str();
      if (m.rfind("chens run: ", 0) == 0) m = "chens check: " + m.substr(11);
      err << m;
      return code;
    }
    if (const std::string refusal = run_refusal(r.study, rps[i], backend); !refusal.empty()) {
      err << "chens check: " << (r.name.empty() ? "" : "run \"" + r.name + "\": ") << refusal << "\n";
      return exit_bad_input;
    }
  }
  return std::nullopt;
}

// check --compile: every system the runs compile on first use on the backend chens run would
// choose, and the cache lacks, compiled now, each once however many runs share it and several
// at once (--threads, else the cores: each compile is one compiler process), so that a study
// (or an MPI job, a batch of studies) starts without a compile and its runs are estimated
// from their compiled objects. A compile that fails stops the check (exit 2, its message);
// the others finish first, and what they compiled stays cached.
std::optional<int> compile_first_use(const std::vector<StudyRun>& runs, const RunArgs& ra, std::ostream& out,
                                     std::ostream& err) {
  std::vector<JitSystem> todo;
  std::set<std::string> objects;
  for (const StudyRun& r : runs) {
    RunInfo info;
    BackendId backend = BackendId::cpu;
    std::ostringstream ignored;
    choose_backend(r.study, ra, ignored, info, backend);
    if (first_use_compile(r.study, backend) != FirstUseCompile::needed) continue;
    JitSystem sys = jit_system(r.study, backend == BackendId::cuda);
    if (objects.insert(jit_object_path(sys)).second) todo.push_back(std::move(sys));
  }
  if (todo.empty()) {
    out << "# compile: nothing to compile (every run's system is built in or cached)\n";
    return std::nullopt;
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t workers = std::min<std::size_t>(todo.size(), ra.threads > 0 ? static_cast<unsigned>(ra.threads) : cores);
  out << "# compile: " << todo.size() << (todo.size() == 1 ? " system" : " systems") << " compiled on first use, " << workers
      << " at once (messages on stderr)\n"
      << std::flush;
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::string> failures(todo.size());
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (std::size_t w = 0; w < workers; ++w)
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < todo.size(); i = next++) {
        try {
          jit_compile(todo[i]);
        } catch (const std::exception& e) {
          failures[i] = e.what();
        }
      }
    });
  for (std::thread& t : pool) t.join();
  bool failed = false;
  for (const std::string& f : failures)
    if (!f.empty()) {
      err << "chens check: " << f << "\n";
      failed = true;
    }
  if (failed) return exit_bad_input;
  out << "# compile: done in "
      << number_text(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()) << " s\n";
  return std::nullopt;
}

// The same study with `size` instances to `t_end` (fixed step: whole sample intervals of the
// study's own grid where it has several, so that sampling costs in it what it costs in the
// run), nothing recorded.
Study calibration_study(const Study& s, const RunParams<double>& rp, std::int64_t size, double t_end) {
  Study c = s;
  c.size = size;
  c.t_end = t_end;
  if (rp.fixed_step) {
    if (!s.law(ParameterId::h).varies()) c.sample_dt = std::min(t_end, rp.sample_dt);
  } else {
    c.sample_dt.reset();
  }
  c.trajectory = c.states = false;
  c.record.clear();
  c.phase_error.clear();
  c.periodogram.clear();
  c.only.clear();
  return c;
}

// The steps an instance takes: the grid's, or with parameters.h the mean over the instances'
// own step sizes (the first 10^5 of them).
double mean_steps(const Study& s, const RunParams<double>& rp) {
  if (!s.law(ParameterId::h).varies()) return static_cast<double>(rp.total_steps);
  const ParameterEnsemble e = parameter_ensemble(s);
  const std::uint64_t n = std::min<std::uint64_t>(static_cast<std::uint64_t>(s.size), 100000);
  double sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) sum += std::ceil(s.t_end / e.value(ParameterId::h, i) - 1e-9);
  return sum / static_cast<double>(n);
}

// The calibration's aim: its last run takes about this long (a run shorter than a few
// milliseconds measures its start-up, not its pace), and a check of a whole study about
// check_budget_seconds at most.
constexpr double calibration_seconds = 0.12;
constexpr double check_budget_seconds = 8.0;

struct Timed {
  double seconds = 0;    // wall time of the run
  double t_reached = 0;  // the last sample time it finished (t_end unless stopped)
  bool stopped = false;  // stopped at the deadline
  Study study;
  RunParams<double> rp;
  EnsembleResult result;
};

// The calibration run `c`, stopped at its first stop point after `deadline` seconds (stop
// points come every ~stop_seconds: segment_plan.hpp), so that no calibration outlasts the
// check's budget, however long a step takes.
Timed timed_run(const Study& c, BackendId backend, const RunArgs& ra, double deadline) {
  Timed t;
  t.study = c;
  t.rp = resolve(c);
  EnsembleSpec spec = ensemble_spec(c, ra.threads);
  spec.stop_seconds = std::min(spec.stop_seconds, std::max(0.01, deadline / 4));
  const auto start = std::chrono::steady_clock::now();
  spec.checkpoint = [start, deadline](std::int64_t, std::int64_t) {
    CheckpointRequest q;
    q.stop = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > deadline;
    return q;
  };
  t.result = run_study_on(backend, c, t.rp, spec);
  t.seconds = t.result.wall_seconds;
  t.stopped = t.result.stopped_at > 0;
  t.t_reached = t.stopped ? (t.result.stopped_at > 1 ? t.rp.sample_time(t.result.stopped_at - 1) : 0.0) : c.t_end;
  return t;
}

// Prints the run's estimated run time and returns it in seconds; 0 when it cannot be
// estimated (the line says why). The run is calibrated on the backend chens run would use:
// with up to 4096 of its instances (512 for an adaptive method, whose steps are not known
// in advance; at least 256 a thread), over a time span doubled from a few steps, and once
// the span is t_end with twice the instances, until a run takes calibration_seconds (its
// start-up, milliseconds, is then a few per cent of it: the calibrations of a few
// milliseconds that scaled their start-up with the run made a big ensemble's estimate 3x
// high) or is the run itself. Its time scales to the run's t_end and size. Writing the
// results costs per sample time: the last calibration's files are built and timed too.
// Every calibration run stops at the budget (`budget` seconds in all), however slow a step.
double estimate_run_time(const Study& s, const RunParams<double>& rp, const RunArgs& ra, std::ostream& out, double budget) {
  RunInfo info;
  BackendId backend = BackendId::cpu;
  std::ostringstream ignored;
  if (choose_backend(s, ra, ignored, info, backend) || s.t_end <= 0) {
    out << "# run time: not estimated (" << (s.t_end <= 0 ? "t_end = 0" : "backend not available") << ")\n";
    return 0;
  }
  // A system compiled on first use is not compiled by a check (print_dry_run said so).
  if (first_use_compile(s, backend) == FirstUseCompile::needed) {
    out << "# run time: not estimated (the system is compiled on first use; chens run compiles it, then a check "
           "calibrates it)\n";
    return 0;
  }
  try {
    const std::int64_t n = s.only.empty() ? s.size : static_cast<std::int64_t>(s.only.size());
    // At least four blocks of 64 instances a thread, so that every thread works (a dopri5
    // calibration of 64 instances, one block, ran on one of two threads and was 2x high).
    const std::int64_t threads = ra.threads > 0 ? ra.threads : std::max(1u, std::thread::hardware_concurrency());
    std::int64_t size = std::min<std::int64_t>(n, std::max<std::int64_t>(rp.fixed_step ? 4096 : 512, 256 * threads));
    // The first span: two sample intervals of a fixed-step run, at least 50 steps; 64 trial
    // steps of an adaptive run.
    double t = rp.fixed_step ? std::max(2 * rp.sample_dt, 50 * rp.h) : 64 * rp.h;
    if (rp.fixed_step && s.law(ParameterId::h).varies()) t = std::max(t, 2 * *s.sample_dt);
    t = std::min(t, s.t_end);
    const auto started = std::chrono::steady_clock::now();
    const auto left = [&] {
      return budget - std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    };
    Timed last;
    for (;;) {
      Timed next = timed_run(calibration_study(s, rp, size, t), backend, ra, std::max(0.005, left() / 2));
      if (next.t_reached <= 0) {
        if (last.t_reached > 0) break;  // the last whole run is the calibration
        out << "# run time: not estimated (the calibration did not reach its first sample time, t = "
            << number_text(std::min(s.t_end, rp.sample_dt > 0 ? rp.sample_dt : t), "%.4g") << ", in "
            << number_text(next.seconds) << " s: the run is long)\n";
        return 0;
      }
      last = std::move(next);
      if (last.stopped || last.seconds >= calibration_seconds || (t >= s.t_end && size >= n) || 3 * last.seconds > left())
        break;
      if (t < s.t_end) {
        t = std::min(s.t_end, 2 * t);
      } else {
        size = std::min(n, 2 * size);
      }
    }
    const double integrate = last.seconds * (s.t_end / last.t_reached) * static_cast<double>(n) / static_cast<double>(size);
    // The files: series.csv, trajectory.csv and the rest, per sample time (a stopped run has
    // no result to write: then not counted).
    double write = 0;
    if (!last.stopped) {
      const auto w0 = std::chrono::steady_clock::now();
      output_file_bytes(last.study, last.rp, last.result, info);
      write = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count() *
              static_cast<double>(rp.samples + 1) / static_cast<double>(last.rp.samples + 1);
    }
    const double seconds = integrate + write;
    out << "# run time: about " << number_text(seconds)
        << " s (calibration: " << counted(static_cast<std::uint64_t>(size), "instance", "instances")
        << " to t = " << number_text(last.t_reached, "%.4g") << " in " << number_text(last.seconds) << " s on "
        << last.result.device;
    if (!rp.fixed_step && !last.stopped)
      out << ", "
          << number_text(static_cast<double>(last.result.totals.steps) / static_cast<double>(size) * s.t_end /
                         last.t_reached)
          << " steps per instance";
    out << (last.stopped ? "; stopped at the check's time budget" : "; writing the files about " + number_text(write) + " s")
        << ")\n";
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
  if (const auto code = refuse_as_run_would(runs, rps, ra, err)) return *code;
  const std::string what = (ra.single ? std::string("the defaults of every key (--single)") : study_source(ra)) +
                           (ra.sets.empty() ? "" : " with --set");
  out << "# chens check: " << what << ": valid, " << runs.size() << " run" << (runs.size() == 1 ? "" : "s") << "\n";
  if (ra.compile)
    if (const auto code = compile_first_use(runs, ra, out, err)) return *code;
  // The calibrations share check_budget_seconds; a study of more runs than it allows is
  // estimated from the runs calibrated, spread over it.
  const std::size_t calibrated = std::min<std::size_t>(runs.size(), 64);
  double total_seconds = 0, estimated_seconds = 0;
  std::size_t estimated = 0;
  const auto started = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Study& s = runs[i].study;
    if (!runs[i].name.empty()) out << "\n# ---- run \"" << runs[i].name << "\"\n";
    print_dry_run(s, rps[i], ra, out);
    BackendId backend = BackendId::cpu;
    {
      RunInfo info;
      std::ostringstream ignored;
      choose_backend(s, ra, ignored, info, backend);
    }
    out << "# memory: " << run_memory(s, rps[i], backend).text() << "\n";
    if (rps[i].fixed_step) {
      const double n = static_cast<double>(s.only.empty() ? s.size : static_cast<std::int64_t>(s.only.size()));
      out << "# work: " << number_text(n * mean_steps(s, rps[i])) << " instance-steps\n";
    }
    // Every (runs / calibrated)-th run is calibrated, within what is left of the budget.
    if (i * calibrated / runs.size() != (i + 1) * calibrated / runs.size() || runs.size() == 1) {
      const double left =
          check_budget_seconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const std::size_t to_go = calibrated - std::min(calibrated, estimated);
      const double seconds =
          estimate_run_time(s, rps[i], ra, out, std::max(0.05, left / static_cast<double>(std::max<std::size_t>(1, to_go))));
      if (seconds > 0) {
        estimated_seconds += seconds;
        ++estimated;
      }
      total_seconds += seconds;
    } else {
      out << "# run time: not calibrated (a study of " << runs.size() << " runs calibrates " << calibrated
          << " of them, spread over it)\n";
    }
  }
  if (runs.size() > 1) {
    out << "\n# all runs: about ";
    if (estimated == runs.size() || estimated == 0) {
      out << number_text(total_seconds) << " s\n";
    } else {
      out << number_text(estimated_seconds / static_cast<double>(estimated) * static_cast<double>(runs.size())) << " s (the "
          << estimated << " runs calibrated took " << number_text(estimated_seconds)
          << " s; the others are taken to cost as much on average)\n";
    }
  }
  return exit_ok;
}

}  // namespace chens::cli
