#include "output/periodogram.hpp"

#include <cmath>
#include <complex>
#include <numbers>

#include <nlohmann/json.hpp>

namespace chens {

Periodogram periodogram(const std::vector<double>& y, double dt) {
  const std::size_t n = y.size();
  Periodogram p;
  if (n < 2) return p;
  std::vector<std::complex<double>> twiddle(n);
  for (std::size_t m = 0; m < n; ++m) {
    const double a = -2.0 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(n);
    twiddle[m] = std::complex<double>(std::cos(a), std::sin(a));
  }
  for (std::size_t j = 1; j <= n / 2; ++j) {
    std::complex<double> acc(0.0, 0.0);
    std::size_t m = 0;  // (j * k) mod n
    for (std::size_t k = 0; k < n; ++k) {
      acc += y[k] * twiddle[m];
      m += j;
      if (m >= n) m -= n;
    }
    p.f.push_back(static_cast<double>(j) / (static_cast<double>(n) * dt));
    p.amplitude.push_back(std::abs(acc) * 2.0 / static_cast<double>(n));
  }
  return p;
}

PeriodogramPeak periodogram_peak(const Periodogram& p) {
  PeriodogramPeak pk;
  if (p.f.empty()) return pk;
  std::size_t best = 0;
  for (std::size_t j = 1; j < p.amplitude.size(); ++j)
    if (p.amplitude[j] > p.amplitude[best]) best = j;
  pk.f = p.f[best];
  pk.amplitude = p.amplitude[best];
  pk.power = pk.amplitude * pk.amplitude / 2;
  bool first_q = true, first_h = true;
  for (std::size_t j = 0; j < p.amplitude.size(); ++j) {
    if (p.amplitude[j] >= pk.amplitude / 4) {
      pk.bins_quarter += 1;
      if (first_q) pk.f_quarter_lo = p.f[j];
      pk.f_quarter_hi = p.f[j];
      first_q = false;
    }
    if (p.amplitude[j] >= pk.amplitude / 2) {
      pk.bins_half += 1;
      if (first_h) pk.f_half_lo = p.f[j];
      pk.f_half_hi = p.f[j];
      first_h = false;
    }
  }
  return pk;
}

nlohmann::json to_json(const PeriodogramPeak& pk) {
  return {{"f", pk.f},
          {"amplitude", pk.amplitude},
          {"power", pk.power},
          {"bins_above_quarter_peak", pk.bins_quarter},
          {"f_range_above_quarter_peak", {pk.f_quarter_lo, pk.f_quarter_hi}},
          {"bins_above_half_peak", pk.bins_half},
          {"f_range_above_half_peak", {pk.f_half_lo, pk.f_half_hi}}};
}

}  // namespace chens
