// chens run on a study of several runs ([sweep], [[run]], the built-in default study): each
// run into DIR/<run>/ (SingleRun), with DIR/study.json (the index, rewritten after every run:
// complete, failed or pending) and DIR/comparison.csv plus a table on stdout at the end.
#include <climits>
#include <csignal>
#include <filesystem>

#include <nlohmann/json.hpp>

#include <chens/version.hpp>

#include "cli/cli.hpp"
#include "cli/cli_internal.hpp"
#include "mpi/mpi_runtime.hpp"
#include "output/series_long.hpp"
#include "output/study_index.hpp"

namespace chens::cli {
namespace {

namespace fs = std::filesystem;

class SeveralRuns {
 public:
  SeveralRuns(const std::vector<StudyRun>& runs, const RunArgs& ra, std::ostream& out, std::ostream& err)
      : runs_(runs), ra_(ra), out_(out), err_(err), dir_(ra.out) {}

  // Every run is resolved, and every run's backend chosen, before the first one starts.
  int execute() {
    // The study's size first: resolving thousands of runs takes a moment.
    if (!ra_.dry_run) err_ << "chens: a study of " << runs_.size() << " run" << (runs_.size() == 1 ? "" : "s") << "\n";
    try {
      rps_ = resolve_runs(runs_, true);
      check_run_paths();
    } catch (const StudyError& e) {
      err_ << "chens run: " << e.what() << default_study_hint(ra_) << "\n";
      return exit_bad_input;
    }
    if (const int sig = interrupt_signal_received()) {  // while the runs were resolved: nothing is written yet
      err_ << "chens run: interrupted (" << interrupt_signal_name(sig)
           << ") before the first run started; nothing was written\n";
      return interrupted_exit_code(sig);
    }
    if (ra_.dry_run) {
      print_dry_runs();
      return exit_ok;
    }
    // --backend cuda without a usable GPU (or kernels for a run): refused before anything
    // is written, as for a single run.
    for (const StudyRun& r : runs_) {
      RunInfo info;
      BackendId backend = BackendId::cpu;
      if (const auto code = choose_backend(r.study, ra_, err_, info, backend, r.name)) return *code;
    }
    // The study's lock for the whole study (its runs take none of their own); in memory
    // (RunArgs::write_files false) neither a lock nor an index.
    if (ra_.write_files) {
      if (const auto code = lock_output_dir(ra_.out, err_, lock_)) return *code;
      if (const auto code = ra_.resume ? reopen_index() : start_index()) return *code;
    } else {
      index_["runs"] = nlohmann::json::array();
      for (std::size_t i = 0; i < runs_.size(); ++i) index_["runs"].push_back(nlohmann::json::object());
    }
    try {
      save_index();
      if (const auto code = run_each()) return *code;
      finish();
    } catch (const std::exception& e) {
      report_index_failure(e);
      return exit_failure;
    }
    if (!all_lost_.empty()) {
      err_ << "chens run: " << all_lost_.size() << " of " << runs_.size() << " runs lost every instance (no statistics at "
           << "t_final): ";
      for (std::size_t q = 0; q < all_lost_.size(); ++q) err_ << (q ? ", " : "") << '"' << all_lost_[q] << '"';
      err_ << "; exit code " << exit_all_lost << "\n";
      return exit_all_lost;
    }
    return exit_ok;
  }

  // Each run is a directory DIR/<run>/ with files of chens's in it (the longest a temporary
  // .chens-partial-<pid>/periodogram.csv): a path the system cannot take would stop the study
  // at that run, after the runs before it. The names themselves are checked when the study is
  // read (study_files.cpp).
  void check_run_paths() const {
    const std::size_t longest_inside = std::string("/.chens-partial-4294967295/periodogram.csv").size();
    const std::size_t dir = fs::absolute(dir_).string().size();
    for (const StudyRun& r : runs_)
      if (dir + 1 + r.name.size() + longest_inside >= PATH_MAX)
        throw StudyError("run \"" + r.name.substr(0, 60) + (r.name.size() > 60 ? "...\"" : "\"") +
                         ": the path of its files in " + ra_.out + " would be longer than the " + std::to_string(PATH_MAX) +
                         " bytes a path may have; choose a shorter --out or shorter run names");
  }

 private:
  void print_dry_runs() const {
    out_ << "# chens " << CHENS_VERSION_STRING << ": " << runs_.size() << " runs (dry run, nothing written)\n";
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      out_ << "\n# ---- run \"" << runs_[i].name << "\" -> " << (dir_ / runs_[i].name).string() << "/\n";
      print_dry_run(runs_[i].study, rps_[i], ra_, out_);
    }
  }

  // --resume: the interrupted study's index; complete runs stay as they are, the others run
  // again from their checkpoints.
  std::optional<int> reopen_index() {
    try {
      // Rank 0's, under mpirun: it alone writes DIR.
      const std::optional<std::string> text = root_file_text((dir_ / "study.json").string());
      if (!text) throw std::runtime_error("it cannot be read");
      index_ = nlohmann::json::parse(*text);
      bool same = index_.at("runs").size() == runs_.size();
      for (std::size_t i = 0; same && i < runs_.size(); ++i) same = index_["runs"][i].at("name") == runs_[i].name;
      if (!same) throw std::runtime_error("its runs are not those of resume.json");
    } catch (const std::exception& e) {
      err_ << "chens run: --resume " << ra_.out << ": study.json cannot be used: " << e.what() << "\n";
      return exit_bad_input;
    }
    return std::nullopt;
  }

  // A new study: DIR checked (and with --force cleared), resume.json written, every run
  // pending in a new index.
  std::optional<int> start_index() {
    std::error_code ec;
    if (!ra_.force && fs::exists(dir_ / "study.json", ec)) {
      err_ << "chens run: --out " << ra_.out << ": holds study.json of an earlier study"
           << (fs::exists(dir_ / resume_file_name, ec)
                   ? " that was interrupted; continue it with chens run --resume " + ra_.out + ", "
                   : "; ")
           << "choose another directory or pass --force to replace it\n";
      return exit_bad_input;
    }
    try {
      if (ra_.force && mpi_root()) remove_earlier_results_noting_kept(ra_.out, err_);
      check_output_dir(ra_.out, ra_.force);  // a single run's results are not mixed with a study's
      for (const StudyRun& r : runs_) check_output_dir((dir_ / r.name).string(), ra_.force);
      fs::create_directories(dir_);
      if (mpi_root()) check_writable_dir(ra_.out);
    } catch (const std::exception& e) {
      err_ << "chens run: " << e.what() << "\n";
      return exit_bad_input;
    }
    mpi_barrier();  // every rank has checked DIR before rank 0 writes resume.json and study.json
    bool written = true;
    try {
      if (mpi_root()) write_file_atomically((dir_ / resume_file_name).string(), resume_record(runs_, rps_, ra_, true));
    } catch (const std::exception& e) {  // a full disk: nothing computed yet, nothing lost
      err_ << "chens run: " << e.what() << "\n";
      written = false;
    }
    if (!mpi_all(written)) return exit_failure;  // every rank stops
    index_["chens_version"] = CHENS_VERSION_STRING;
    index_["study_file"] = study_source(ra_);
    index_["set"] = ra_.sets;  // the --set overrides, applied to every run after its own
    index_["complete"] = false;
    index_["runs"] = nlohmann::json::array();
    for (const StudyRun& r : runs_) {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& [k, v] : r.overrides) o[k] = v;
      index_["runs"].push_back({{"name", r.name}, {"directory", r.name}, {"overrides", o}, {"status", "pending"}});
    }
    return std::nullopt;
  }

  // Rank 0 keeps the index; every rank runs every run (its shard).
  void save_index() const {
    if (mpi_root() && ra_.write_files) write_file_atomically((dir_ / "study.json").string(), index_.dump(2) + "\n");
  }

  // The runs in order; the exit code of the first that fails or is interrupted.
  std::optional<int> run_each() {
    const std::size_t n = runs_.size();
    for (std::size_t i = 0; i < n; ++i) {
      nlohmann::json& entry = index_["runs"][i];
      if (ra_.resume && entry.value("status", "") == "complete" && entry.contains("results")) {
        err_ << "chens: run " << i + 1 << " of " << n << ": " << runs_[i].name << " (complete)\n";
        digests_.push_back(entry["results"]);
        if (entry["results"].value("live_final", std::uint64_t{1}) == 0) all_lost_.push_back(runs_[i].name);
        continue;
      }
      // A signal between runs: a run too short to reach a stop point of its own (one
      // segment) never asks, and a study of many such runs went on for minutes after Ctrl-C.
      if (const int sig = interrupt_signal_received()) {
        err_ << "chens run: interrupted (" << interrupt_signal_name(sig) << ") before run " << i + 1 << " of " << n
             << (!ra_.write_files ? "; the study was in memory: nothing was saved"
                                  : (i > 0 ? "; the runs before it are complete in " + ra_.out + "/" : std::string()) +
                                        "; continue with: chens run --resume " + ra_.out)
             << "\n";
        return interrupted_exit_code(sig);
      }
      err_ << "chens: run " << i + 1 << " of " << n << ": " << runs_[i].name << "\n";
      // "running" stays in study.json if the process dies: the run is marked incomplete.
      entry["status"] = "running";
      save_index();
      EnsembleResult result;
      const std::string label = "run " + std::to_string(i + 1) + " of " + std::to_string(n) + " (" + runs_[i].name + "): ";
      const int code =
          execute_run(runs_[i].study, rps_[i], ra_, (dir_ / runs_[i].name).string(), err_, result, label, "", false);
      // A run that lost every instance is complete (its files are written); the study goes
      // on and says so at the end.
      if (code == exit_all_lost) all_lost_.push_back(runs_[i].name);
      if (interrupted_exit(code)) {
        entry["status"] = "interrupted";
        save_index();
        return code;
      }
      if (code != exit_ok && code != exit_all_lost) {
        entry["status"] = "failed";
        entry["exit_code"] = code;
        save_index();
        err_ << "chens run: run \"" << runs_[i].name << "\" failed; the runs before it are complete in " << ra_.out
             << "/ (study.json says which)\n";
        return code;
      }
      digests_.push_back(run_digest(runs_[i].name, runs_[i].study, rps_[i], result, runs_[i].overrides));
      entry["status"] = "complete";
      entry["results"] = digests_.back();
      save_index();
    }
    return std::nullopt;
  }

  // The study's tables stand only next to a study.json marked complete: on a failure none
  // stays (--resume writes them all).
  void finish() {
    const std::string table = comparison_table(digests_);
    const std::string csv = comparison_csv(digests_);
    if (ra_.on_comparison) ra_.on_comparison(csv);
    if (!ra_.write_files) {
      out_ << table << std::flush;
      return;
    }
    std::error_code ec;
    try {
      if (mpi_root()) {
        write_file_atomically((dir_ / "comparison.csv").string(), csv);
        write_file_atomically((dir_ / "series_long.csv").string(), series_long_csv(dir_.string(), index_));
      }
      index_["complete"] = true;
      save_index();
    } catch (...) {
      for (const char* f : {"comparison.csv", "series_long.csv"}) fs::remove(dir_ / f, ec);
      throw;
    }
    fs::remove(dir_ / resume_file_name, ec);
    // The tables are the result (stdout); where the files are is status (stderr).
    out_ << table << std::flush;
    err_ << "chens: results in " << ra_.out << "/ (study.json, comparison.csv, series_long.csv, one directory per run)\n";
  }

  void report_index_failure(const std::exception& e) const {
    err_ << "chens run: could not write the study index in " << ra_.out << ": " << e.what() << "\n";
    std::error_code ec;
    if (!fs::exists(dir_ / "study.json", ec)) {
      fs::remove(dir_ / resume_file_name, ec);  // no run has started: nothing to resume
    } else {
      err_ << "chens run: the runs that study.json marks complete are in " << ra_.out
           << "/; make room, then chens run --resume " << ra_.out << " finishes the study\n";
    }
  }

  const std::vector<StudyRun>& runs_;
  const RunArgs& ra_;
  std::ostream& out_;
  std::ostream& err_;
  const fs::path dir_;
  std::vector<RunParams<double>> rps_;
  std::optional<OutputLock> lock_;
  nlohmann::json index_;
  std::vector<nlohmann::json> digests_;
  std::vector<std::string> all_lost_;  // the runs that lost every instance
};

}  // namespace

int run_several(const std::vector<StudyRun>& runs, const RunArgs& ra, std::ostream& out, std::ostream& err) {
  return SeveralRuns(runs, ra, out, err).execute();
}

}  // namespace chens::cli
