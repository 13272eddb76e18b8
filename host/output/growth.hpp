// Growth exponents of the error statistics (001 §6, 002 §6: "linear / quadratic / cubic
// growth"): the least-squares slope p of log v against log t, v ~ t^p, over a window of
// sample times. The errors oscillate with the motion, and a stated growth rate describes
// their envelope, so v is the running maximum of the statistic from the first sample on.
// Points are weighted by their share of the log-time axis (each sample by half the
// log-distance to its neighbours), so that the many late samples of a uniform time grid do
// not dominate the fit. scripts/growth_exponents.py and tests/papers fit the same way.
#pragma once

#include <optional>
#include <vector>

namespace chens {

struct GrowthFit {
  double exponent = 0;  // p in v ~ t^p
  int points = 0;       // samples in the window with t > 0 and v > 0
};

// The fit over t0 <= t <= t1 of the running maximum of v (samples in time order); no value
// when fewer than 3 samples in the window are positive.
std::optional<GrowthFit> growth_exponent(const std::vector<double>& t, const std::vector<double>& v, double t0,
                                         double t1);

}  // namespace chens
