// The integration's cost per instance-step, sampled where the CPU backend times its blocks
// (cpu_engine.hpp: a lane group's or an instance's steps into one sample row, on every
// timing_stride-th block), kept as a histogram so that the cost comparison of a study can
// use its median: a run's cold start (thread creation, first touches of its memory) and the
// moments another process takes a core fall in a few samples, which move a total but not the
// median. The quartiles give the median's uncertainty (StepCost::notch), so a table can say
// when two runs' costs are within the measured noise.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace chens {

struct StepCostBins {
  // log10(seconds per instance-step) from lo_decade to lo_decade + decades, per_decade bins
  // a decade (bins 1.2 % wide): a pendulum's step takes ~1e-9 s, a 64-atom chain's ~1e-5 s.
  static constexpr int lo_decade = -12;
  static constexpr int decades = 11;
  static constexpr int per_decade = 200;
  static constexpr int count = decades * per_decade;

  static int index(double seconds_per_step) {
    if (!(seconds_per_step > 0)) return 0;
    const double x = (std::log10(seconds_per_step) - lo_decade) * per_decade;
    if (!(x > 0)) return 0;
    return x >= count ? count - 1 : static_cast<int>(x);
  }
  // Bin b's lower edge.
  static double edge(double b) { return std::pow(10.0, lo_decade + b / per_decade); }
};

// The median cost per instance-step and the notch around it, from the histogram's counts.
struct StepCost {
  std::uint64_t samples = 0;  // timed samples (units of work) in the histogram
  double p25 = 0, p50 = 0, p75 = 0;

  // The q-quantile, interpolated geometrically inside its bin.
  static double quantile(const std::vector<std::uint64_t>& h, std::uint64_t n, double q) {
    const double target = q * static_cast<double>(n);
    double below = 0;
    for (std::size_t b = 0; b < h.size(); ++b) {
      const double c = static_cast<double>(h[b]);
      if (c > 0 && below + c >= target) {
        const double f = std::min(1.0, std::max(0.0, (target - below) / c));
        return StepCostBins::edge(static_cast<double>(b) + f);
      }
      below += c;
    }
    return 0;
  }

  static StepCost of(const std::vector<std::uint64_t>& h) {
    StepCost s;
    for (std::uint64_t c : h) s.samples += c;
    if (s.samples == 0) return s;
    s.p25 = quantile(h, s.samples, 0.25);
    s.p50 = quantile(h, s.samples, 0.50);
    s.p75 = quantile(h, s.samples, 0.75);
    return s;
  }

  // Half the width of the median's notch relative to the median: 1.58 IQR / sqrt(n), the
  // interval within which two medians are not told apart at about the 95 % level (McGill,
  // Tukey & Larsen, "Variations of box plots", Am. Stat. 32 (1978) 12-16). It is never taken
  // below one histogram bin. The samples are not independent (a disturbance lasts longer
  // than a sample), so the notch is a lower bound of the noise: docs/study-format.md.
  double relative_notch() const {
    if (samples == 0 || !(p50 > 0)) return 0;
    const double bin = std::pow(10.0, 1.0 / StepCostBins::per_decade) - 1.0;
    return std::max(bin, 1.58 * (p75 - p25) / std::sqrt(static_cast<double>(samples)) / p50);
  }
};

}  // namespace chens
