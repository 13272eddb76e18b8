// Per-instance parameter ensembles (issue 22, docs/parameter_ensembles.md): the study's
// [parameters] section gives a model parameter or the step size a distribution over the
// instances. Instance i's value is a function of (ensemble.seed, i, the parameter) alone,
// drawn from Philox4x64-10 (the generator of the perturbations, perturbation.hpp) under its
// own key, so that every thread count, rank count, shard and resume gives every instance
// the same value. The values are drawn on the host, in double, and handed to whatever runs
// the instance. C++17-clean: nvcc compiles it (ensemble_spec.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace chens {

// The parameters a study can vary, in the order of [parameters]'s keys, summary.json and
// states.h5's /instances/parameters columns.
enum class ParameterId : int { mass = 0, length, gravity, bond_length, lj_epsilon, penalty, h };
inline constexpr int parameter_count = 7;
// The key of [parameters] and the model key it varies ("mass", ..., "h").
const char* parameter_name(ParameterId p);

enum class LawKind : int { fixed = 0, uniform, normal, log_uniform, list };

struct ParameterLaw {
  LawKind kind = LawKind::fixed;
  double a = 0.0;              // uniform, log-uniform: the lower bound; normal: the mean
  double b = 0.0;              // uniform, log-uniform: the upper bound; normal: the standard deviation
  std::vector<double> values;  // list: instance i takes values[i mod values.size()]

  bool varies() const { return kind != LawKind::fixed; }
};

// law_text (the law as the study writes it): study/study_values.hpp.

// Instance `instance`'s draw from `law` (parameter p, ensemble seed `seed`):
//   uniform(a, b)      a + (b - a) u, u uniform in [0, 1) from 53 random bits
//   log-uniform(a, b)  exp(log a + (log b - log a) u)
//   normal(m, s)       m + s sqrt(-2 log u1) cos(2 pi u2) (Box-Muller, u1 in (0, 1])
//   list               values[instance mod size]
// u, u1, u2 come from Philox4x64-10 keyed by (seed, 1) at counter (instance, p, 0, 0).
double draw(const ParameterLaw& law, std::uint64_t seed, std::uint64_t instance, ParameterId p);

// One instance's values: value[p] where bit p of `varied` is set, the study's own elsewhere.
struct InstanceParameters {
  std::array<double, parameter_count> value{};
  unsigned varied = 0;

  bool has(ParameterId p) const { return (varied >> static_cast<int>(p)) & 1u; }
  double operator[](ParameterId p) const { return value[static_cast<std::size_t>(p)]; }
};

// What an ensemble varies (EnsembleSpec::parameters).
struct ParameterEnsemble {
  std::uint64_t seed = 0;
  std::array<ParameterLaw, parameter_count> law{};
  // Fixed-step methods sample on each instance's own step grid, so a drawn h is rounded to
  // h_grid / n, n = max(1, round(h_grid / draw)), h_grid = output.sample_dt: every instance
  // then samples at the same times. 0 (adaptive methods): h is the initial trial step, as drawn.
  double h_grid = 0.0;

  bool varies(ParameterId p) const { return law[static_cast<std::size_t>(p)].varies(); }
  bool varies() const {
    for (const ParameterLaw& l : law)
      if (l.varies()) return true;
    return false;
  }
  // Grouped statistics ([parameters] group_by, docs/parameter_ensembles.md): the instances
  // fall into groups by their value of one varied parameter, and each group gets the
  // ensemble's statistics of its own. A list's groups are its distinct values, ascending
  // (group_values); a drawn parameter's are the bins [group_edges[g], group_edges[g + 1]),
  // the last one closed. group_by < 0: no groups.
  int group_by = -1;
  std::vector<double> group_values;
  std::vector<double> group_edges;

  // Instance `instance`'s value of p (a varied parameter), h rounded onto the grid.
  double value(ParameterId p, std::uint64_t instance) const;
  // Every varied parameter of instance `instance` (its ensemble index).
  InstanceParameters at(std::uint64_t instance) const;

  std::size_t groups() const {
    if (group_by < 0) return 0;
    if (!group_values.empty()) return group_values.size();
    return group_edges.size() < 2 ? 0 : group_edges.size() - 1;
  }
  // The group of instance `instance` (its ensemble index), or -1 where its value lies in none
  // (a drawn value outside group_edges: refused before a run, study_parameters.cpp).
  int group_of(std::uint64_t instance) const;
  // The group a value falls in, or -1 (a list's value: the group of that value).
  int group_of_value(double v) const;
  // Group g's values: its list value (lo == hi), or its bin [lo, hi).
  double group_lo(std::size_t g) const { return group_values.empty() ? group_edges[g] : group_values[g]; }
  double group_hi(std::size_t g) const { return group_values.empty() ? group_edges[g + 1] : group_values[g]; }
};

// The largest number of groups a study may ask for (each adds the ensemble's statistics).
inline constexpr std::size_t max_parameter_groups = 64;

}  // namespace chens
