// The periodogram of summary.json (host/output/periodogram.hpp) on series with known
// spectra: a sinusoid on a frequency bin has its amplitude there and nothing elsewhere; one
// half a bin off spreads as the Dirichlet kernel says; constants have no spectrum.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "output/periodogram.hpp"

namespace chens {
namespace {

std::vector<double> sinusoid(std::size_t n, double dt, double f, double a, double phase, double offset = 0.0) {
  std::vector<double> y(n);
  for (std::size_t k = 0; k < n; ++k)
    y[k] = offset + a * std::cos(2 * std::numbers::pi * f * static_cast<double>(k) * dt + phase);
  return y;
}

TEST(Periodogram, SinusoidOnABinHasItsAmplitudeThereOnly) {
  const std::size_t n = 1024;
  const double dt = 0.5, f = 309.0 / (n * dt);  // bin 309
  const Periodogram p = periodogram(sinusoid(n, dt, f, 0.7, 0.3, 5.0), dt);
  ASSERT_EQ(p.f.size(), n / 2);
  for (std::size_t j = 0; j < p.f.size(); ++j) {
    EXPECT_DOUBLE_EQ(p.f[j], static_cast<double>(j + 1) / (n * dt));
    if (j + 1 == 309) {
      EXPECT_NEAR(p.amplitude[j], 0.7, 1e-12);
    } else {
      EXPECT_LT(p.amplitude[j], 1e-12) << "bin " << j + 1;  // the offset 5 sits in bin 0, not reported
    }
  }
  const PeriodogramPeak pk = periodogram_peak(p);
  EXPECT_DOUBLE_EQ(pk.f, f);
  EXPECT_NEAR(pk.amplitude, 0.7, 1e-12);
  EXPECT_NEAR(pk.power, 0.7 * 0.7 / 2, 1e-12);
  EXPECT_EQ(pk.bins_quarter, 1u);
  EXPECT_EQ(pk.bins_half, 1u);
  EXPECT_DOUBLE_EQ(pk.f_quarter_lo, f);
  EXPECT_DOUBLE_EQ(pk.f_quarter_hi, f);
}

TEST(Periodogram, HalfABinOffSpreadsLikeTheDirichletKernel) {
  // A sinusoid at (j + 1/2) / N: bins j and j + 1 see |sin(pi/2) / (N sin(pi / 2N))| of the
  // amplitude (-> 2/pi), bins j - 1 and j + 2 a third of that.
  const std::size_t n = 2048;
  const double a = 1.3;
  const Periodogram p = periodogram(sinusoid(n, 1.0, 400.5 / n, a, 0.0), 1.0);
  const double kernel = 1.0 / (n * std::sin(std::numbers::pi / (2.0 * n)));
  // Both signs of frequency contribute; the mirror image is 1200 bins away (relative 1e-3).
  EXPECT_NEAR(p.amplitude[399], a * kernel, 2e-3 * a);
  EXPECT_NEAR(p.amplitude[400], a * kernel, 2e-3 * a);
  EXPECT_NEAR(p.amplitude[398], a * kernel / 3, 2e-3 * a);
  EXPECT_NEAR(p.amplitude[401], a * kernel / 3, 2e-3 * a);
  const PeriodogramPeak pk = periodogram_peak(p);
  EXPECT_TRUE(pk.f == 400.0 / n || pk.f == 401.0 / n);
  EXPECT_EQ(pk.bins_half, 2u);  // the two centre bins; 1/3 of the peak is below half
  EXPECT_GE(pk.bins_quarter, 4u);
  EXPECT_DOUBLE_EQ(pk.f_half_lo, 400.0 / n);
  EXPECT_DOUBLE_EQ(pk.f_half_hi, 401.0 / n);
}

TEST(Periodogram, TheLargerOfTwoSinusoidsIsThePeak) {
  const std::size_t n = 512;
  std::vector<double> y = sinusoid(n, 1.0, 20.0 / n, 0.2, 1.0);
  const std::vector<double> z = sinusoid(n, 1.0, 150.0 / n, 0.9, -0.4);
  for (std::size_t k = 0; k < n; ++k) y[k] += z[k];
  const Periodogram p = periodogram(y, 1.0);
  EXPECT_NEAR(p.amplitude[19], 0.2, 1e-12);
  EXPECT_NEAR(p.amplitude[149], 0.9, 1e-12);
  const PeriodogramPeak pk = periodogram_peak(p);
  EXPECT_DOUBLE_EQ(pk.f, 150.0 / n);
  EXPECT_EQ(pk.bins_quarter, 1u);  // 0.2 < 0.9 / 4
}

TEST(Periodogram, ConstantHasNoSpectrumAndShortSeriesNone) {
  const Periodogram p = periodogram(std::vector<double>(100, 3.0), 1.0);
  for (double a : p.amplitude) EXPECT_LT(a, 1e-13);
  EXPECT_TRUE(periodogram({1.0}, 1.0).f.empty());
  EXPECT_EQ(periodogram_peak(Periodogram{}).amplitude, 0.0);
}

}  // namespace
}  // namespace chens
