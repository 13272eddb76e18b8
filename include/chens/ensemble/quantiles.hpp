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
//
// A signed metric (the Lyapunov exponent, metric_signed in metrics.hpp) uses SignedLogBins
// instead: the same number of bins, 8 per octave over |x| in [2^-30, 2^30) on either side of a
// zero bin (-2^-30, 2^-30), so that histogram_quantile's rule (the estimate in the exact
// quantile's bin) holds for negative values too.
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

// Signed values (above), bins in increasing order of x: 0 is (-inf, -2^29]; 1..472 the
// negative octaves from -2^29 up to -2^-30; `zero` = 473 is (-2^-30, 2^-30); 474..945 the
// positive octaves from 2^-30 up to 2^29; 946 is [2^29, inf). Fewer than LogBins::count, so
// that a signed metric's histogram fits the row every metric has (the rest stays empty).
struct SignedLogBins {
  static constexpr int per_octave = LogBins::per_octave;
  static constexpr int min_exp = -30;  // |x| in [2^min_exp, 2^max_exp) is binned by octaves
  static constexpr int max_exp = 29;
  static constexpr int side = (max_exp - min_exp) * per_octave;  // octave bins on each side
  static constexpr int zero = side + 1;
  static constexpr int count = 2 * side + 3;
  static_assert(count <= LogBins::count, "a signed metric's histogram fits every metric's row");

  // Bin of |x| in [2^min_exp, 2^max_exp) among the `side` bins of one side, 0 the smallest.
  CHENS_HD static int magnitude(double a) {
    using std::frexp;
    int e = 0;
    const double m = 2.0 * frexp(a, &e);  // a = m 2^(e-1), m in [1, 2)
    int j = 0;
    CHENS_UNROLL
    for (int s = 1; s < per_octave; ++s) j += m >= LogBins::step(s) ? 1 : 0;
    return (e - 1 - min_exp) * per_octave + j;
  }
  // Bin of finite x.
  CHENS_HD static int index(double x) {
    const double a = x < 0 ? -x : x;
    if (!(a >= 0x1p-30)) return zero;
    if (a >= 0x1p29) return x < 0 ? 0 : count - 1;
    return x < 0 ? side - magnitude(a) : zero + 1 + magnitude(a);
  }
  // Bin b holds [lower(b), upper(b)) above zero and (lower(b), upper(b)] below it (the mirror).
  static double lower(int b) {
    if (b == 0) return -INFINITY;
    if (b < zero) return -edge(side + 1 - b);
    if (b == zero) return -0x1p-30;
    return edge(b - zero - 1);
  }
  static double upper(int b) {
    if (b == count - 1) return INFINITY;
    if (b < zero) return -edge(side - b);
    if (b == zero) return 0x1p-30;
    return edge(b - zero);
  }

 private:
  // The lower edge of magnitude bin i, 0 <= i <= side (i = side: 2^max_exp).
  static double edge(int i) { return std::ldexp(LogBins::step(i % per_octave), i / per_octave + min_exp); }
};

// The bin of x in the histogram of a metric whose values are signed or not (metric_signed).
CHENS_HD inline int histogram_bin(bool signed_values, double x) {
  return signed_values ? SignedLogBins::index(x) : LogBins::index(x);
}

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
double histogram_quantile(const Count* h, double p, double lo, double hi, bool signed_values = false) {
  const int bins = signed_values ? SignedLogBins::count : LogBins::count;
  std::uint64_t n = 0;
  for (int b = 0; b < bins; ++b) n += static_cast<std::uint64_t>(h[b]);
  if (n == 0) return 0.0;
  std::uint64_t rank = static_cast<std::uint64_t>(std::ceil(p * static_cast<double>(n)));
  if (rank < 1) rank = 1;
  if (rank >= n) return hi;  // the largest and smallest values are known exactly
  if (rank == 1) return lo;
  std::uint64_t before = 0;
  int b = 0;
  for (; b < bins - 1; ++b) {
    if (before + static_cast<std::uint64_t>(h[b]) >= rank) break;
    before += static_cast<std::uint64_t>(h[b]);
  }
  if (b == 0 && !signed_values) return lo;  // below 2^-80: zero for every metric's purposes
  const double a = std::fmax(signed_values ? SignedLogBins::lower(b) : LogBins::lower(b), lo);
  const double z = std::fmin(signed_values ? SignedLogBins::upper(b) : LogBins::upper(b), hi);
  const double c = static_cast<double>(h[b]);
  const double f = (static_cast<double>(rank - before) - 0.5) / c;
  const double v = a + (z - a) * f;
  return v < a ? a : (v > z ? z : v);
}

}  // namespace chens
