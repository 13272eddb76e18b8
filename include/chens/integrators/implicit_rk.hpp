// Implicit Runge-Kutta stepping (Gauss-Legendre tableaus) with a fixed-point
// (functional) iteration on the stage derivatives, as 002 §7 solves the implicit
// midpoint rule. The iteration starts from k_i = f(z) and stops when
//   h * max_i |k_i^(n+1) - k_i^(n)|_inf <= tol,
// i.e. when the stage values move by at most tol (an absolute tolerance, as in 002 §7).
// A step that exhausts max_iterations still completes with the last iterate and reports
// converged = false; the ensemble driver counts it.
#pragma once

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/integrators/status.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

template <class Tableau, class Real>
struct ImplicitRk {
  static constexpr bool adaptive = false;
  static constexpr bool has_lanes = false;  // iteration counts differ per instance
  static constexpr int order = Tableau::order;
  static constexpr int stages = Tableau::stages;
  Real tol;
  int max_iterations;

  // The method over another arithmetic type (dual numbers: geometry/tangent_system.hpp).
  template <class R>
  CHENS_HD ImplicitRk<Tableau, R> rebound() const {
    return ImplicitRk<Tableau, R>{R(tol), max_iterations};
  }

  template <class System>
  CHENS_HD CHENS_FORCEINLINE StepStatus step(const System& sys, const typename System::State& z, Real h,
                                             typename System::State& z_new) const {
    using State = typename System::State;
    constexpr int S = Tableau::stages;
    StepStatus st;
    State k[S];
    eval_rhs(sys, z, k[0]);
    st.rhs_evals = 1;
    CHENS_UNROLL
    for (int i = 1; i < S; ++i) k[i] = k[0];
    st.converged = false;
    for (int it = 0; it < max_iterations; ++it) {
      State kn[S];
      CHENS_UNROLL
      for (int i = 0; i < S; ++i) {
        State zi = z;
        CHENS_UNROLL
        for (int j = 0; j < S; ++j) zi = axpy(zi, h * Real(Tableau::a(i, j)), k[j]);
        eval_rhs(sys, zi, kn[i]);
      }
      st.rhs_evals += S;
      st.iterations = it + 1;
      Real delta = Real(0);
      CHENS_UNROLL
      for (int i = 0; i < S; ++i) {
        const Real d = max_abs(kn[i] - k[i]);
        delta = d > delta ? d : delta;
        k[i] = kn[i];
      }
      delta = delta * (h < Real(0) ? -h : h);
      if (!(delta == delta)) break;  // NaN: give up, the finiteness check reports it
      if (delta <= tol) {
        st.converged = true;
        break;
      }
    }
    z_new = z;
    CHENS_UNROLL
    for (int i = 0; i < S; ++i) z_new = axpy(z_new, h * Real(Tableau::b(i)), k[i]);
    st.finite = all_finite(z_new);
    return st;
  }
};

}  // namespace chens
