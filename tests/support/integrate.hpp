// Small drivers for tests: n fixed steps of one method on one formulation, and a
// least-squares slope for convergence orders.
#pragma once

#include <cmath>
#include <vector>

#include <chens/integrators/status.hpp>
#include <chens/linalg/vec.hpp>

namespace chens::test {

// Integrates n steps of size T/n; returns the final state in the formulation's variables.
template <class System, class Method>
typename System::State integrate_fixed(const System& sys, const Method& method, typename System::State z, double T, int n) {
  const double h = T / n;
  for (int i = 0; i < n; ++i) {
    typename System::State zn;
    const StepStatus st = method.step(sys, z, h, zn);
    if (!st.finite || !st.converged) return typename System::State{{NAN, NAN, NAN, NAN}};
    z = zn;
  }
  return z;
}

// Central difference of one step's map along v: (step(z + eps v) - step(z - eps v)) / 2 eps,
// the finite-difference oracle of the dual-number tangents (geometry/tangent_system.hpp).
template <class System, class Method>
typename System::State fd_step_derivative(const System& sys, const Method& m, const typename System::State& z,
                                          const typename System::State& v, double h, double eps) {
  typename System::State zp, zm;
  m.step(sys, axpy(z, eps, v), h, zp);
  m.step(sys, axpy(z, -eps, v), h, zm);
  return (1.0 / (2.0 * eps)) * (zp - zm);
}

// The largest |H - H0| over the first and over the last tenth of n fixed steps of size h
// from z: a symplectic method's energy error oscillates, bounded; a drift shows as the last
// tenth's exceeding the first's several times. steps_done < n where a step was not finite.
struct EnergyTenths {
  double first = 0, last = 0;
  int steps_done = 0;
};
template <class System, class Method>
EnergyTenths energy_error_tenths(const System& sys, const Method& method, typename System::State z, double h, int n) {
  EnergyTenths r;
  const double e0 = sys.model.energy(z);
  for (int i = 0; i < n; ++i) {
    typename System::State zn;
    if (!method.step(sys, z, h, zn).finite) return r;
    z = zn;
    r.steps_done = i + 1;
    const double e = std::fabs(sys.model.energy(z) - e0);
    if (i < n / 10) r.first = e > r.first ? e : r.first;
    if (i >= n - n / 10) r.last = e > r.last ? e : r.last;
  }
  return r;
}

// Slope of log(y) against log(x) by least squares.
inline double loglog_slope(const std::vector<double>& x, const std::vector<double>& y) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

}  // namespace chens::test
