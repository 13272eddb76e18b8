// The implicit midpoint rule with midpoint (stage) projection, 004 §4: the stage value is
// put on the constraint manifold and the step is taken with its slope,
//   W = P(z_n + h/2 f(W)),   z_n+1 = z_n + h f(W),
// where P is chens's projection onto the manifold (the enabled position and/or momentum
// projections of projections/, position first; 004 projects orthogonally with the normal
// at W, P uses the normal at the unprojected point for positions, which agrees to first
// order in the residual). The end point itself is not projected: its residuals are what
// 004 Fig. 4.4 shows to be unstable, against the endpoint projection of Fig. 4.3 (the
// ordinary projections after each step, projections/policy.hpp).
// Solved by fixed-point iteration on W, stopped when max |W^(k+1) - W^(k)| <= tol.
#pragma once

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/integrators/status.hpp>
#include <chens/linalg/vec.hpp>
#include <chens/projections/momentum.hpp>
#include <chens/projections/position.hpp>

namespace chens {

template <class Real>
struct MidpointProjection {
  static constexpr bool adaptive = false;
  static constexpr bool has_lanes = false;
  static constexpr int order = 2;
  Real tol;  // fixed-point iteration on the stage
  int max_iterations;
  bool position;  // project the stage's positions (Newton, projection_tol)
  bool momentum;  // project the stage's momenta (exact)
  Real projection_tol;
  int projection_max_iterations;

  template <class R>
  CHENS_HD MidpointProjection<R> rebound() const {
    return MidpointProjection<R>{R(tol), max_iterations, position, momentum, R(projection_tol), projection_max_iterations};
  }

  template <class System>
  CHENS_HD StepStatus step(const System& sys, const typename System::State& z, Real h, typename System::State& z_new) const {
    using State = typename System::State;
    StepStatus st;
    State W = z;
    bool projected_ok = project(sys, W);
    State k;
    st.converged = false;
    for (int it = 0; it < max_iterations; ++it) {
      eval_rhs(sys, W, k);
      st.rhs_evals += 1;
      State Wn = axpy(z, h / Real(2), k);
      projected_ok = project(sys, Wn) && projected_ok;
      const Real delta = max_abs(Wn - W);
      W = Wn;
      st.iterations = it + 1;
      if (!(delta == delta)) break;
      if (delta <= tol) {
        st.converged = true;
        break;
      }
    }
    eval_rhs(sys, W, k);
    st.rhs_evals += 1;
    z_new = axpy(z, h, k);
    st.converged = st.converged && projected_ok;
    st.finite = all_finite(z_new);
    return st;
  }

 private:
  template <class System>
  CHENS_HD bool project(const System& sys, typename System::State& w) const {
    bool ok = true;
    if (position) ok = position_project(sys.model, w, projection_tol, projection_max_iterations).converged;
    if constexpr (!System::has_impetus) {
      if (momentum) momentum_project(sys.model, w);
    }
    return ok;
  }
};

}  // namespace chens
