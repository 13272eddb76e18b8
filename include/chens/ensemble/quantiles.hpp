// Ensemble quantiles (p10, p50, p90, p99) of the non-negative metrics from fixed log-spaced
// histograms. Exact order statistics would need every instance's value at every sample;
// a histogram with fixed bins is O(bins) per (sample, metric), its integer counts merge
// exactly in any order (CPU threads, GPU blocks, MPI ranks), and it places each quantile
// in the bin of the exact order statistic (histogram_quantile).
//
// Bins: 8 per octave, edges 2^(e + j/8) for e in [-80, 40), j = 0..7, plus an underflow bin
// [0, 2^-80) and an overflow bin [2^40, inf). The bin of x is found from frexp (exact) and
// seven comparisons of the mantissa with the constants 2^(j/8) rounded to double (exact),
// so a value lands in the same bin on every backend; the edges are those constants scaled
// by powers of two (exact too). Only finite values of live instances are binned.
#pragma once

#include <cmath>
#include <cstdint>

#include <chens/config.hpp>

namespace chens {

struct LogBins {
  static constexpr int per_octave = 8;
  static constexpr int min_exp = -80;  // 2^-80 = 8.3e-25: below, the underflow bin
  static constexpr int max_exp = 40;   // 2^40 = 1.1e12: at and above, the overflow bin
  static constexpr int count = (max_exp - min_exp) * per_octave + 2;

  // 2^(j/8), j = 0..8, rounded to double (j = 0 and 8 are exact).
  CHENS_HD static double step(int j) {
    constexpr double t[9] = {1.0,
                             1.090507732665257659207010655760707978993,
                             1.189207115002721066717499970560475915293,
                             1.296839554651009665933754117792451159835,
                             1.414213562373095048801688724209698078570,
                             1.542210825407940823612291862090734841307,
                             1.681792830507429086062250952466429790080,
                             1.834008086409342463487083189588288856077,
                             2.0};
    return t[j];
  }

  // Bin of x >= 0 (finite).
  CHENS_HD static int index(double x) {
    if (!(x >= 0x1p-80)) return 0;
    if (x >= 0x1p40) return count - 1;
    using std::frexp;
    int e = 0;
    const double m = 2.0 * frexp(x, &e);  // x = m 2^(e-1), m in [1, 2)
    int j = 0;
    CHENS_UNROLL
    for (int s = 1; s < per_octave; ++s) j += m >= step(s) ? 1 : 0;
    return 1 + (e - 1 - min_exp) * per_octave + j;
  }

  // [lower(b), upper(b)) is bin b; the underflow bin is [0, 2^-80).
  static double lower(int b) {
    if (b == 0) return 0.0;
    if (b == count - 1) return 0x1p40;
    return std::ldexp(step((b - 1) % per_octave), (b - 1) / per_octave + min_exp);
  }
  static double upper(int b) {
    if (b == count - 1) return INFINITY;
    if (b == 0) return 0x1p-80;
    return std::ldexp(step((b - 1) % per_octave + 1), (b - 1) / per_octave + min_exp);
  }
};

inline constexpr int quantile_count = 4;
inline constexpr double quantile_level[quantile_count] = {0.1, 0.5, 0.9, 0.99};
inline constexpr const char* quantile_name[quantile_count] = {"p10", "p50", "p90", "p99"};
inline constexpr int quantile_p50 = 1;  // index of the median

// The p-quantile, nearest-rank definition (the r-th smallest of the N binned values,
// r = ceil(p N)), from the histogram h[0..LogBins::count) of those values, whose exact
// minimum and maximum are lo and hi. The r-th value lies in the bin where the cumulative
// count reaches r, and in [lo, hi]; inside that interval [a, b] the estimate interpolates
// linearly in rank (midpoint rule: the bin's c values are taken at a + (b - a)(j - 1/2)/c,
// j = 1..c). So the estimate is in the same bin as the exact quantile, within a factor
// 2^(1/8) (9 %) of it, and exact for values spread uniformly inside a bin; an ensemble
// whose values all share one bin (a small perturbation's errors) gets its quantiles
// interpolated between its exact minimum and maximum rather than all equal to one of them.
// Ranks 1 and N give lo and hi exactly; a quantile in the underflow bin (below 2^-80) is
// lo. N = 0 gives 0.
template <class Count>
double histogram_quantile(const Count* h, double p, double lo, double hi) {
  std::uint64_t n = 0;
  for (int b = 0; b < LogBins::count; ++b) n += static_cast<std::uint64_t>(h[b]);
  if (n == 0) return 0.0;
  std::uint64_t rank = static_cast<std::uint64_t>(std::ceil(p * static_cast<double>(n)));
  if (rank < 1) rank = 1;
  if (rank >= n) return hi;  // the largest and smallest values are known exactly
  if (rank == 1) return lo;
  std::uint64_t before = 0;
  int b = 0;
  for (; b < LogBins::count - 1; ++b) {
    if (before + static_cast<std::uint64_t>(h[b]) >= rank) break;
    before += static_cast<std::uint64_t>(h[b]);
  }
  if (b == 0) return lo;  // below 2^-80: zero for every metric's purposes
  const double a = std::fmax(LogBins::lower(b), lo), z = std::fmin(LogBins::upper(b), hi);
  const double c = static_cast<double>(h[b]);
  const double f = (static_cast<double>(rank - before) - 0.5) / c;
  const double v = a + (z - a) * f;
  return v < a ? a : (v > z ? z : v);
}

}  // namespace chens
