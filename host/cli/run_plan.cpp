// What `chens run` and `chens check` decide alike before a run starts: which runs, on which
// backend, whether this machine can take them, and the output directory's lock and --force.
// One function per rule, so that a study `check` passes is not refused by `run`.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "backends/cuda_backend.hpp"
#include "cli/cli.hpp"
#include "cli/cli_internal.hpp"
#include "dispatch/jit_systems.hpp"
#include "dispatch/run_study.hpp"
#include "mpi/mpi_runtime.hpp"
#include "output/number_text.hpp"
#include "study/default_study.hpp"

namespace chens::cli {

std::vector<StudyRun> runs_of_args(const RunArgs& ra) {
  if (ra.study || ra.single) return load_runs(ra.study, ra.sets);
  return load_default_runs(ra.sets);
}

std::vector<RunParams<double>> resolve_runs(const std::vector<StudyRun>& runs, bool stop_on_signal) {
  std::vector<RunParams<double>> rps;
  for (const StudyRun& r : runs) {
    // A signal while thousands of runs resolve: the caller stops before the first run.
    if (stop_on_signal && interrupt_signal_received() != 0) break;
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

std::optional<int> choose_backend(const Study& study, const RunArgs& ra, std::ostream& err, RunInfo& info,
                                  BackendId& backend, const std::string& run) {
  info.backend_requested = ra.backend;
  // auto: the GPU where one is usable and has kernels for the study, else the CPU, and
  // summary.json says why; cuda: the GPU or a clear refusal (exit 3).
  backend = BackendId::cpu;
  if (ra.backend == "cpu") return std::nullopt;
  std::string why = gpu_unusable_reason(study);
  // A system the GPU would compile on first use (docs/jit.md) runs there when asked for
  // (--backend cuda); auto keeps it on the CPU until the GPU's first-use compiles have been
  // checked on a device against the CPU (tests/gpu: JitOnTheGpu; docs/performance.md).
  if (why.empty() && ra.backend == "auto" && runs_compiled_on_first_use(study, BackendId::cuda))
    why = "the GPU would compile this system on first use, which it does only when asked (--backend cuda)";
  if (why.empty()) {
    backend = BackendId::cuda;
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
  BackendId backend = BackendId::cpu;
  std::ostringstream ignored;
  choose_backend(study, ra, ignored, info, backend);
  // The note summary.json keeps says what a run did; nothing has run here.
  std::string note = info.backend_note;
  if (const auto at = note.find("ran on the"); at != std::string::npos) note.replace(at, 3, "would run");
  out << "# backend: " << backend_name(backend) << (note.empty() ? "" : " (" + note + ")") << "\n";
  {
    const FirstUseCompile c = first_use_compile(study, backend);
    if (c != FirstUseCompile::none)
      out << "# system: " << first_use_label(study, backend) << ", compiled on first use: "
          << (c == FirstUseCompile::cached ? "cached in " + jit_cache_dir()
                                           : "not cached; chens run compiles it first (seconds to a minute)")
          << "\n";
  }
  out << "# steps per instance: "
      << (!rp.fixed_step ? std::string("adaptive")
          : study.law(ParameterId::h).varies()
              ? "each instance's own (parameters.h; " + std::to_string(rp.total_steps) + " with integrator.h)"
              : std::to_string(rp.total_steps))
      << ", sample times: " << rp.samples + 1 << "\n"
      << to_toml(study, rp);
}

namespace {

// Text of one double as a CSV or JSON file writes it (%.17g and its separator), a line's worth
// of them per sample time.
constexpr double bytes_per_number_text = 24;

}  // namespace

std::string RunMemory::text() const {
  const auto gb = [](double b) { return number_text(b / 1e9) + " GB"; };
  std::string out = "about " + gb(total());
  std::string parts;
  const auto part = [&](double b, const char* what) {
    if (b >= 1e6) parts += (parts.empty() ? "" : ", ") + gb(b) + " " + what;
  };
  part(instances, "for the instances");
  part(statistics, "for the statistics of every sample time");
  part(records, "for the recorded trajectories");
  part(files, "for the result files");
  return parts.empty() ? out : out + " (" + parts + ")";
}

RunMemory run_memory(const Study& s, const RunParams<double>& rp, BackendId backend) {
  RunMemory m;
  const double n = static_cast<double>(s.only.empty() ? s.size : static_cast<std::int64_t>(s.only.size()));
  const double K = static_cast<double>(rp.samples + 1);  // sample times
  const double sets = 1 + static_cast<double>(parameter_ensemble(s).groups());
  // Instances live in memory for the whole run (at most bytes_per_instance each, checked at
  // compile time in the dispatch); on the GPU they are the device's, which the backend
  // compares with its free memory before launch, and the host holds the kept ones.
  m.instances = backend == BackendId::cuda ? 0 : n * static_cast<double>(bytes_per_instance(s));
  // The statistics of every sample time (SampleStats), each set's, twice while a checkpoint
  // is taken (checkpoint_of copies them); the first-passage tallies, an integer per slot.
  m.statistics =
      2 * K * sets * (static_cast<double>(sizeof(SampleStats)) + (s.first_passage_on() ? passage_slots * 8.0 : 0.0));
  // Recorded trajectories: t, the state (and reference), the metrics and a flag per sample
  // time and instance; held in the result, copied by a checkpoint and into states.h5's image.
  const double R = static_cast<double>(recorded_instances(s).size());
  const double S = physical_state_size(s);
  const double row = S * (reference_on(s) ? 2 : 1);
  m.records = R > 0 ? 3 * K * (8 + R * (8 * (row + metric_count) + 1)) : 0;
  // series.csv: per sample time and set, t, live and eight statistics of each metric (and the
  // surviving fractions) as text; trajectory.csv: instance 0's row. A text is built in a
  // string stream and copied out of it, and all of a run's files are held until written.
  const double columns = 2 + 8.0 * metric_count + (s.first_passage_on() ? passage_slots : 0);
  m.files = 2 * K * sets * columns * bytes_per_number_text;
  if (s.trajectory) m.files += 2 * K * (1 + row) * bytes_per_number_text;
  m.base = 64e6;  // the executable, its libraries, the threads' stacks and buffers
  return m;
}

double usable_memory_bytes() {
  if (const char* v = std::getenv("CHENS_MEMORY_BYTES")) {
    char* end = nullptr;
    const double b = std::strtod(v, &end);
    if (end != v && *end == '\0' && b > 0) return b;
  }
  double phys = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  // A container's or batch job's limit (cgroup v2, then v1): "max" or a huge value means none.
  for (const char* f : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(f);
    double limit = 0;
    if (in >> limit && limit > 0 && limit < phys) phys = limit;
  }
  return phys;
}

std::string run_refusal(const Study& study, const RunParams<double>& rp, BackendId backend) {
  // Everything a run holds in memory, counted before it starts: refuse what cannot fit
  // instead of being killed after hours (or swapping the machine to a halt).
  const RunMemory m = run_memory(study, rp, backend);
  const double usable = usable_memory_bytes();
  if (usable > 0 && m.total() > 0.8 * usable)
    return "the run needs " + m.text() + ", more than 80% of the " + number_text(usable / 1e9) +
           " GB chens may use here (docs/study-format.md, \"Memory\"); use a smaller ensemble, fewer sample times "
           "(output.sample_dt) or fewer recorded instances";
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

void check_writable_dir(const std::string& dir) {
  // Created and removed again, as the results will be: a directory a run cannot write into
  // is refused (exit 2) before anything is computed, not found out once the results exist.
  const std::string probe =
      (std::filesystem::path(dir) / (".chens-partial-" + std::to_string(::getpid()) + "-probe")).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("--out " + dir + ": cannot write there (" + std::strerror(errno) + ")");
  ::close(fd);
  ::unlink(probe.c_str());
}

void remove_earlier_results_noting_kept(const std::string& dir, std::ostream& err) {
  // What the replaced run or study wrote (its run directories, plots/, a checkpoint, files
  // the new one does not write) must not outlive it next to the new results.
  const std::vector<std::string> left = remove_earlier_results(dir);
  if (left.empty()) return;
  // Every one of them, at any depth: a user must not have to guess what stayed.
  std::string names;
  for (const std::string& n : left) names += (names.empty() ? "" : ", ") + n;
  err << "chens run: --force: kept in " << dir << " what chens did not write there (" << left.size()
      << (left.back() == "..." ? " and more" : "") << "): " << names << "\n";
}

}  // namespace chens::cli
