// Per-instance diagnostics at a sample time (001 §6, 002 §6): integration error
// |z(t) - z_ref(t)|_2 over (q, p) of the physical state, energy error |H - H(0)|, and
// the largest constraint residuals max_a |phi_a|, max_a |psi_a|.
#pragma once

#include <cmath>

#include <chens/config.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

enum class MetricId : int { integration_error = 0, energy_error = 1, phi = 2, psi = 3 };
inline constexpr int metric_count = 4;
inline constexpr const char* metric_name(int i) {
  switch (i) {
    case 0: return "integration_error";
    case 1: return "energy_error";
    case 2: return "phi";
    case 3: return "psi";
  }
  return "?";
}

template <class Real>
struct Metrics {
  Real v[metric_count];
};

// A model without a reference solution: integration error is not reported.
template <class Real, int S>
struct NoReference {
  static constexpr bool available = false;
  bool projected = false;
  template <class Model>
  CHENS_HD static NoReference make(const Model&, const Vec<Real, S>&) { return NoReference{}; }
  CHENS_HD Vec<Real, S> eval(Real) const { return Vec<Real, S>::zero(); }
};

// Physical-state diagnostics. Returns false when any reported value is not finite.
template <class System, class Reference>
CHENS_HD bool measure(const System& sys, const typename System::State& z, typename System::Real energy0,
                      const Reference& ref, typename System::Real t, Metrics<typename System::Real>& out) {
  using Real = typename System::Real;
  using Model = decltype(sys.model);
  using std::fabs;
  using std::sqrt;
  const auto phys = sys.physical(z);
  out.v[1] = fabs(sys.model.energy(phys) - energy0);
  out.v[2] = max_abs(sys.model.phi(Model::q_of(phys)));
  out.v[3] = max_abs(sys.model.psi(phys));
  bool ok = all_finite(Vec<Real, 3>{{out.v[1], out.v[2], out.v[3]}});
  if constexpr (Reference::available) {
    const auto d = phys - ref.eval(t);
    out.v[0] = sqrt(dot(d, d));
    ok = ok && all_finite(Vec<Real, 1>{{out.v[0]}});
  } else {
    out.v[0] = Real(0);
  }
  return ok;
}

}  // namespace chens
