// Growth exponents of the error statistics (001 §6, 002 §6: "linear / quadratic / cubic
// growth"): the least-squares slope p of log v against log t, v ~ t^p, over a window of
// sample times. The errors oscillate with the motion, and a stated growth rate describes
// their envelope, so v is the running maximum of the statistic from the first sample on.
// Points are weighted by their share of the log-time axis (each sample by half the
// log-distance to its neighbours), so that the many late samples of a uniform time grid do
// not dominate the fit. scripts/growth_exponents.py and tests/papers fit the same way.
//
// A slope is a statement about the method only where the errors are neither rounding
// (their slope is that of accumulated round-off, noise for the question asked) nor
// saturated (errors of the size of the state stop growing as a power: a phase error wraps
// around the orbit, a diverged run reaches 1e14). assess_growth() withholds the exponent
// there, with the reason; docs/study-format.md ("Growth exponents") gives the thresholds.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "backends/ensemble_result.hpp"
#include "study/study.hpp"

namespace chens {

struct GrowthFit {
  double exponent = 0;  // p in v ~ t^p
  int points = 0;       // samples in the window with t > 0 and v > 0
};

// The fit over t0 <= t <= t1 of the running maximum of v (samples in time order); no value
// when fewer than 3 samples in the window are positive.
std::optional<GrowthFit> growth_exponent(const std::vector<double>& t, const std::vector<double>& v, double t0, double t1);

// Where the errors of a run stop saying anything about its method's error growth.
struct GrowthLimits {
  double rounding = 0;    // the running maximum at t1 at or below this: rounding level
  double saturation = 0;  // at or above this: saturated
};
// 1000 ulps of the state: round-off of ~1e6 steps accumulated as a random walk (sqrt(N)
// eps) stays below it, so an error there may be nothing but round-off.
inline constexpr double rounding_ulps = 1000;
// Half the size of the state: a phase error e = 2 R sin(theta / 2) of an orbit of radius R
// has local log-slope p (theta / 2) cot(theta / 2), 2 % short of p at e = R / 2 and falling
// to 0 as e approaches 2R; errors beyond it are no longer small.
inline constexpr double saturation_fraction = 0.5;
// epsilon: machine epsilon of the integration's precision (float runs are rounded in
// float); state_size: the largest |component| of the initial physical state, at least 1.
GrowthLimits growth_limits(double epsilon, double state_size);
// The limits of a study: integrator.precision and initial_state(s).
GrowthLimits growth_limits(const Study& s);

// A growth exponent, or none with the reason (exponent empty, reason non-empty).
struct GrowthVerdict {
  std::optional<double> exponent;
  int points = 0;      // samples in the fit (0 when none was made)
  double largest = 0;  // the running maximum at the end of the window
  std::string reason;  // why there is no exponent; empty when there is one
};

// The fit of growth_exponent(), withheld when the running maximum at t1 is at rounding
// level or saturated; when the growth stops within the window (the slope over its second
// half in log t below half that over its first, which is at least 0.5: an error that hits
// the size of its orbit, whatever that size); and when the last sample in the window has
// no value (no live instance: the running maximum would only hold still). Non-finite values
// are samples without live instances, skipped.
GrowthVerdict assess_growth(const std::vector<double>& t, const std::vector<double>& v, double t0, double t1,
                            const GrowthLimits& limits);

// summary.json's growth_exponents: window [t_final / 10, t_final], the limits, and per
// reported metric the exponents of its ensemble maximum and median (max, p50: number or
// null), points, and max_reason / p50_reason where the exponent is null.
nlohmann::json growth_summary(const EnsembleResult& r, const Study& s);

}  // namespace chens
