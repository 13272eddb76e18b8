// What `chens run` and `chens check` decide alike before a run starts: which runs, on which
// backend, whether this machine can take them, and the output directory's lock and --force.
// One function per rule, so that a study `check` passes is not refused by `run`.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "backends/cuda_backend.hpp"
#include "cli/cli.hpp"
#include "cli/cli_internal.hpp"
#include "dispatch/run_study.hpp"
#include "mpi/mpi_runtime.hpp"
#include "output/number_text.hpp"
#include "study/default_study.hpp"

namespace chens::cli {

std::vector<StudyRun> runs_of_args(const RunArgs& ra) {
  if (ra.study || ra.single) return load_runs(ra.study, ra.sets);
  return load_default_runs(ra.sets);
}

std::vector<RunParams<double>> resolve_runs(const std::vector<StudyRun>& runs) {
  std::vector<RunParams<double>> rps;
  for (const StudyRun& r : runs) {
    try {
      rps.push_back(resolve(r.study));
    } catch (const StudyError& e) {
      throw StudyError(r.name.empty() ? std::string(e.what()) : "run \"" + r.name + "\": " + e.what());
    }
  }
  return rps;
}

// The user may have meant one run from the defaults (before issue 17, --set alone meant
// that), so the message says how.
std::string default_study_hint(const RunArgs& ra) {
  if (ra.study || ra.single || ra.resume || ra.sets.empty()) return "";
  return std::string("\n  (without a study file --set changes every run of the built-in default study, ") +
         "examples/default_study.toml; --single runs one study from the defaults of every key instead)";
}

std::string study_source(const RunArgs& ra) {
  if (ra.study) return *ra.study;
  return ra.single ? "" : builtin_default_study_name;
}

std::optional<int> choose_backend(const Study& study, const RunArgs& ra, std::ostream& err, RunInfo& info, bool& gpu,
                                  const std::string& run) {
  info.backend_requested = ra.backend;
  // auto: the GPU where one is usable and has kernels for the study, else the CPU, and
  // summary.json says why; cuda: the GPU or a clear refusal (exit 3).
  gpu = false;
  if (ra.backend == "cpu") return std::nullopt;
  const std::string why = gpu_unusable_reason(study);
  if (why.empty()) {
    gpu = true;
    cuda_initialize();  // before the run's clock starts (cuda_backend.hpp)
    if (ra.backend == "auto") info.backend_note = "auto: ran on the GPU, " + cuda_device_info().description;
  } else if (ra.backend == "cuda") {
    err << "chens run: " << (run.empty() ? "" : "run \"" + run + "\": ") << "--backend cuda: " << why
        << "; use --backend cpu or auto\n";
    return exit_no_backend;
  } else {
    info.backend_note = "auto: " + why + "; ran on the CPU";
  }
  return std::nullopt;
}

void print_dry_run(const Study& study, const RunParams<double>& rp, const RunArgs& ra, std::ostream& out) {
  RunInfo info;
  bool gpu = false;
  std::ostringstream ignored;
  choose_backend(study, ra, ignored, info, gpu);
  out << "# backend: " << (gpu ? "cuda" : "cpu") << (info.backend_note.empty() ? "" : " (" + info.backend_note + ")")
      << "\n# steps per instance: "
      << (!rp.fixed_step                 ? std::string("adaptive")
          : study.law(ParameterId::h).varies() ? "each instance's own (parameters.h; " + std::to_string(rp.total_steps) +
                                                     " with integrator.h)"
                                         : std::to_string(rp.total_steps))
      << ", sample times: " << rp.samples + 1 << "\n"
      << to_toml(study, rp);
}

std::string run_refusal(const Study& study, bool gpu) {
  // Instances live in memory for the whole run (at most bytes_per_instance each, checked at
  // compile time in the dispatch): refuse ensembles that cannot fit instead of being killed.
  // (On the GPU the backend compares with the device's free memory before launch.)
  if (!gpu) {
    const double phys = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
    const double need = static_cast<double>(study.size) * static_cast<double>(bytes_per_instance(study));
    if (phys > 0 && need > 0.8 * phys)
      return "ensemble.size = " + std::to_string(study.size) + " needs about " + number_text(need / 1e9) +
             " GB for its states, more than 80% of this machine's " + number_text(phys / 1e9) + " GB; use a smaller ensemble";
  }
  if (mpi_world().active && !study.only.empty())
    return "ensemble.only runs a handful of instances alone: not under mpirun (run it as one process)";
  if (mpi_world().active) {
    // Every rank needs at least one block of cpu_block_size instances (docs/scaling.md).
    const std::uint64_t blocks = (static_cast<std::uint64_t>(study.size) + cpu_block_size - 1) / cpu_block_size;
    if (blocks < static_cast<std::uint64_t>(mpi_world().size))
      return "ensemble.size = " + std::to_string(study.size) + " is " + std::to_string(blocks) + " block(s) of " +
             std::to_string(cpu_block_size) + " instances, fewer than the " + std::to_string(mpi_world().size) +
             " MPI ranks; use at least " + std::to_string(cpu_block_size) + " instances per rank or fewer ranks";
  }
  return "";
}

std::optional<int> lock_output_dir(const std::string& dir, std::ostream& err, std::optional<OutputLock>& lock) {
  // Before anything in dir is read, written or removed. Under mpirun rank 0, the only rank
  // that writes, holds it.
  if (!mpi_root()) return std::nullopt;
  try {
    lock.emplace(dir);
  } catch (const std::exception& e) {
    err << "chens run: " << e.what() << "\n";
    // The other ranks cannot be told (no broadcast here): leaving without MPI_Finalize
    // makes mpirun end the job.
    if (mpi_world().active) std::exit(exit_bad_input);
    return exit_bad_input;
  }
  if (!lock->note().empty()) err << "chens run: " << lock->note() << "\n";
  return std::nullopt;
}

void remove_earlier_results_noting_kept(const std::string& dir, std::ostream& err) {
  // What the replaced run or study wrote (its run directories, plots/, a checkpoint, files
  // the new one does not write) must not outlive it next to the new results.
  const std::vector<std::string> left = remove_earlier_results(dir);
  if (left.empty()) return;
  std::string names;
  for (const std::string& n : left) names += (names.empty() ? "" : ", ") + n;
  err << "chens run: --force: kept in " << dir << " what chens did not write there: " << names << "\n";
}

}  // namespace chens::cli
