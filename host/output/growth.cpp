#include "output/growth.hpp"

#include <algorithm>
#include <cmath>

namespace chens {

std::optional<GrowthFit> growth_exponent(const std::vector<double>& t, const std::vector<double>& v, double t0,
                                         double t1) {
  std::vector<double> lx, ly;
  double running = 0.0;
  for (std::size_t i = 0; i < t.size() && i < v.size(); ++i) {
    if (std::isfinite(v[i])) running = std::max(running, v[i]);
    if (t[i] < t0 || t[i] > t1 || !(t[i] > 0.0) || !(running > 0.0)) continue;
    lx.push_back(std::log(t[i]));
    ly.push_back(std::log(running));
  }
  const std::size_t n = lx.size();
  if (n < 3) return std::nullopt;
  double sw = 0, sx = 0, sy = 0;
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double lo = i == 0 ? lx[0] : 0.5 * (lx[i - 1] + lx[i]);
    const double hi = i + 1 == n ? lx[n - 1] : 0.5 * (lx[i] + lx[i + 1]);
    w[i] = hi - lo;
    sw += w[i];
    sx += w[i] * lx[i];
    sy += w[i] * ly[i];
  }
  if (!(sw > 0)) return std::nullopt;
  const double mx = sx / sw, my = sy / sw;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxx += w[i] * (lx[i] - mx) * (lx[i] - mx);
    sxy += w[i] * (lx[i] - mx) * (ly[i] - my);
  }
  return GrowthFit{sxy / sxx, static_cast<int>(n)};
}

}  // namespace chens
