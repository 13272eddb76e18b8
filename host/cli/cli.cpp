#include "cli/cli.hpp"

#include <unistd.h>

#include <exception>
#include <filesystem>
#include <optional>
#include <string>

#include <chens/version.hpp>

#include "dispatch/run_study.hpp"
#include "output/writer.hpp"
#include "study/study.hpp"

namespace chens {

namespace {

const char* usage_text =
    "usage: chens run [STUDY.toml] [--set SECTION.KEY=VALUE]... [--out DIR] [--backend auto|cpu|cuda]\n"
    "                 [--threads N] [--force] [--dry-run]\n"
    "       chens --version | --help\n"
    "\n"
    "  chens run integrates the ensemble a study describes and writes DIR/summary.json and\n"
    "  DIR/series.csv (and DIR/trajectory.csv with output.trajectory = true). Without a study\n"
    "  file it runs the built-in default study. Keys: docs/study-format.md.\n"
    "\n"
    "  --set SECTION.KEY=VALUE  override one key (VALUE is a TOML value; a bare word is a string)\n"
    "  --out DIR                output directory (default: chens-output)\n"
    "  --backend B              auto (default), cpu or cuda\n"
    "  --threads N              CPU threads (default: all)\n"
    "  --force                  replace the results of an earlier run in DIR\n"
    "  --dry-run                validate, print the resolved study as TOML, write nothing\n";

struct RunArgs {
  std::optional<std::string> study;
  std::vector<std::string> sets;
  std::string out = "chens-output";
  std::string backend = "auto";
  int threads = 0;
  bool force = false;
  bool dry_run = false;
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

RunArgs parse_run_args(const std::vector<std::string>& a) {
  RunArgs r;
  auto value = [&](std::size_t& i, const std::string& opt) -> std::string {
    const std::string& s = a[i];
    if (s.size() > opt.size() && s.compare(0, opt.size() + 1, opt + "=") == 0) return s.substr(opt.size() + 1);
    if (i + 1 >= a.size()) throw UsageError(opt + " needs a value");
    return a[++i];
  };
  auto is = [&](const std::string& s, const std::string& opt) {
    return s == opt || s.compare(0, opt.size() + 1, opt + "=") == 0;
  };
  for (std::size_t i = 1; i < a.size(); ++i) {
    const std::string& s = a[i];
    if (is(s, "--set")) {
      r.sets.push_back(value(i, "--set"));
    } else if (is(s, "--out")) {
      r.out = value(i, "--out");
      if (r.out.empty()) throw UsageError("--out needs a directory");
    } else if (is(s, "--backend")) {
      r.backend = value(i, "--backend");
      if (r.backend != "auto" && r.backend != "cpu" && r.backend != "cuda")
        throw UsageError("--backend " + r.backend + ": unknown backend; allowed: auto, cpu, cuda");
    } else if (is(s, "--threads")) {
      const std::string v = value(i, "--threads");
      std::size_t pos = 0;
      long n = -1;
      try {
        n = std::stol(v, &pos);
      } catch (const std::exception&) {
      }
      if (pos != v.size() || n < 1 || n > 4096) throw UsageError("--threads " + v + ": must be an integer in [1, 4096]");
      r.threads = static_cast<int>(n);
    } else if (s == "--force") {
      r.force = true;
    } else if (s == "--dry-run") {
      r.dry_run = true;
    } else if (!s.empty() && s[0] == '-') {
      throw UsageError("unknown option " + s);
    } else if (!r.study) {
      r.study = s;
    } else {
      throw UsageError("more than one study file given: " + *r.study + " and " + s);
    }
  }
  return r;
}

int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  RunArgs ra;
  Study study;
  RunParams<double> rp;
  try {
    ra = parse_run_args(args);
    study = load_study(ra.study, ra.sets);
    rp = resolve(study);
  } catch (const UsageError& e) {
    err << "chens run: " << e.what() << "\n" << usage_text;
    return exit_bad_input;
  } catch (const StudyError& e) {
    err << "chens run: " << e.what() << "\n";
    return exit_bad_input;
  }
  RunInfo info;
  info.backend_requested = ra.backend;
  if (ra.backend == "cuda") {
    err << "chens run: --backend cuda: this build has no CUDA ensemble backend yet (the GPU kernels are "
           "tracked in issue #4); use --backend cpu or auto\n";
    return exit_no_backend;
  }
  if (ra.backend == "auto") info.backend_note = "auto: no CUDA ensemble backend in this build; ran on the CPU";
  if (ra.dry_run) {
    out << "# chens " << CHENS_VERSION_STRING << ": resolved study (dry run, nothing written)\n"
        << "# steps per instance: " << (rp.fixed_step ? std::to_string(rp.total_steps) : std::string("adaptive"))
        << ", sample times: " << rp.samples + 1 << "\n"
        << to_toml(study, rp);
    return exit_ok;
  }
  try {
    check_output_dir(ra.out, ra.force);
  } catch (const std::exception& e) {
    err << "chens run: " << e.what() << "\n";
    return exit_bad_input;
  }
  // Instances live in memory for the whole run (at most bytes_per_instance each, checked at
  // compile time in the dispatch): refuse ensembles that cannot fit instead of being killed.
  {
    const double phys = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
    const double need = static_cast<double>(study.size) * static_cast<double>(bytes_per_instance(study));
    if (phys > 0 && need > 0.8 * phys) {
      err << "chens run: ensemble.size = " << study.size << " needs about " << need / 1e9 << " GB for its states, more than 80% of this machine's " << phys / 1e9
          << " GB; use a smaller ensemble\n";
      return exit_bad_input;
    }
  }
  EnsembleSpec spec;
  spec.size = static_cast<std::uint64_t>(study.size);
  spec.seed = study.seed;
  spec.perturbation = study.perturbation;
  spec.record_trajectory = study.trajectory;
  spec.threads = ra.threads;
  EnsembleResult result;
  try {
    result = run_study_cpu(study, rp, spec);
  } catch (const std::bad_alloc&) {
    err << "chens run: out of memory for ensemble.size = " << study.size << " instances; use a smaller ensemble\n";
    return exit_failure;
  } catch (const std::exception& e) {
    err << "chens run: the run failed: " << e.what() << "\n";
    return exit_failure;
  }
  try {
    write_outputs(ra.out, study, rp, result, info);
  } catch (const std::exception& e) {
    // Never lose a computed result: put it somewhere writable and say where.
    err << "chens run: could not write the results to " << ra.out << ": " << e.what() << "\n";
    const std::string rescue =
        (std::filesystem::temp_directory_path() / ("chens-rescue-" + std::to_string(::getpid()))).string();
    try {
      write_outputs(rescue, study, rp, result, info);
      err << "chens run: the results were saved to " << rescue << "/ instead\n";
    } catch (const std::exception& e2) {
      err << "chens run: saving them to " << rescue << " failed too: " << e2.what() << "\n";
    }
    return exit_failure;
  }
  out << "chens: " << result.instances << " instances of " << formulation_name(study.formulation) << " + "
      << method_name(study.method) << " to t = " << rp.t_end << " on " << result.device << " in " << result.wall_seconds
      << " s; lost " << result.lost_total() << "; results in " << ra.out << "/\n";
  return exit_ok;
}

}  // namespace

int cli_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() < 2 || args[1] == "--help" || args[1] == "-h" || args[1] == "help") {
    (args.size() < 2 ? err : out) << usage_text;
    return args.size() < 2 ? exit_bad_input : exit_ok;
  }
  if (args[1] == "--version") {
    out << "chens " << CHENS_VERSION_STRING << "\n";
    return exit_ok;
  }
  if (args[1] == "run") {
    for (std::size_t i = 2; i < args.size(); ++i)
      if (args[i] == "--help" || args[i] == "-h") {
        out << usage_text;
        return exit_ok;
      }
    std::vector<std::string> rest(args.begin() + 1, args.end());
    return run_command(rest, out, err);
  }
  err << "chens: unknown command '" << args[1] << "'\n" << usage_text;
  return exit_bad_input;
}

}  // namespace chens
