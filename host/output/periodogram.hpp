// The periodogram of one component of an instance's trajectory, sampled at equal steps
// (001 §6: "a periodogram from the values at t = 0, 1, 2, ..., 1023").
#pragma once

#include <cstddef>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace chens {

// Amplitude spectrum of N equally spaced values y_0..y_{N-1} (spacing dt): at f_j = j / (N dt),
// j = 1..N/2, amplitude_j = |sum_n y_n exp(-2 pi i j n / N)| * 2 / N, the amplitude of a
// sinusoid that sits exactly on f_j (j = N/2, the Nyquist bin, counts twice). Power is
// amplitude^2 / 2, the mean square of that sinusoid. The sum is the direct DFT (N^2/2
// multiply-adds, with the twiddle factors exp(-2 pi i m / N) tabulated for m = 0..N-1).
struct Periodogram {
  std::vector<double> f, amplitude;
};

Periodogram periodogram(const std::vector<double>& y, double dt);

// Where the spectrum's peak is and how far it is spread: the largest amplitude, its
// frequency, power and the frequencies whose amplitude is at least 1/4 and 1/2 of it.
struct PeriodogramPeak {
  double f = 0, amplitude = 0, power = 0;
  std::size_t bins_quarter = 0, bins_half = 0;  // bins at or above 1/4 (1/2) of the peak amplitude
  double f_quarter_lo = 0, f_quarter_hi = 0;    // lowest and highest such frequencies
  double f_half_lo = 0, f_half_hi = 0;
};

PeriodogramPeak periodogram_peak(const Periodogram& p);

// summary.json's description of a peak.
nlohmann::json to_json(const PeriodogramPeak& pk);

}  // namespace chens
