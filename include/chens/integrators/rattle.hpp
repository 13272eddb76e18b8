// RATTLE (Andersen 1983; Leimkuhler & Skeel 1994; Hairer-Lubich-Wanner, Geometric
// Numerical Integration, §VII.1.4) for q' = M^-1 p, p' = -grad V(q) - J(q)^T lambda,
// phi(q) = 0 (formulations/constrained.hpp):
//   p_1/2   = p_n - h/2 (grad V(q_n) + J(q_n)^T lambda_n),
//   q_n+1   = q_n + h M^-1 p_1/2,             phi(q_n+1) = 0,
//   p_n+1   = p_1/2 - h/2 (grad V(q_n+1) + J(q_n+1)^T mu_n),   J(q_n+1) M^-1 p_n+1 = 0.
// The position equation is solved for Lambda = h^2/2 lambda_n by Newton's method on
//   phi(qbar - M^-1 J(q_n)^T Lambda) = 0,   qbar = q_n + h M^-1 (p_n - h/2 grad V(q_n)),
// with the matrix J(q^(k)) M^-1 J(q_n)^T of the current iterate (tridiagonal for chains;
// the "matrix SHAKE" of Barth, Kuczera, Leimkuhler & Skeel, J. Comput. Chem. 16 (1995)),
// until max_a |phi_a(q^(k))| <= tol. Classical SHAKE sweeps the bonds one at a time
// (Gauss-Seidel) towards the same solution with linear convergence. The velocity
// equation is linear in mu: it is the mass-orthogonal momentum projection at q_n+1.
// RATTLE is symplectic and symmetric, of order 2, and keeps phi = 0 (to tol) and
// psi = 0 (to rounding) at every step.
#pragma once

#include <chens/config.hpp>
#include <chens/integrators/status.hpp>
#include <chens/linalg/vec.hpp>
#include <chens/projections/momentum.hpp>

namespace chens {

template <class Real>
struct Rattle {
  static constexpr bool adaptive = false;
  static constexpr bool has_lanes = false;  // Newton iteration counts differ per instance
  static constexpr int order = 2;
  Real tol;            // on max_a |phi_a| after the position step
  int max_iterations;  // Newton sweeps per step

  // The method over another arithmetic type (dual numbers: geometry/tangent_system.hpp).
  template <class R>
  CHENS_HD Rattle<R> rebound() const {
    return Rattle<R>{R(tol), max_iterations};
  }

  template <class System>
  CHENS_HD CHENS_FORCEINLINE StepStatus step(const System& sys, const typename System::State& z, Real h,
                                             typename System::State& z_new) const {
    using Model = decltype(sys.model);
    const Model& model = sys.model;
    StepStatus st;
    const auto q = Model::q_of(z);
    const Real half = h / Real(2);
    const auto pbar = Model::p_of(z) - half * model.grad_potential(q);
    auto qk = q + h * model.minv_mul(pbar);
    auto lam = Model::Multipliers::zero();  // Lambda = h^2/2 lambda_n, accumulated
    st.converged = false;
    for (int it = 0; it <= max_iterations; ++it) {
      const auto r = model.phi(qk);
      const Real res = max_abs(r);
      if (res <= tol) {
        st.converged = true;
        break;
      }
      if (it == max_iterations || !(res == res)) break;
      const auto d = model.cross_gram(qk, q).solve(r);
      lam = lam + d;
      qk = qk - model.minv_mul(model.jac_t_mul(q, d));
      st.iterations = it + 1;
    }
    const Real ih = Real(1) / h;
    const auto p_half = pbar - ih * model.jac_t_mul(q, lam);
    z_new = Model::join(qk, p_half - half * model.grad_potential(qk));
    momentum_project(model, z_new);
    st.rhs_evals = 2;  // force (grad V) evaluations
    st.finite = all_finite(z_new);
    return st;
  }
};

}  // namespace chens
