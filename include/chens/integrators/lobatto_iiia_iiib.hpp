// The 3-stage Lobatto IIIA-IIIB pair (order 4) for q' = M^-1 p, p' = -grad V(q) - J(q)^T lambda,
// phi(q) = 0 (formulations/constrained.hpp): Jay, "Symplectic partitioned Runge-Kutta
// methods for constrained Hamiltonian systems", SIAM J. Numer. Anal. 33 (1996) 368-387;
// Hairer-Lubich-Wanner, Geometric Numerical Integration, 2nd ed., §VII.1.5 (the 2-stage pair
// is RATTLE). With F_j = -grad V(Q_j) - J(Q_j)^T Lambda_j,
//   Q_i = q_n + h sum_j a_ij M^-1 P_j      (IIIA: a = [0 0 0; 5/24 1/3 -1/24; 1/6 2/3 1/6]),
//   P_i = p_n + h sum_j ahat_ij F_j       (IIIB: ahat = [1/6 -1/6 0; 1/6 1/3 0; 1/6 5/6 0]),
//   phi(Q_i) = 0 (i = 2, 3; Q_1 = q_n),   q_n+1 = Q_3,   p_n+1 = p_n + h (F_1 + 4 F_2 + F_3) / 6,
//   J(q_n+1) M^-1 p_n+1 = 0 (Lambda_3 enters p_n+1 alone: the mass-orthogonal momentum projection).
// Eliminating the P_j (the tableaus' products, checked against the tableaus themselves by a
// dense solve in tests/test_lobatto.cpp):
//   Q_2 = q_n + h/2 M^-1 p_n + h^2 M^-1 (F_1 / 12 + F_2 / 24),
//   Q_3 = q_n + h   M^-1 p_n + h^2 M^-1 (F_1 / 6  + F_2 / 3).
// Unknowns X = h^2/12 Lambda_1, Y = h^2/24 Lambda_2 and Q_2 (through grad V(Q_2) and J(Q_2)):
//   Q_2 = qbar_2 - M^-1 (h^2/24 grad V(Q_2) + J(q_n)^T X + J(Q_2)^T Y),
//   Q_3 = qbar_3 - M^-1 (h^2/3  grad V(Q_2) + 2 J(q_n)^T X + 8 J(Q_2)^T Y).
// Solved as RATTLE's position step is (integrators/rattle.hpp): Newton on the constraints,
// the force and J(Q_2) at the current iterate. The Newton matrix is simplified to
//   [C_2 C_2; 2 C_3 8 C_3],   C_i = J(Q_i) M^-1 J(q_n)^T (the model's cross_gram),
// i.e. J(Q_2) ~ J(q_n) in the columns of Y: its inverse is two solves with the model's own
// Newton matrices (tridiagonal for chains). Q_2 depends on itself (through grad V(Q_2) and
// J(Q_2)^T Y, terms of size h^2) and Q_3 on Q_2, which the matrix leaves out: the iteration
// converges linearly at a rate O(h^2) (measured: 3 sweeps per step at h = 0.02 and 4.6 at
// h = 0.1 on the Lennard-Jones hexagon to tol = 1e-12, where RATTLE's Newton takes 2 and
// 2.4; solving the linearised system exactly instead, by inner iterations, saved under 0.3).
// It stops when max |phi(Q_2)|, max |phi(Q_3)| <= tol and Q_2 moved by at most
// tol (1 + max |Q_2|) in the last sweep. The status counts each Newton correction as an
// iteration and each force evaluation as a right-hand side: q_n's, one per sweep (iterations
// + 1) and Q_3's. The method is symmetric, symplectic, of order 4 on the manifold (order
// 2s - 2, Jay 1996), and keeps phi = 0 (to tol) and psi = 0 (to rounding).
#pragma once

#include <chens/config.hpp>
#include <chens/integrators/status.hpp>
#include <chens/linalg/vec.hpp>
#include <chens/projections/momentum.hpp>

namespace chens {

template <class Real>
struct LobattoIIIAB3 {
  static constexpr bool adaptive = false;
  static constexpr bool has_lanes = false;  // Newton iteration counts differ per instance
  static constexpr int order = 4;
  Real tol;            // on max_a |phi_a| at Q_2 and Q_3 (and Q_2's last move, relative)
  int max_iterations;  // Newton sweeps per step

  // The method over another arithmetic type (dual numbers: geometry/tangent_system.hpp).
  template <class R>
  CHENS_HD LobattoIIIAB3<R> rebound() const {
    return LobattoIIIAB3<R>{R(tol), max_iterations};
  }

  template <class System>
  CHENS_HD StepStatus step(const System& sys, const typename System::State& z, Real h, typename System::State& z_new) const {
    using Model = decltype(sys.model);
    const Model& model = sys.model;
    StepStatus st;
    const auto q = Model::q_of(z);
    const auto p = Model::p_of(z);
    const Real h2 = h * h;
    const auto f1 = model.grad_potential(q);
    const auto v = model.minv_mul(p);
    const auto a1 = model.minv_mul(f1);
    const auto qbar2 = q + (h / Real(2)) * v - (h2 / Real(12)) * a1;
    const auto qbar3 = q + h * v - (h2 / Real(6)) * a1;
    auto X = Model::Multipliers::zero();
    auto Y = Model::Multipliers::zero();
    auto jx = model.jac_t_mul(q, X);         // J(q_n)^T X
    auto q2 = qbar2 - (h2 / Real(24)) * a1;  // the force of q_n for Q_2's, no constraint force
    auto f2 = f1;
    auto jy = jx;  // J(Q_2)^T Y at the Q_2 that f2 is the force of
    auto q3 = qbar3;
    int forces = 1;
    st.converged = false;
    for (int it = 0; it <= max_iterations; ++it) {
      f2 = model.grad_potential(q2);
      jy = model.jac_t_mul(q2, Y);
      ++forces;
      const auto gx = model.minv_mul(jx);
      const auto gy = model.minv_mul(jy);
      const auto a2 = model.minv_mul(f2);
      const auto q2n = qbar2 - (h2 / Real(24)) * a2 - gx - gy;
      q3 = qbar3 - (h2 / Real(3)) * a2 - Real(2) * gx - Real(8) * gy;
      const auto r2 = model.phi(q2n);
      const auto r3 = model.phi(q3);
      const Real e2 = max_abs(r2), e3 = max_abs(r3);
      const Real res = e2 > e3 ? e2 : e3;
      const Real moved = max_abs(q2n - q2);
      q2 = q2n;
      if (res <= tol && moved <= tol * (Real(1) + max_abs(q2))) {
        st.converged = true;
        break;
      }
      if (it == max_iterations || !(res == res) || !(moved == moved)) break;
      // [C_2 C_2; 2 C_3 8 C_3] (dX, dY) = (r2, r3): C_2 (dX + dY) = r2, C_3 (2 dX + 8 dY) = r3.
      const auto s2 = model.cross_gram(q2, q).solve(r2);
      const auto s3 = model.cross_gram(q3, q).solve(r3);
      const auto dY = (Real(1) / Real(6)) * (s3 - Real(2) * s2);
      const auto dX = s2 - dY;
      X = X + dX;
      Y = Y + dY;
      jx = model.jac_t_mul(q, X);
      // Q_2 moved to first order with the correction, so that the next sweep's force and
      // J(Q_2) are taken where Q_2 now lies: without it they lag a sweep behind, and the
      // iteration needs about twice the sweeps (measured on the hexagon at h = 0.1).
      q2 = q2 - model.minv_mul(model.jac_t_mul(q, dX) + model.jac_t_mul(q2, dY));
      st.iterations = it + 1;
    }
    // p_n+1 from the forces and constraint forces that made Q_3 (h F_1 / 6 carries
    // -J(q_n)^T 2X / h, 2 h F_2 / 3 carries -J(Q_2)^T 16 Y / h), Lambda_3 by the projection.
    const auto f3 = model.grad_potential(q3);
    ++forces;
    const Real ih = Real(1) / h;
    const auto p_new =
        p - (h / Real(6)) * f1 - (Real(2) * h / Real(3)) * f2 - (h / Real(6)) * f3 - ih * (Real(2) * jx + Real(16) * jy);
    z_new = Model::join(q3, p_new);
    momentum_project(model, z_new);
    st.rhs_evals = forces;  // force (grad V) evaluations: q_n, each sweep's Q_2, Q_3
    st.finite = all_finite(z_new);
    return st;
  }
};

}  // namespace chens
