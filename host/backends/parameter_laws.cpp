#include "backends/parameter_laws.hpp"

#include <Random123/philox.h>

#include <algorithm>
#include <cmath>

#include "backends/step_grid.hpp"

namespace chens {

const char* parameter_name(ParameterId p) {
  switch (p) {
    case ParameterId::mass: return "mass";
    case ParameterId::length: return "length";
    case ParameterId::gravity: return "gravity";
    case ParameterId::bond_length: return "bond_length";
    case ParameterId::lj_epsilon: return "lj_epsilon";
    case ParameterId::penalty: return "penalty";
    case ParameterId::h: return "h";
  }
  return "?";
}

namespace {

// The 53 leading bits of x as a double in [0, 1), exactly (perturbation.hpp's uniform_01).
double unit_interval(std::uint64_t x) { return static_cast<double>(x >> 11) * 0x1p-53; }

}  // namespace

double draw(const ParameterLaw& law, std::uint64_t seed, std::uint64_t instance, ParameterId p) {
  if (law.kind == LawKind::list) return law.values[instance % law.values.size()];
  if (law.kind == LawKind::fixed) return law.a;
  // Key word 1 = 1 sets these streams apart from the perturbations' (key word 1 = 0).
  r123::Philox4x64 rng;
  const r123::Philox4x64::key_type key = {{seed, 1}};
  const r123::Philox4x64::ctr_type ctr = {{instance, static_cast<std::uint64_t>(p), 0, 0}};
  const r123::Philox4x64::ctr_type r = rng(ctr, key);
  const double u = unit_interval(r[0]);
  switch (law.kind) {
    case LawKind::uniform: return law.a + (law.b - law.a) * u;
    case LawKind::log_uniform: {
      const double la = std::log(law.a), lb = std::log(law.b);
      return std::exp(la + (lb - la) * u);
    }
    case LawKind::normal: {
      const double u1 = 1.0 - u;  // (0, 1]: the logarithm stays finite
      const double u2 = unit_interval(r[1]);
      return law.a + law.b * (std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586476925286766559 * u2));
    }
    default: return law.a;
  }
}

double ParameterEnsemble::value(ParameterId p, std::uint64_t instance) const {
  const ParameterLaw& l = law[static_cast<std::size_t>(p)];
  const double v = draw(l, seed, instance, p);
  // A list's step sizes are checked to divide output.sample_dt as given (study_parameters.cpp),
  // so that an instance with h = 0.1 is the single run with integrator.h = 0.1 bit for bit.
  if (p != ParameterId::h || l.kind == LawKind::list) return v;
  return on_sample_grid(v, h_grid);
}

InstanceParameters ParameterEnsemble::at(std::uint64_t instance) const {
  InstanceParameters out;
  for (int p = 0; p < parameter_count; ++p) {
    if (!law[static_cast<std::size_t>(p)].varies()) continue;
    out.value[static_cast<std::size_t>(p)] = value(static_cast<ParameterId>(p), instance);
    out.varied |= 1u << p;
  }
  return out;
}

int ParameterEnsemble::group_of_value(double v) const {
  if (group_by < 0) return -1;
  if (!group_values.empty()) {
    const auto it = std::lower_bound(group_values.begin(), group_values.end(), v);
    return it != group_values.end() && *it == v ? static_cast<int>(it - group_values.begin()) : -1;
  }
  if (group_edges.size() < 2 || !(v >= group_edges.front() && v <= group_edges.back())) return -1;
  // The last bin holds its upper edge.
  const auto it = std::upper_bound(group_edges.begin(), group_edges.end(), v);
  return std::min(static_cast<int>(it - group_edges.begin()) - 1, static_cast<int>(group_edges.size()) - 2);
}

int ParameterEnsemble::group_of(std::uint64_t instance) const {
  if (group_by < 0) return -1;
  const ParameterId p = static_cast<ParameterId>(group_by);
  const ParameterLaw& l = law[static_cast<std::size_t>(group_by)];
  // A list groups by its values as given (value() keeps them so too).
  return group_of_value(l.kind == LawKind::list ? l.values[instance % l.values.size()] : value(p, instance));
}

}  // namespace chens
