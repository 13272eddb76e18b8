// The [parameters] section as a whole (docs/parameter_ensembles.md): the rules between its
// keys and the rest of the study, every instance's draw where a law can leave its range or
// its bins, and the ParameterEnsemble a run carries (its laws, step grid and groups).
#include "study/study_parameters.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "backends/step_grid.hpp"
#include "study/study_key_table.hpp"

namespace chens {


namespace {

// [parameters] group_by: the parameter it names, or -1.
int group_parameter(const Study& s) {
  for (int p = 0; p < parameter_count; ++p)
    if (s.group_by == parameter_name(ParameterId(p))) return p;
  return -1;
}

// The values a uniform or log-uniform law's draws take, [lo, hi]: its bounds, and for a step
// size also the bounds' places on the sample grid (on_sample_grid is monotone in the draw).
std::pair<double, double> drawn_range(const ParameterLaw& l, ParameterId id, double h_grid) {
  if (id != ParameterId::h) return {l.a, l.b};
  return {std::min(l.a, on_sample_grid(l.a, h_grid)), std::max(l.b, on_sample_grid(l.b, h_grid))};
}

// [parameters] group_by, group_bins, group_edges: the groups exist, are at most
// max_parameter_groups, and every instance's value lies in one (normal laws: checked instance
// by instance, as their range).
void validate_groups(const Study& s, const ParameterEnsemble& e, std::uint64_t n, std::uint64_t scan_max) {
  const bool bins = s.group_bins > 0, edges = !s.group_edges.empty();  // (their keys take no 0 or [])
  if (s.group_by.empty()) {
    if (bins || edges)
      throw StudyError(std::string("parameters.") + (bins ? "group_bins" : "group_edges") +
                       " bins the values of the parameter parameters.group_by names, and group_by is not given");
    return;
  }
  const int p = group_parameter(s);
  const ParameterId id = ParameterId(p);
  const ParameterLaw& l = s.law(id);
  const std::string by = "parameters.group_by = \"" + s.group_by + "\"";
  if (!l.varies())
    throw StudyError(by + ": the study does not vary " + s.group_by + "; give parameters." + s.group_by +
                     " a law or a list, or remove group_by");
  if (l.kind == LawKind::list) {
    if (bins || edges)
      throw StudyError(std::string("parameters.") + (bins ? "group_bins" : "group_edges") + ": parameters." + s.group_by +
                       " is a list, whose groups are its distinct values; remove the key");
    if (e.groups() > max_parameter_groups)
      throw StudyError(by + ": parameters." + s.group_by + " has " + std::to_string(e.groups()) +
                       " distinct values; at most " + std::to_string(max_parameter_groups) + " groups");
    return;
  }
  if (bins && edges) throw StudyError(by + ": give parameters.group_bins or parameters.group_edges, not both");
  if (!bins && !edges)
    throw StudyError(by + " draws its values from \"" + law_text(l) +
                     "\": give parameters.group_bins (equal bins of a "
                     "uniform or log-uniform law's range) or parameters.group_edges (the bins' edges)");
  if (bins && l.kind == LawKind::normal)
    throw StudyError("parameters.group_bins: parameters." + s.group_by + " = \"" + law_text(l) +
                     "\" has no range to cut into equal bins; give parameters.group_edges");
  if (bins) return;  // e's edges span the law's range (parameter_ensemble)
  const std::vector<double>& x = s.group_edges;
  if (x.size() < 2 || x.size() > max_parameter_groups + 1)
    throw StudyError("parameters.group_edges: " + std::to_string(x.size()) + (x.size() == 1 ? " edge" : " edges") +
                     "; give 2 to " + std::to_string(max_parameter_groups + 1) + " (the bins are between them)");
  for (std::size_t j = 1; j < x.size(); ++j)
    if (!(x[j] > x[j - 1]))
      throw StudyError("parameters.group_edges must ascend strictly: " + shortest(x[j - 1]) + " is followed by " +
                       shortest(x[j]));
  std::string edges_text = "[";
  edges_text.append(shortest(x.front())).append(", ..., ").append(shortest(x.back())).append("]");
  if (l.kind != LawKind::normal) {
    // Every draw lies in [a, b) (a step size: between a's and b's places on the sample grid).
    const bool h = id == ParameterId::h;
    const auto [lo, hi] = drawn_range(l, id, e.h_grid);
    if (!(x.front() <= lo && hi <= x.back()))
      throw StudyError(
          "parameters.group_edges = " + edges_text + " do not cover parameters." + s.group_by + " = \"" + law_text(l) +
          "\"" +
          (h && e.h_grid > 0 ? " (its values on the sample grid lie in [" + shortest(lo) + ", " + shortest(hi) + "])" : "") +
          ": every instance's value must lie in a bin");
    return;
  }
  const double tail = 8.6 * l.b;  // Box-Muller's reach (validate_parameters)
  if (x.front() <= l.a - tail && l.a + tail <= x.back()) return;
  if (n > scan_max)
    throw StudyError("parameters.group_edges = " + edges_text + " can leave draws of parameters." + s.group_by + " = \"" +
                     law_text(l) + "\" outside every bin, and " + std::to_string(n) + " instances are more than the " +
                     std::to_string(scan_max) +
                     " chens checks one by one: widen the outer edges to mean - 8.6 sd and mean + 8.6 sd");
  for (std::uint64_t j = 0; j < n; ++j) {
    const std::uint64_t i = s.only.empty() ? j : static_cast<std::uint64_t>(s.only[j]);
    if (e.group_of(i) < 0)
      throw StudyError("parameters.group_edges = " + edges_text + ": instance " + std::to_string(i) + " draws " +
                       s.group_by + " = " + shortest(e.value(id, i)) +
                       ", outside every bin: widen the outer edges "
                       "(nothing was run)");
  }
}

}  // namespace

// [parameters] (parameter_laws.hpp): the laws' scopes and the rules between keys, then every
// instance's value where a law can leave the parameter's range (normal laws): the message
// names the instance and its value, before anything runs.
void validate_parameters(const Study& s, const RunParams<double>& rp) {
  refuse_keys_out_of_scope(s, "parameters");
  const std::uint64_t n = s.only.empty() ? static_cast<std::uint64_t>(s.size) : s.only.size();
  constexpr std::uint64_t scan_max = 100000000;
  if (!s.varies_parameters()) {
    if (!s.group_by.empty())
      throw StudyError("parameters.group_by = \"" + s.group_by + "\": the study varies no parameter; give parameters." +
                       s.group_by + " a law or a list, or remove group_by");
    validate_groups(s, ParameterEnsemble{}, n, scan_max);
    return;
  }
  const auto varied = [&](ParameterId p) { return s.law(p).varies(); };
  const auto key = [](ParameterId p) { return std::string("parameters.") + parameter_name(p); };
  bool model_varied = false;
  for (int p = 0; p < parameter_count; ++p)
    model_varied = model_varied || (ParameterId(p) != ParameterId::h && varied(ParameterId(p)));
  if (model_varied && !s.phase_error.empty())
    throw StudyError("output.phase_error compares instance 0 with the period of the study's own pendulum; with "
                     "[parameters] varying the model, instance 0 has its own: remove output.phase_error");
  if (varied(ParameterId::h)) {
    const ParameterLaw& l = s.law(ParameterId::h);
    if (s.precision == Precision::single_precision)
      throw StudyError("parameters.h: integrator.precision = \"float\" runs one step grid; vary h in double precision");
    if (rp.fixed_step) {
      if (!s.sample_dt)
        throw StudyError("parameters.h with a fixed-step method needs output.sample_dt: every instance samples at its "
                         "multiples, on its own step grid");
      const double m = s.t_end / *s.sample_dt;
      if (std::fabs(m - std::round(m)) > 1e-9 * std::max(1.0, m))
        throw StudyError("parameters.h with a fixed-step method needs integrator.t_end = " + shortest(s.t_end) +
                         " to be a multiple of output.sample_dt = " + shortest(*s.sample_dt) +
                         ", so that every step size ends on the same sample times");
      if (l.kind == LawKind::list)
        for (double h : l.values) {
          RunParams<double> r = rp;
          if (!fixed_step_grid(r, h, *s.sample_dt) || r.samples != rp.samples)
            throw StudyError("parameters.h: the value " + shortest(h) + " does not divide output.sample_dt = " +
                             shortest(*s.sample_dt) + ": fixed-step methods sample on their step grid");
        }
    }
  }
  // Normal laws whose tail can leave a parameter's range: every instance's draw. Box-Muller's
  // |z| <= sqrt(-2 log 2^-53) < 8.6 with 53-bit uniforms, so a law whose mean is more than 8.6
  // standard deviations inside the range cannot, and is not scanned. (Uniform and log-uniform
  // laws stay within their checked bounds; a drawn step size is rounded onto the sample grid,
  // sample_dt / n, whose sample times are the study's when t_end is a multiple of sample_dt.)
  for (int q = 0; q < parameter_count; ++q) {
    const ParameterId id = ParameterId(q);
    const ParameterLaw& l = s.law(id);
    const bool non_negative = parameter_may_be_zero(id);
    const double lowest = l.a - 8.6 * l.b;  // below every draw of the law
    if (l.kind != LawKind::normal || (non_negative ? lowest >= 0 : lowest > 0)) continue;
    if (n > scan_max)
      throw StudyError(key(id) + " = \"" + law_text(l) + "\" can draw values " + (non_negative ? "< 0" : "<= 0") +
                       " (below mean - 8.6 sd), and " + std::to_string(n) + " instances are more than the " +
                       std::to_string(scan_max) + " chens checks one by one: narrow the law or use log-uniform");
    for (std::uint64_t j = 0; j < n; ++j) {
      const std::uint64_t i = s.only.empty() ? j : static_cast<std::uint64_t>(s.only[j]);
      const double v = draw(l, s.seed, i, id);
      if (!std::isfinite(v) || !(non_negative ? v >= 0 : v > 0))
        throw StudyError(key(id) + " = \"" + law_text(l) + "\": instance " + std::to_string(i) + " draws " + shortest(v) +
                         (non_negative ? ", but it must be >= 0" : ", but it must be > 0") +
                         ": narrow the law or use log-uniform (nothing was run)");
    }
  }
  validate_groups(s, parameter_ensemble(s), n, scan_max);
}


ParameterEnsemble parameter_ensemble(const Study& s) {
  ParameterEnsemble e;
  e.seed = s.seed;
  e.law = s.vary;
  if (!is_adaptive_method(s.method) && s.sample_dt) e.h_grid = *s.sample_dt;
  e.group_by = group_parameter(s);
  if (e.group_by < 0) return e;
  const ParameterLaw& l = s.vary[static_cast<std::size_t>(e.group_by)];
  if (l.kind == LawKind::list) {
    e.group_values = l.values;
    std::sort(e.group_values.begin(), e.group_values.end());
    e.group_values.erase(std::unique(e.group_values.begin(), e.group_values.end()), e.group_values.end());
  } else if (!s.group_edges.empty()) {
    e.group_edges = s.group_edges;
  } else if (s.group_bins > 0 && (l.kind == LawKind::uniform || l.kind == LawKind::log_uniform)) {
    // Equal bins of [a, b] (a log-uniform law's: equal ratios); a step size's widened to the
    // places of a and b on the sample grid, where its values lie.
    const auto [a, b] = drawn_range(l, ParameterId(e.group_by), e.h_grid);
    const bool log = l.kind == LawKind::log_uniform;
    const auto bins = static_cast<std::size_t>(s.group_bins);
    for (std::size_t j = 0; j <= bins; ++j) {
      const double J = static_cast<double>(j), B = static_cast<double>(bins);
      e.group_edges.push_back(j == 0      ? a
                              : j == bins ? b
                              : log       ? std::exp(std::log(a) + (std::log(b) - std::log(a)) * J / B)
                                          : a + (b - a) * J / B);
    }
  }
  return e;
}

}  // namespace chens
