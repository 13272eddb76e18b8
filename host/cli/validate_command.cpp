// chens validate: one run on the CPU and on the GPU, compared quantity by quantity against
// a tolerance that grows with the steps (docs/study-format.md, "chens validate").
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "backends/cuda_backend.hpp"
#include "cli/cli.hpp"
#include "cli/cli_internal.hpp"
#include "dispatch/run_study.hpp"
#include "mpi/mpi_runtime.hpp"
#include "output/number_text.hpp"

namespace chens::cli {
namespace {

// |a - b| relative to the larger of |a|, |b| and `scale`; differences up to atol count as 0
// (rounding noise of quantities that are themselves at rounding level, e.g. psi of the
// Dirac flow). Metrics are small differences of state-sized numbers (z - z_ref, H - H0),
// so their rounding differences scale with the state, not with themselves: statistics are
// judged relative to the size of the state (scale = max |z|).
double relative_difference(double a, double b, double atol, double scale) {
  const double d = std::fabs(a - b);
  if (d <= atol) return 0.0;
  if (!std::isfinite(d)) return std::isnan(a) && std::isnan(b) ? 0.0 : INFINITY;
  return d / std::max({std::fabs(a), std::fabs(b), scale});
}

std::string pair_text(double a, double b) {
  char buf[96];
  std::snprintf(buf, sizeof buf, ": CPU %.17g, GPU %.17g", a, b);
  return buf;
}

// The two backends' results, compared row by row on `out`; ok() after the last row.
class Comparison {
 public:
  Comparison(const EnsembleResult& cpu, const EnsembleResult& gpu, std::uint64_t n_states, double rtol, double atol,
             std::ostream& out)
      : cpu_(cpu), gpu_(gpu), n_states_(n_states), rtol_(rtol), atol_(atol), out_(out) {
    print("quantity", "largest rel.", "verdict", "where");
  }

  // Final states, norm-wise per instance: max_c |a_c - b_c| / max_c max(|a_c|, |b_c|).
  // Also finds the state's size max |z|, which the statistics are judged against.
  void final_states() {
    const std::vector<double>& a = cpu_.kept.final_state;
    const std::vector<double>& b = gpu_.kept.final_state;
    const std::size_t S = a.size() / std::max<std::uint64_t>(1, n_states_);
    double worst = 0;
    std::string where = "-";
    for (std::uint64_t i = 0; i < n_states_; ++i) {
      double diff = 0, size = 0;
      for (std::size_t c = 0; c < S; ++c) {
        const double x = a[i * S + c], y = b[i * S + c];
        if (std::isfinite(x)) state_size_ = std::max(state_size_, std::fabs(x));
        diff = std::max(diff, std::fabs(x - y));
        size = std::max({size, std::fabs(x), std::fabs(y)});
      }
      const double d = diff <= atol_ ? 0.0 : (std::isfinite(diff) ? diff / size : INFINITY);
      if (d > worst) {
        worst = d;
        char buf[96];
        std::snprintf(buf, sizeof buf, ": max |CPU - GPU| %.3g of max |z| %.3g", diff, size);
        where = "instance " + std::to_string(i) + buf;
      }
    }
    row("final states (" + std::to_string(n_states_) + ")", worst, where, rtol_);
  }

  // Every reported metric's mean, RMS, min and max at every sample time.
  void statistics() {
    for (int m = 0; m < metric_count; ++m) {
      if (!cpu_.metric_reported(m)) continue;
      double worst = 0;
      std::string where = "-";
      for (std::size_t k = 0; k < cpu_.series.size(); ++k) {
        const Accumulator &a = cpu_.series[k].metric[m], &b = gpu_.series[k].metric[m];
        if (a.count != b.count) {
          worst = INFINITY;
          where = "live counts differ at t = " + number_text(cpu_.series[k].t, "%.6g");
          break;
        }
        const double stats[4][2] = {{a.mean, b.mean}, {a.rms(), b.rms()}, {a.min, b.min}, {a.max, b.max}};
        const char* names[4] = {"mean", "rms", "min", "max"};
        for (int q = 0; q < 4; ++q) {
          const double d = relative_difference(stats[q][0], stats[q][1], atol_, state_size_);
          if (d > worst) {
            worst = d;
            where = std::string(names[q]) + " at t = " + number_text(cpu_.series[k].t, "%.6g") +
                    pair_text(stats[q][0], stats[q][1]);
          }
        }
      }
      row(metric_name(m), worst, where, rtol_);
    }
  }

  // Quantiles come from histogram bins of ratio 2^(1/8) (quantiles.hpp), each estimate
  // inside its exact value's bin: a value that an FMA moves across a bin edge can move a
  // quantile into the neighbouring bin, so they are judged against two bins, not rtol.
  void quantiles() {
    const double bin_tol = LogBins::step(2) - 1.0 + 1e-12;
    for (int m = 0; m < metric_count; ++m) {
      if (!cpu_.metric_reported(m)) continue;
      double worst = 0;
      std::string where = "-";
      for (std::size_t k = 0; k < cpu_.series.size(); ++k)
        for (int q = 0; q < quantile_count; ++q) {
          const double a = cpu_.series[k].quantile[m][q], b = gpu_.series[k].quantile[m][q];
          const double d = std::fabs(a - b) <= atol_ ? 0.0 : std::fabs(a - b) / std::min(std::fabs(a), std::fabs(b));
          if (d > worst || d != d) {
            worst = d != d ? INFINITY : d;
            where = std::string(quantile_name[q]) + " at t = " + number_text(cpu_.series[k].t, "%.6g") + pair_text(a, b);
          }
        }
      row(std::string(metric_name(m)) + " quantiles", worst, where, bin_tol);
    }
  }

  // Lost instances (must agree), steps and projections, and the verdict.
  void totals() {
    const bool same_lost = cpu_.lost_total() == gpu_.lost_total();
    ok_ = ok_ && same_lost;
    out_ << "lost instances: CPU " << cpu_.lost_total() << ", GPU " << gpu_.lost_total() << (same_lost ? "" : "  MISMATCH")
         << "\nsteps: CPU " << cpu_.totals.steps << ", GPU " << gpu_.totals.steps
         << "; projections (momentum, position): CPU " << cpu_.totals.momentum_projections << ", "
         << cpu_.totals.position_projections << ", GPU " << gpu_.totals.momentum_projections << ", "
         << gpu_.totals.position_projections << "\n"
         << (ok_ ? "chens validate: CPU and GPU agree within the tolerance\n"
                 : "chens validate: CPU and GPU differ beyond the tolerance\n");
  }

  bool ok() const { return ok_; }

 private:
  void print(const char* what, const char* worst, const char* verdict, const char* where) {
    char line[320];
    std::snprintf(line, sizeof line, "%-26s %12s  %-8s %s\n", what, worst, verdict, where);
    out_ << line;
  }

  void row(const std::string& what, double worst, const std::string& where, double tol) {
    const bool pass = worst <= tol;
    ok_ = ok_ && pass;
    char line[320];
    std::snprintf(line, sizeof line, "%-26s %12.3g  %-8s %s\n", what.c_str(), worst, pass ? "ok" : "MISMATCH",
                  where.c_str());
    out_ << line;
  }

  const EnsembleResult& cpu_;
  const EnsembleResult& gpu_;
  const std::uint64_t n_states_;
  const double rtol_, atol_;
  std::ostream& out_;
  double state_size_ = 0;  // max |z| over the compared instances' final states
  bool ok_ = true;
};

// The study of `chens validate`: one run, from the study file or every key's default.
std::optional<int> parse_validate(const std::vector<std::string>& args, std::ostream& err, RunArgs& ra, Study& study,
                                  RunParams<double>& rp) {
  const auto read = [&] {
    ra = parse_run_args(args, Command::validate);
    study = load_study(ra.study, ra.sets);
    rp = resolve(study);
  };
  return read_input("validate", err, read);
}

}  // namespace

int validate_study(const Study& study, const RunParams<double>& rp, const RunArgs& ra, std::ostream& out,
                   std::ostream& err) {
  if (mpi_world().active) {
    err << "chens validate: runs in one process; start it without mpirun\n";
    return exit_bad_input;
  }
  if (const std::string why = gpu_unusable_reason(study); !why.empty()) {
    err << "chens validate: cannot compare with the GPU: " << why << "\n";
    return exit_no_backend;
  }
  EnsembleSpec spec = ensemble_spec(study, ra.threads);
  spec.record.clear();  // validate compares statistics and states, writes nothing
  // Instance by instance: the first (at most 65536) instances' final states.
  const std::uint64_t n_states = std::min<std::uint64_t>(spec.size, 65536);
  spec.keep_instances = n_states;
  EnsembleResult cpu, gpu;
  try {
    cpu = run_study_cpu(study, rp, spec);
    gpu = run_study_cuda(study, rp, spec);
  } catch (const DeviceMemoryError& e) {
    err << "chens validate: " << e.what() << "\n";
    return exit_bad_input;
  } catch (const std::exception& e) {
    err << "chens validate: the run failed: " << e.what() << "\n";
    return exit_failure;
  }
  // Tolerance (docs/study-format.md, "chens validate"): nvcc contracts a*b + c into fused
  // multiply-adds and g++ on x86-64 does not, so the backends differ by rounding from the
  // first step on, and on the (non-chaotic) orbits of the papers' studies the difference
  // grows about linearly with the number of steps: measured on an H200, 4.6e-8 relative
  // after 40920 RK4 steps (1.1e-12 per step). The defaults allow 10x that growth, with a
  // floor; differences below atol (rounding noise of O(1) quantities over as many steps)
  // count as 0. Chaotic studies need an explicit --rtol. Float runs: float rounding
  // (1.2e-7) a few times per step, growing linearly; not yet measured on a device.
  const double steps = std::max(1.0, static_cast<double>(cpu.totals.steps) / static_cast<double>(spec.size));
  const bool single = study.precision == Precision::single_precision;
  const double rtol = ra.rtol >= 0 ? ra.rtol : single ? std::max(1e-4, 1e-6 * steps) : std::max(1e-8, 1e-11 * steps);
  const double atol = ra.atol >= 0 ? ra.atol : single ? std::max(1e-6, 1e-8 * steps) : std::max(1e-12, 1e-15 * steps);
  out << "chens validate: " << counted(spec.size, "instance", "instances") << " of " << formulation_name(study.formulation)
      << " + " << method_name(study.method) << " to t = " << rp.t_end << " (" << steps
      << " steps per instance)\n  GPU: " << gpu.device << " (" << gpu.wall_seconds << " s)\n  CPU: " << cpu.device << " ("
      << cpu.wall_seconds << " s)\n  tolerance: relative " << rtol
      << " (statistics: relative to the larger value or the state's size), "
      << "differences <= " << atol << " count as 0; quantiles: two histogram bins (18.9 %)\n\n";
  Comparison compare(cpu, gpu, n_states, rtol, atol, out);
  compare.final_states();
  compare.statistics();
  compare.quantiles();
  compare.totals();
  return compare.ok() ? exit_ok : exit_mismatch;
}

int validate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  RunArgs ra;
  Study study;
  RunParams<double> rp;
  if (const auto code = parse_validate(args, err, ra, study, rp)) return *code;
  return validate_study(study, rp, ra, out, err);
}

}  // namespace chens::cli
