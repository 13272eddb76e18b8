// The high-order embedded Runge-Kutta pairs (integrators/dop853.hpp, integrators/vern9.hpp;
// issue 44, item 3) as one stepper over their tableaus: an explicit step's stages from the
// tableau's a(i, j), the solution from its b(i), the next step's f(z_new) (none is FSAL), and
// the tableau's own error norm and controller constants. (Dopri5 keeps its own stage loop for
// now: it is the engine's adaptive method, and its thread-group norm needs the stages as they
// are.)
#pragma once

#include <cmath>

#include <chens/config.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/step_control.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

// k[1..S-1] of a step of size h from z, with k[0] = f(z) given: k_i = f(z + h sum_j a_ij k_j).
template <class Tableau, class System, class Real>
CHENS_HD void explicit_stages(const System& sys, const typename System::State& z, Real h,
                              typename System::State (&k)[Tableau::stages]) {
  for (int i = 1; i < Tableau::stages; ++i) {
    typename System::State zi = z;
    for (int j = 0; j < i; ++j)
      if (Tableau::a(i, j) != 0.0) zi = axpy(zi, h * Real(Tableau::a(i, j)), k[j]);
    eval_rhs(sys, zi, k[i]);
  }
}

// z + h sum_i w(i) k_i over the S stages, the zero weights skipped (w returns double).
template <int S, class State, class Real, class Weight>
CHENS_HD State weighted_stages(const State& z, Real h, const State (&k)[S], Weight w) {
  State out = z;
  for (int i = 0; i < S; ++i)
    if (w(i) != 0.0) out = axpy(out, h * Real(w(i)), k[i]);
  return out;
}

// The error scale of component c, atol + rtol max(|z_c|, |z_new_c|) (Hairer's codes, and
// Dopri5's norm).
template <class State, class Real>
CHENS_HD Real error_scale(const State& z, const State& z_new, int c, Real rtol, Real atol) {
  using std::fabs;
  const Real a = fabs(z[c]), b = fabs(z_new[c]);
  return atol + rtol * (a > b ? a : b);
}

// A pair with per-instance adaptive step size, as Dopri5 is one: Tableau has stages, order,
// name, a(i, j), b(i), error_norm(k, h, z, z_new, rtol, atol) and the controller's constants
// `control` (step_control.hpp).
template <class Tableau_, class Real>
struct EmbeddedPair {
  using Tableau = Tableau_;
  static constexpr bool adaptive = true;
  static constexpr bool has_lanes = false;  // step sizes differ per instance
  static constexpr int order = Tableau::order;
  static constexpr int rhs_per_attempt = Tableau::stages;  // stages 2..S and f(z_new)
  Real rtol;
  Real atol;

  // One trial step of size h from z with k1 = f(z), as Dopri5::attempt: z_new the high-order
  // solution, k_new = f(z_new) (the next k1), the scaled error norm returned.
  template <class System>
  CHENS_HD Real attempt(const System& sys, const typename System::State& z, const typename System::State& k1, Real h,
                        typename System::State& z_new, typename System::State& k_new) const {
    typename System::State k[Tableau::stages];
    k[0] = k1;
    explicit_stages<Tableau>(sys, z, h, k);
    z_new = weighted_stages(z, h, k, [](int i) { return Tableau::b(i); });
    eval_rhs(sys, z_new, k_new);
    return Tableau::error_norm(k, h, z, z_new, rtol, atol);
  }

  // Next step size after a trial of size h with error norm err (Hairer's controller).
  CHENS_HD Real next_step(Dopri5Controller<Real>& ctl, Real err, Real h, bool accepted) const {
    return hairer_next_step(Tableau::control, ctl, err, h, accepted);
  }
};

}  // namespace chens
