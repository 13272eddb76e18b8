#include "output/growth.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include <chens/diagnostics/metrics.hpp>

#include "output/number_text.hpp"
#include "output/writer.hpp"

namespace chens {


std::optional<GrowthFit> growth_exponent(const std::vector<double>& t, const std::vector<double>& v, double t0, double t1) {
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

GrowthLimits growth_limits(double epsilon, double state_size) {
  const double size = std::max(1.0, std::isfinite(state_size) ? state_size : 1.0);
  return {rounding_ulps * epsilon * size, saturation_fraction * size};
}

GrowthLimits growth_limits(const Study& s) {
  double size = 0;
  for (double z : initial_state(s)) size = std::max(size, std::fabs(z));
  return growth_limits(s.precision == Precision::single_precision ? double(FLT_EPSILON) : DBL_EPSILON, size);
}

GrowthVerdict assess_growth(const std::vector<double>& t, const std::vector<double>& v, double t0, double t1,
                            const GrowthLimits& limits) {
  GrowthVerdict out;
  double running = 0.0;
  bool last_live = false;
  for (std::size_t i = 0; i < t.size() && i < v.size() && t[i] <= t1; ++i) {
    if (std::isfinite(v[i])) running = std::max(running, v[i]);
    last_live = std::isfinite(v[i]);
  }
  out.largest = running;
  const auto fit = growth_exponent(t, v, t0, t1);
  if (!fit) {
    out.reason = "fewer than 3 positive values in the window";
    return out;
  }
  out.points = fit->points;
  if (!last_live) {
    out.reason = "no live instance at the end of the window";
  } else if (running <= limits.rounding) {
    out.reason = "at rounding level (max " + number_text(running) + " <= " + number_text(limits.rounding) + ")";
  } else if (running >= limits.saturation) {
    out.reason = "saturated (max " + number_text(running) + " >= " + number_text(limits.saturation) + ")";
  } else {
    // The halves of the window in log t, each fitted alone.
    const double tm = std::sqrt(std::max(t0, 0.0) * t1);
    const auto first = growth_exponent(t, v, t0, tm), second = growth_exponent(t, v, tm, t1);
    if (first && second && first->exponent >= 0.5 && second->exponent < 0.5 * first->exponent)
      out.reason = "growth stops within the window (slope " + number_text(first->exponent) + " over t in [" +
                   number_text(t0) + ", " + number_text(tm) + "], " + number_text(second->exponent) + " over [" +
                   number_text(tm) + ", " + number_text(t1) + "])";
  }
  if (out.reason.empty()) out.exponent = fit->exponent;
  return out;
}

nlohmann::json growth_summary(const EnsembleResult& r, const Study& s) {
  nlohmann::json g;
  const double t_final = r.series.empty() ? 0.0 : r.series.back().t;
  const double t0 = t_final / 10, t1 = t_final;
  const GrowthLimits limits = growth_limits(s);
  g["window"] = {t0, t1};
  g["statistic"] = "least-squares slope of log(running maximum) against log t, points weighted by their share of log t";
  g["limits"] = {{"rounding", limits.rounding}, {"saturation", limits.saturation}};
  std::vector<double> t;
  for (const auto& st : r.series) t.push_back(st.t);
  for (int m = 0; m < metric_count; ++m) {
    // The Lyapunov exponent is a rate already, signed, not an error that grows.
    if (!r.metric_reported(m) || m == int(MetricId::lyapunov)) continue;
    std::vector<double> mx, p50;
    for (const auto& st : r.series) {
      const bool live = st.metric[m].count > 0;
      mx.push_back(live ? st.metric[m].max : NAN);
      p50.push_back(live ? st.quantile[m][quantile_p50] : NAN);
    }
    const GrowthVerdict fm = assess_growth(t, mx, t0, t1, limits), fp = assess_growth(t, p50, t0, t1, limits);
    nlohmann::json e = {{"max", fm.exponent ? number_or_null(*fm.exponent) : nullptr},
                        {"p50", fp.exponent ? number_or_null(*fp.exponent) : nullptr},
                        {"points", fm.points}};
    if (!fm.exponent) e["max_reason"] = fm.reason;
    if (!fp.exponent) e["p50_reason"] = fp.reason;
    g[metric_name(m)] = e;
  }
  return g;
}

}  // namespace chens
