// chens run: one run from its checks to its written results (SingleRun, which a study runs
// once per run) and the command itself.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include <chens/version.hpp>

#include "backends/cuda_backend.hpp"
#include "cli/cli.hpp"
#include "cli/cli_internal.hpp"
#include "dispatch/run_study.hpp"
#include "mpi/mpi_runtime.hpp"
#include "output/checkpoint_file.hpp"
#include "output/study_index.hpp"
#include "backends/live_fraction.hpp"

namespace chens::cli {
namespace {

namespace fs = std::filesystem;

long env_long(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::strtol(v, nullptr, 10) : 0;
}

// Progress on stderr after each segment: on a terminal one line rewritten in place;
// otherwise (--progress into a log) a line per segment. Rates and the time left count this
// process's share of a resumed run (from `done0` sample times on).
std::function<void(std::int64_t, std::int64_t)> progress_reporter(
    const RunParams<double>& rp, double instances, std::int64_t done0, const std::string& label, std::ostream& err) {
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  const auto t0 = std::chrono::steady_clock::now();
  return [&err, tty, t0, instances, &rp, label, done0](std::int64_t done, std::int64_t total) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double frac = static_cast<double>(done - done0) / static_cast<double>(total - done0);
    char rate[64] = "";
    if (rp.fixed_step && elapsed > 0)  // steps so far, all instances: the sample's step index
      std::snprintf(rate, sizeof rate, ", %.3g instance-steps/s",
                    instances * static_cast<double>(rp.sample_step(done - 1) - (done0 > 0 ? rp.sample_step(done0 - 1) : 0)) /
                        elapsed);
    char buf[300];
    std::snprintf(buf, sizeof buf,
                  "chens: %st = %.6g of %.6g (%lld of %lld sample times, %.0f %%)%s, %.1f s, about %.0f s left",
                  label.c_str(), rp.sample_time(done - 1), rp.t_end, static_cast<long long>(done),
                  static_cast<long long>(total), 100.0 * static_cast<double>(done) / static_cast<double>(total), rate,
                  elapsed, frac > 0 ? elapsed * (1.0 - frac) / frac : 0.0);
    err << (tty ? "\r" : "") << buf << (tty && done < total ? "" : "\n") << std::flush;
  };
}

// One run into dir, step by step: checkpoint to resume from, backend, output directory,
// progress and checkpoints, the integration, and its results (or where they were rescued).
// Each step that refuses or fails returns the exit code, having said why on stderr.
class SingleRun {
 public:
  SingleRun(const Study& study, const RunParams<double>& rp, const RunArgs& ra, const std::string& dir, std::ostream& err,
            const std::string& label, const std::string& resume_json)
      : study_(study),
        rp_(rp),
        ra_(ra),
        dir_(dir),
        err_(err),
        label_(label),
        resume_json_(resume_json),
        ck_path_((fs::path(dir) / checkpoint_file_name).string()),
        key_(run_key(CHENS_VERSION_STRING, to_toml(study, rp))) {}

  int execute(EnsembleResult& result, bool lock_dir) {
    if (lock_dir && files_)
      if (const auto code = lock_output_dir(dir_, err_, lock_)) return *code;
    if (const auto code = checked()) return *code;
    EnsembleSpec spec = ensemble_spec(study_, ra_.threads);
    if (ra_.progress == 1 || (ra_.progress < 0 && ::isatty(STDERR_FILENO)))
      spec.progress = progress_reporter(rp_, static_cast<double>(study_.size), from_ ? from_->done : 0, label_, err_);
    if (files_) {  // e.g. a full disk on rank 0: every rank stops
      const auto code = prepare_output();
      if (!mpi_all(!code)) return code ? *code : exit_failure;
    }
    attach_checkpoints(spec);
    if (const auto code = integrate(spec, result)) return *code;
    if (result.stopped_at > 0) return report_interrupt(result);
    if (!mpi_root()) return exit_ok;  // rank 0 writes the results of every rank
    if (ra_.on_result) ra_.on_result(study_, rp_, result, info_);
    if (files_) {
      if (const auto code = write_results(result)) return *code;
      report_done(result);
    }
    report_live(result);
    // Written (or handed over), but with no instance left at t_final there are no final
    // statistics to read.
    return live_fraction(result.series, result.instances).all_lost() ? exit_all_lost : exit_ok;
  }

 private:
  // --resume: the run continues from dir/checkpoint.chk where there is one, on the backend
  // that wrote it.
  std::optional<int> load_checkpoint() {
    // Under mpirun rank 0, which alone writes DIR, reads the checkpoint, and every rank gets
    // its shard of it (docs/checkpoints.md).
    int status = 0;  // 0: none, 1: read, 2: refused
    std::string error;
    if (mpi_world().active) {
      const std::uint64_t keep = std::min<std::uint64_t>(ensemble_spec(study_, ra_.threads).keep_instances, study_.size);
      status = mpi_read_checkpoint(ck_path_, key_, study_.size, keep, from_, error);
    } else if (std::error_code ec; fs::exists(ck_path_, ec)) {
      try {
        from_ = read_checkpoint(ck_path_, key_);
        status = 1;
      } catch (const std::exception& e) {
        error = e.what();
        status = 2;
      }
    }
    if (status == 2) {
      err_ << "chens run: --resume: " << error << "\n";
      return exit_bad_input;
    }
    if (status == 0) {
      if (root_path_exists(dir_))
        err_ << "chens: " << label_ << "no checkpoint in " << dir_ << ": the run starts again from t = 0\n";
      return std::nullopt;
    }
    if (from_->backend == "cuda") {
      const std::string why = gpu_unusable_reason(study_);
      if (!why.empty()) {
        err_ << "chens run: --resume: " << ck_path_ << " was written by the GPU backend and continues only on a GPU: " << why
             << "\n";
        return exit_no_backend;
      }
    }
    err_ << "chens: " << label_ << "resuming " << dir_ << " at t = " << rp_.sample_time(from_->done - 1) << " ("
         << from_->done << " of " << rp_.samples + 1 << " sample times done, " << from_->wall_seconds << " s computed)\n";
    return std::nullopt;
  }

  // The checkpoint to resume from, the backend and the output directory, checked on every
  // rank; under mpirun no rank goes on (and rank 0 writes nothing into DIR) until all have
  // found them fit: a rank refusing alone (no GPU for a GPU checkpoint, or after rank 0
  // wrote resume.json into DIR) would leave the others waiting.
  std::optional<int> checked() {
    std::optional<int> code = ra_.resume ? load_checkpoint() : std::nullopt;
    if (!code) code = choose();
    if (!code) code = check_output();
    if (mpi_all(!code)) return std::nullopt;
    if (!code) err_ << "chens run: another MPI rank refused the run (it said why on its stderr)\n";
    return code ? code : std::optional<int>(exit_bad_input);
  }

  std::optional<int> choose() {
    if (const auto code = choose_backend(study_, ra_, err_, info_, backend_)) return code;
    const BackendId saved = from_ && from_->backend == "cuda" ? BackendId::cuda : BackendId::cpu;
    if (from_ && backend_ != saved) {  // e.g. auto, and a GPU appeared or went away
      backend_ = saved;
      info_.backend_note = "resumed on the " + from_->backend + " backend, which wrote the checkpoint";
    }
    return std::nullopt;
  }

  // What must hold before anything in dir changes: no earlier results there (a resumed run's
  // directory holds its own resume.json and checkpoint), and a study this machine can run.
  std::optional<int> check_output() {
    try {
      if (files_) check_output_dir(dir_, ra_.force || ra_.resume.has_value());
    } catch (const std::exception& e) {
      err_ << "chens run: " << e.what() << "\n";
      return exit_bad_input;
    }
    if (const std::string why = run_refusal(study_, rp_, backend_); !why.empty()) {
      err_ << "chens run: " << why << "\n";
      return exit_bad_input;
    }
    return std::nullopt;
  }

  // --force removes the earlier results; with checkpoints the directory and resume.json
  // exist before the run starts.
  std::optional<int> prepare_output() {
    std::error_code ec;
    created_dir_ = !fs::exists(dir_, ec);
    if (ra_.force && !ra_.resume && mpi_root()) {
      try {
        remove_earlier_results_noting_kept(dir_, err_);
      } catch (const std::exception& e) {
        err_ << "chens run: " << e.what() << "\n";
        return exit_bad_input;
      }
    }
    try {
      fs::create_directories(dir_);
    } catch (const std::exception& e) {
      err_ << "chens run: --out " << dir_ << ": " << e.what() << "\n";
      return exit_bad_input;
    }
    if (mpi_root()) {
      try {
        check_writable_dir(dir_);
      } catch (const std::exception& e) {
        err_ << "chens run: " << e.what() << "\n";
        if (created_dir_) fs::remove(dir_, ec);
        return exit_bad_input;
      }
    }
    if (!resume_json_.empty() && !ra_.resume && mpi_root()) {
      try {
        write_file_atomically((fs::path(dir_) / resume_file_name).string(), resume_json_);
      } catch (const std::exception& e) {  // a full disk: nothing computed yet, nothing lost
        err_ << "chens run: " << e.what() << "\n";
        return exit_failure;
      }
    }
    return std::nullopt;
  }

  // Checkpoints (docs/checkpoints.md): at the stop point (segment_plan.hpp) that comes
  // checkpoint_minutes after the last one, at every checkpoint_segments-th stop point, and
  // when interrupted (then the run stops). A run in memory only stops.
  void attach_checkpoints(EnsembleSpec& spec) {
    if (!files_) {
      spec.checkpoint = [](std::int64_t, std::int64_t) {
        bool save = false;
        CheckpointRequest q;
        q.stop = agree_on_interrupt(false, save) != 0;
        return q;
      };
      return;
    }
    spec.resume_from = from_ ? &*from_ : nullptr;
    const long test_at = env_long("CHENS_TEST_INTERRUPT_AT");  // tests: interrupt once this many samples are done
    auto last = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
    auto segments = std::make_shared<long>(0);
    spec.checkpoint = [this, test_at, last, segments](std::int64_t done, std::int64_t) {
      CheckpointRequest q;
      *segments += 1;
      const double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - *last).count() / 60.0;
      bool save = (ra_.checkpoint_segments > 0 && *segments % ra_.checkpoint_segments == 0) ||
                  (ra_.checkpoint_minutes > 0 && minutes >= ra_.checkpoint_minutes);
      q.stop = agree_on_interrupt(test_at > 0 && done >= test_at, save) != 0;
      q.save = q.stop || save;
      return q;
    };
    // One process: the state with its instances. Under mpirun rank 0 writes the instances
    // as the ranks send them (run_study_sharded).
    save_ = [this, last](const CheckpointState& c, const InstanceSource* instances) {
      try {
        if (instances) {
          write_checkpoint(ck_path_, key_, c, *instances);
        } else {
          write_checkpoint(ck_path_, key_, c);
        }
        saved_done_ = c.done;
        save_error_.clear();
      } catch (const std::exception& e) {
        // A failed checkpoint must not cost the run: it goes on, and says so.
        save_error_ = e.what();
        err_ << "chens run: could not write a checkpoint: " << e.what() << "; the run goes on\n";
      }
      *last = std::chrono::steady_clock::now();
    };
    spec.save_checkpoint = [this](const CheckpointState& c) { save_(c, nullptr); };
  }

  std::optional<int> integrate(const EnsembleSpec& spec, EnsembleResult& result) {
    try {
      if (mpi_world().active) {
        ShardedSave save;
        if (save_) save = [this](const CheckpointState& c, const InstanceSource& instances) { save_(c, &instances); };
        result = run_study_sharded(study_, rp_, spec, backend_, save);
      } else {
        result = run_study_on(backend_, study_, rp_, spec);
      }
      return std::nullopt;
    } catch (const DeviceMemoryError& e) {
      err_ << "chens run: " << e.what() << "\n";
      forget_resume();
      return exit_bad_input;
    } catch (const StudyError& e) {  // a system compiled on first use that cannot be (jit_systems.hpp)
      err_ << "chens run: " << e.what() << "\n";
      forget_resume();
      return exit_bad_input;
    } catch (const std::bad_alloc&) {
      err_ << "chens run: out of memory for ensemble.size = " << study_.size << " instances; use a smaller ensemble\n";
      forget_resume();
      return exit_failure;
    } catch (const std::exception& e) {
      err_ << "chens run: the run failed: " << e.what() << "\n";
      forget_resume();
      return exit_failure;
    }
  }

  // A run that fails before its first checkpoint leaves nothing to resume.
  void forget_resume() const {
    std::error_code ec;
    if (!resume_json_.empty() && !fs::exists(ck_path_, ec)) fs::remove(fs::path(dir_) / resume_file_name, ec);
    if (created_dir_ && fs::is_empty(dir_, ec)) fs::remove(dir_, ec);
  }

  int report_interrupt(const EnsembleResult& result) const {
    const int sig = interrupt_signal_received();
    const char* name = interrupt_signal_name(sig);
    err_ << "chens run: " << label_ << "interrupted (" << name << ") "
         << (result.stopped_inside_interval ? "inside sample interval " + std::to_string(result.stopped_at) + ", after "
                                            : std::string("at "))
         << "t = " << rp_.sample_time(result.stopped_at - 1) << ", " << result.stopped_at << " of " << rp_.samples + 1
         << " sample times done\n";
    if (!files_) {
      err_ << "chens run: the run was in memory (no output directory): nothing was saved\n";
    } else if (saved_done_ == result.stopped_at) {
      err_ << "chens run: checkpoint written to " << ck_path_ << "; continue with: chens run --resume " << ra_.out << "\n";
    } else {
      err_ << "chens run: the checkpoint could not be written (" << save_error_ << "); "
           << (fs::exists(ck_path_)
                   ? "an earlier checkpoint in " + ck_path_ + " can be resumed with: chens run --resume " + ra_.out
                   : std::string("the run must be started again"))
           << "\n";
    }
    return interrupted_exit_code(sig);
  }

  // Once the results are written, the checkpoint (and a single run's resume record) are
  // done with.
  void retire_checkpoint() const {
    std::error_code ec;
    fs::remove(ck_path_, ec);
    if (!resume_json_.empty()) fs::remove(fs::path(dir_) / resume_file_name, ec);
  }

  std::optional<int> write_results(const EnsembleResult& result) {
    try {
      write_outputs(dir_, study_, rp_, result, info_);
    } catch (const std::exception& e) {
      err_ << "chens run: could not write the results to " << dir_ << ": " << e.what() << "\n";
      rescue_results(result);
      std::error_code ec;
      if (created_dir_ && fs::is_empty(dir_, ec)) fs::remove(dir_, ec);  // a study's run directory
      return exit_failure;
    }
    retire_checkpoint();
    return std::nullopt;
  }

  // Never lose a computed result: put it somewhere writable and say where. A new directory
  // of its own each time: a study (or an in-process caller) may rescue more than once, and
  // must not replace what it rescued before.
  void rescue_results(const EnsembleResult& result) {
    std::error_code ec;
    const fs::path tmp = fs::temp_directory_path(ec);
    fs::path rescue;
    for (int k = 0; !ec && rescue.empty() && k < 1000; ++k) {
      const fs::path p = tmp / ("chens-rescue-" + std::to_string(::getpid()) + (k ? "-" + std::to_string(k) : ""));
      if (fs::create_directory(p, ec)) rescue = p;
    }
    try {
      if (rescue.empty())
        throw std::runtime_error("no directory can be made in " + tmp.string() + (ec ? ": " + ec.message() : ""));
      write_outputs(rescue.string(), study_, rp_, result, info_);
      err_ << "chens run: the results were saved to " << rescue.string() << "/ instead\n";
      retire_checkpoint();
    } catch (const std::exception& e2) {
      if (!rescue.empty()) fs::remove(rescue, ec);  // write_outputs left it empty
      err_ << "chens run: saving them to the temporary directory (TMPDIR) failed too: " << e2.what()
           << "\nchens run: the results of this run are lost; make room";
      err_ << ", then chens run --resume " << ra_.out
           << (fs::exists(ck_path_, ec) ? " continues from its last checkpoint" : " runs it again from t = 0") << "\n";
    }
  }

  void report_done(const EnsembleResult& result) const {
    err_ << "chens: " << label_ << counted(result.instances, "instance", "instances") << " of "
         << formulation_name(study_.formulation) << " + " << method_name(study_.method) << " to t = " << rp_.t_end << " on "
         << result.device << " in " << result.wall_seconds << " s; lost " << result.lost_total() << lost_reasons(result)
         << "; results in " << dir_ << "/\n";
    if (result.lost_examples.empty()) return;
    // summary.json's lost_examples, ready to rerun alone: a few, each recorded, say how.
    std::string list;
    for (std::size_t q = 0; q < std::min<std::size_t>(result.lost_examples.size(), 4); ++q)
      list += (q ? ", " : "") + std::to_string(result.lost_examples[q]);
    err_ << "chens: to see how the first lost instances (summary.json lost_examples) were lost, rerun them alone with "
         << "--set 'ensemble.only=[" << list << "]' --set 'output.record=[" << list << "]'\n";
  }

  // How many instances the statistics are over, where it is not all of them that matter:
  // none left, or fewer than few_live_fraction (backends/live_fraction.hpp).
  void report_live(const EnsembleResult& result) const {
    const LiveFraction live = live_fraction(result.series, result.instances);
    if (live.all_lost()) {
      err_ << "chens: " << label_ << "every instance was lost (none live from t = " << live.none_t
           << " on): the run has no statistics from then on (summary.json live; exit code " << exit_all_lost << ")\n";
    } else if (live.few()) {
      err_ << "chens: " << label_ << "only " << live.final << " of " << result.instances
           << " instances were live at t = " << rp_.t_end << " (fewer than " << few_live_fraction * 100
           << " % from t = " << live.below_t
           << "): the statistics from then on are those of the survivors, not of the ensemble (summary.json live)\n";
    }
  }

  // " (diverged 200, non_finite 56)": the reasons with a non-zero count.
  static std::string lost_reasons(const EnsembleResult& result) {
    std::string out;
    for (int q = 1; q < lost_reason_count; ++q)
      if (result.lost[q] > 0)
        out += std::string(out.empty() ? " (" : ", ") + lost_reason_name(q) + " " + std::to_string(result.lost[q]);
    return out.empty() ? out : out + ")";
  }

  const Study& study_;
  const RunParams<double>& rp_;
  const RunArgs& ra_;
  const std::string dir_;
  std::ostream& err_;
  const std::string label_, resume_json_;
  const std::string ck_path_;
  const std::uint64_t key_;
  const bool files_ = ra_.write_files;
  std::optional<OutputLock> lock_;
  std::optional<CheckpointState> from_;  // --resume: the checkpoint the run continues from
  RunInfo info_;
  BackendId backend_ = BackendId::cpu;
  bool created_dir_ = false;
  // Writes a checkpoint (attach_checkpoints); empty for a run in memory.
  std::function<void(const CheckpointState&, const InstanceSource*)> save_;
  std::int64_t saved_done_ = 0;  // the sample times in the last checkpoint written
  std::string save_error_;       // why the last checkpoint could not be written
};

// The runs `chens run` is asked for: the interrupted study's (--resume) or those of the
// study file, --single or the built-in default study. Throws UsageError and StudyError.
std::vector<StudyRun> runs_to_run(RunArgs& ra, bool& several) {
  if (!ra.resume) {
    std::vector<StudyRun> runs = runs_of_args(ra);
    several = several_runs(runs);
    return runs;
  }
  Resumed r = read_resume_record(*ra.resume);
  several = r.several;
  ra.backend = r.backend;
  return std::move(r.runs);
}

// A single run's result on stdout as a study prints its runs': the same tables, one row
// named after its directory.
void print_single_table(const Study& study, const RunParams<double>& rp, const RunArgs& ra, const EnsembleResult& result,
                        std::ostream& out) {
  const fs::path dir = fs::path(ra.out).lexically_normal();
  std::string name = (dir.has_filename() ? dir.filename() : dir.parent_path().filename()).string();
  if (name.empty() || name == "." || name == "..") name = "run";
  out << comparison_table({run_digest(name, study, rp, result)}) << std::flush;
}

}  // namespace

int execute_run(const Study& study, const RunParams<double>& rp, const RunArgs& ra, const std::string& dir,
                std::ostream& err, EnsembleResult& result, const std::string& progress_label, const std::string& resume_json,
                bool lock_dir) {
  return SingleRun(study, rp, ra, dir, err, progress_label, resume_json).execute(result, lock_dir);
}

int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  RunArgs ra;
  std::vector<StudyRun> runs;
  bool several = false;
  const auto read = [&] {
    ra = parse_run_args(args, Command::run);
    runs = runs_to_run(ra, several);
  };
  if (const auto code = read_input("run", err, read, [&] { return default_study_hint(ra); })) return *code;
  return run_runs(runs, several, ra, out, err);
}

int run_runs(const std::vector<StudyRun>& runs, bool several, const RunArgs& ra, std::ostream& out, std::ostream& err) {
  // SIGINT, SIGTERM and SIGUSR1 stop the run with a checkpoint (not for a dry run).
  const InterruptGuard guard(!ra.dry_run);
  if (several) return run_several(runs, ra, out, err);
  const Study& study = runs[0].study;
  RunParams<double> rp;
  try {
    rp = resolve(study);
  } catch (const StudyError& e) {
    err << "chens run: " << e.what() << "\n";
    return exit_bad_input;
  }
  if (ra.dry_run) {
    out << "# chens " << CHENS_VERSION_STRING << ": resolved study (dry run, nothing written)\n";
    print_dry_run(study, rp, ra, out);
    return exit_ok;
  }
  std::string record;  // resume.json: resumed, the interrupted run's own
  if (ra.write_files) {
    if (ra.resume) {
      record = root_file_text((fs::path(ra.out) / resume_file_name).string()).value_or("");
    } else {
      record = resume_record(runs, {rp}, ra, false);
    }
  }
  EnsembleResult result;
  const int code = execute_run(study, rp, ra, ra.out, err, result, "", record);
  if ((code == exit_ok || code == exit_all_lost) && mpi_root() && ra.write_files)
    print_single_table(study, rp, ra, result, out);
  return code;
}

}  // namespace chens::cli
