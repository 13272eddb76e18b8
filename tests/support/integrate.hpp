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
