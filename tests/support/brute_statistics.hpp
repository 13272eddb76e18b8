// The statistics of values as the engine reduces them (an Accumulator and the quantiles of a
// histogram, block by block along the block tree), computed here directly instead: count, min
// and max exactly, mean and rms in plain double sums, quantiles from a histogram filled here
// (signed bins for signed values: the Lyapunov exponents). Shared by the grouped statistics'
// and the Lyapunov spectrum's tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <chens/ensemble/accumulator.hpp>
#include <chens/ensemble/quantiles.hpp>

namespace chens::test {

struct BruteStatistics {
  bool signed_values = false;
  std::uint64_t count = 0;
  double min = INFINITY, max = -INFINITY, sum = 0, sum2 = 0;
  std::vector<std::uint64_t> hist = std::vector<std::uint64_t>(LogBins::count, 0);
  void add(double v) {
    count += 1;
    min = std::min(min, v);
    max = std::max(max, v);
    sum += v;
    sum2 += v * v;
    hist[static_cast<std::size_t>(histogram_bin(signed_values, v))] += 1;
  }
};

// The engine's accumulator and quantiles against b: count, min and max exactly, mean and rms to
// 1e-13 of the values' size (the block tree sums in another order), each quantile exactly (the
// same histogram, the same estimate).
inline void expect_statistics_match(const Accumulator& a, const double* quantile, const BruteStatistics& b,
                                    const std::string& what) {
  ASSERT_EQ(a.count, b.count) << what;
  if (b.count == 0) return;
  EXPECT_EQ(a.min, b.min) << what;
  EXPECT_EQ(a.max, b.max) << what;
  const double scale = std::max(std::fabs(b.min), std::fabs(b.max));
  EXPECT_NEAR(a.mean, b.sum / static_cast<double>(b.count), 1e-13 * scale) << what;
  EXPECT_NEAR(a.rms(), std::sqrt(b.sum2 / static_cast<double>(b.count)), 1e-13 * scale) << what;
  for (int q = 0; q < quantile_count; ++q)
    EXPECT_EQ(quantile[q], histogram_quantile(b.hist.data(), quantile_level[q], b.min, b.max, b.signed_values))
        << what << ", " << quantile_name[q];
}

}  // namespace chens::test
