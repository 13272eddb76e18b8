// Ensemble quantiles from fixed log-spaced histograms (include/chens/ensemble/quantiles.hpp):
// the bins against their defining edges 2^(e + j/8), and the quantiles against exact
// order statistics of sorted samples; the signed bins of a signed metric (the Lyapunov
// exponent) likewise, on both sides of zero.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <chens/ensemble/quantiles.hpp>

namespace chens {
namespace {

TEST(LogBins, EdgesAreTheEighthPowersOfTwo) {
  for (int j = 0; j <= LogBins::per_octave; ++j) EXPECT_NEAR(LogBins::step(j), std::exp2(j / 8.0), 4e-16) << j;
  // Consecutive bins share an edge; each interior bin spans a ratio 2^(1/8).
  for (int b = 1; b < LogBins::count - 1; ++b) {
    EXPECT_EQ(LogBins::upper(b - 1), LogBins::lower(b)) << b;
    EXPECT_NEAR(LogBins::upper(b) / LogBins::lower(b), std::exp2(1.0 / 8), 1e-15) << b;
  }
  EXPECT_EQ(LogBins::lower(1), 0x1p-80);
  EXPECT_EQ(LogBins::lower(LogBins::count - 1), 0x1p40);
}

TEST(LogBins, EveryValueLandsInTheBinThatContainsIt) {
  const std::uint64_t seed = 20261126;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> expo(-85.0, 45.0);
  for (int i = 0; i < 200000; ++i) {
    const double x = std::exp2(expo(rng));
    const int b = LogBins::index(x);
    ASSERT_GE(b, 0);
    ASSERT_LT(b, LogBins::count);
    ASSERT_LE(LogBins::lower(b), x) << "seed " << seed << ", x = " << x;
    ASSERT_LT(x, LogBins::upper(b)) << "seed " << seed << ", x = " << x;
  }
  // The edges themselves, and the largest double below each.
  for (int b = 1; b < LogBins::count; ++b) {
    EXPECT_EQ(LogBins::index(LogBins::lower(b)), b);
    EXPECT_EQ(LogBins::index(std::nextafter(LogBins::lower(b), 0.0)), b - 1);
  }
  EXPECT_EQ(LogBins::index(0.0), 0);
  EXPECT_EQ(LogBins::index(1e300), LogBins::count - 1);
}

double nearest_rank(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const std::size_t r = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size()))));
  return v[r - 1];
}

TEST(HistogramQuantile, InTheBinOfTheExactOrderStatistic) {
  const std::uint64_t seed = 4;
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> spread(std::log(1e-9), 4.0);  // about 7 decades
  for (const int n : {1, 2, 7, 100, 10007}) {
    std::vector<double> v(static_cast<std::size_t>(n));
    std::vector<std::uint32_t> h(LogBins::count, 0);
    for (double& x : v) {
      x = spread(rng);
      h[LogBins::index(x)] += 1;
    }
    const double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
    for (const double p : {0.001, 0.25, 0.5, 0.9, 0.99, 1.0}) {
      const double exact = nearest_rank(v, p), est = histogram_quantile(h.data(), p, lo, hi);
      const int b = LogBins::index(exact);
      EXPECT_GE(est, std::max(LogBins::lower(b), lo)) << "seed " << seed << ", n " << n << ", p " << p;
      EXPECT_LE(est, std::min(LogBins::upper(b), hi)) << "seed " << seed << ", n " << n << ", p " << p;
      EXPECT_LE(std::abs(std::log2(est / exact)), 1.0 / 8 + 1e-12) << "seed " << seed << ", n " << n << ", p " << p;
    }
    // The extremes are exact (clamped to the known minimum and maximum).
    EXPECT_EQ(histogram_quantile(h.data(), 1.0, lo, hi), hi);
    EXPECT_EQ(histogram_quantile(h.data(), 1e-9, lo, hi), lo);
  }
}

// A small perturbation's errors often share one bin: the quantiles are then interpolated
// between the exact minimum and maximum, exact for a uniform spread.
TEST(HistogramQuantile, ValuesInsideOneBinAreInterpolatedByRank) {
  const int n = 1001;
  std::vector<double> v(n);
  std::vector<std::uint32_t> h(LogBins::count, 0);
  for (int i = 0; i < n; ++i) {
    v[static_cast<std::size_t>(i)] = 1.0 + 0.05 * (i + 0.5) / n;  // midpoints of [1, 1.05]
    h[LogBins::index(v[static_cast<std::size_t>(i)])] += 1;
  }
  ASSERT_EQ(h[LogBins::index(1.0)], static_cast<std::uint32_t>(n));
  for (const double p : {0.1, 0.5, 0.9, 0.99}) {
    const double exact = nearest_rank(v, p), est = histogram_quantile(h.data(), p, v.front(), v.back());
    EXPECT_NEAR(est, exact, 0.05 / n) << "p " << p;
  }
}

TEST(HistogramQuantile, UnderflowOverflowAndEmpty) {
  std::vector<std::uint32_t> h(LogBins::count, 0);
  EXPECT_EQ(histogram_quantile(h.data(), 0.5, 0.0, 0.0), 0.0);
  h[LogBins::index(0.0)] = 3;  // exact zeros (e.g. psi after an exact projection)
  h[LogBins::index(1e13)] = 2;
  EXPECT_EQ(histogram_quantile(h.data(), 0.5, 0.0, 2e13), 0.0);
  const double top = histogram_quantile(h.data(), 0.8, 0.0, 2e13);  // in the overflow bin
  EXPECT_GE(top, 0x1p40);
  EXPECT_LE(top, 2e13);
  EXPECT_EQ(histogram_quantile(h.data(), 1.0, 0.0, 2e13), 2e13);
}


// Signed bins: contiguous edges in increasing order, the eighth powers of two mirrored about a
// zero bin, every value in the bin that contains it (the closed end towards zero).
TEST(SignedLogBins, EdgesAreContiguousAndMirrored) {
  using B = SignedLogBins;
  ASSERT_LE(B::count, LogBins::count);
  for (int b = 1; b < B::count; ++b) EXPECT_EQ(B::upper(b - 1), B::lower(b)) << b;
  for (int b = 0; b < B::count; ++b) EXPECT_LT(B::lower(b), B::upper(b)) << b;
  for (int b = 1; b < B::zero; ++b) {
    EXPECT_EQ(B::lower(b), -B::upper(B::count - 1 - b)) << b;
    EXPECT_NEAR(B::lower(b) / B::upper(b), std::exp2(1.0 / 8), 1e-15) << b;
  }
  EXPECT_EQ(B::lower(B::zero), -0x1p-30);
  EXPECT_EQ(B::upper(B::zero), 0x1p-30);
  EXPECT_EQ(B::upper(0), -0x1p29);
  EXPECT_EQ(B::lower(B::count - 1), 0x1p29);
}

TEST(SignedLogBins, EveryValueLandsInTheBinThatContainsIt) {
  using B = SignedLogBins;
  const std::uint64_t seed = 20261130;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> expo(-35.0, 35.0);
  for (int i = 0; i < 200000; ++i) {
    const double x = (i % 2 ? -1.0 : 1.0) * std::exp2(expo(rng));
    const int b = B::index(x);
    ASSERT_GE(b, 0);
    ASSERT_LT(b, B::count);
    if (x > 0) {
      ASSERT_LE(B::lower(b), x) << "seed " << seed << ", x = " << x;
      ASSERT_LT(x, B::upper(b)) << "seed " << seed << ", x = " << x;
    } else {
      ASSERT_LT(B::lower(b), x) << "seed " << seed << ", x = " << x;
      ASSERT_LE(x, B::upper(b)) << "seed " << seed << ", x = " << x;
    }
  }
  for (int b = B::zero + 1; b < B::count; ++b) {
    EXPECT_EQ(B::index(B::lower(b)), b);
    EXPECT_EQ(B::index(std::nextafter(B::lower(b), 0.0)), b - 1);
    EXPECT_EQ(B::index(-B::lower(b)), B::count - 1 - b);
  }
  EXPECT_EQ(B::index(0.0), B::zero);
  EXPECT_EQ(B::index(-0.0), B::zero);
  EXPECT_EQ(B::index(1e300), B::count - 1);
  EXPECT_EQ(B::index(-1e300), 0);
  EXPECT_EQ(histogram_bin(false, -1.0), 0);  // unsigned bins: negative values are below them
  EXPECT_EQ(histogram_bin(true, -1.0), B::index(-1.0));
}

// Finite-time exponents of an ensemble straddle zero: the quantiles of signed values are in the
// exact order statistic's bin, and within 2^(1/8) of it.
TEST(HistogramQuantile, SignedValuesInTheBinOfTheExactOrderStatistic) {
  using B = SignedLogBins;
  const std::uint64_t seed = 43;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> spread(0.05, 0.2);
  for (const int n : {1, 2, 7, 100, 10007}) {
    std::vector<double> v(static_cast<std::size_t>(n));
    std::vector<std::uint32_t> h(LogBins::count, 0);
    for (double& x : v) {
      x = spread(rng);
      h[histogram_bin(true, x)] += 1;
    }
    const double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
    for (const double p : {0.001, 0.1, 0.25, 0.5, 0.9, 0.99, 1.0}) {
      const double exact = nearest_rank(v, p), est = histogram_quantile(h.data(), p, lo, hi, true);
      const int b = B::index(exact);
      EXPECT_GE(est, std::max(B::lower(b), lo)) << "seed " << seed << ", n " << n << ", p " << p;
      EXPECT_LE(est, std::min(B::upper(b), hi)) << "seed " << seed << ", n " << n << ", p " << p;
      EXPECT_GT(est * exact, 0.0) << "the sign: seed " << seed << ", n " << n << ", p " << p;
      EXPECT_LE(std::abs(std::log2(est / exact)), 1.0 / 8 + 1e-12) << "seed " << seed << ", n " << n << ", p " << p;
    }
    EXPECT_EQ(histogram_quantile(h.data(), 1.0, lo, hi, true), hi);
    EXPECT_EQ(histogram_quantile(h.data(), 1e-9, lo, hi, true), lo);
  }
}

}  // namespace
}  // namespace chens
