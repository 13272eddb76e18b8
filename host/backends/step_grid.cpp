#include "backends/step_grid.hpp"

#include <algorithm>
#include <cmath>

namespace chens {

double on_sample_grid(double h, double grid) { return grid > 0 ? grid / std::max(1.0, std::round(grid / h)) : h; }

bool fixed_step_grid(RunParams<double>& rp, double h, double sample_dt) {
  constexpr double rel = 1e-9;
  const double n = rp.t_end / h;
  const double nr = std::round(n);
  rp.h = h;
  rp.total_steps = static_cast<index_t>(std::fabs(n - nr) <= rel * std::max(1.0, n) ? nr : std::ceil(n));
  rp.last_h = rp.total_steps > 0 ? rp.t_end - static_cast<double>(rp.total_steps - 1) * h : h;
  if (sample_dt > 0) {
    const double m = sample_dt / h;
    const double mr = std::round(m);
    if (mr < 1 || std::fabs(m - mr) > rel * std::max(1.0, m)) return false;
    rp.steps_per_sample = static_cast<index_t>(mr);
  } else {
    // About 100 samples over the run, on the step grid.
    rp.steps_per_sample =
        std::max<index_t>(1, static_cast<index_t>(std::llround(static_cast<double>(rp.total_steps) / 100.0)));
  }
  rp.sample_dt = static_cast<double>(rp.steps_per_sample) * h;
  rp.samples = rp.total_steps == 0 ? 0 : (rp.total_steps + rp.steps_per_sample - 1) / rp.steps_per_sample;
  return true;
}

RunParams<double> with_step_size(const RunParams<double>& rp, double h, double sample_dt) {
  RunParams<double> out = rp;
  if (!rp.fixed_step) {
    out.h = h;
    return out;
  }
  fixed_step_grid(out, h, sample_dt);
  return out;
}

}  // namespace chens
