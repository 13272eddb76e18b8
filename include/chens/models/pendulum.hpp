// Planar pendulum in Cartesian coordinates (Seiler 1998b §6 = paper 002 §6; 001 §3).
//
//   H = |p|^2 / (2m) + m g y,          phi = (x^2 + y^2 - l^2) / 2,
//   psi = {phi, H} = J M^-1 p = (x px + y py) / m          (001 eq. 2)
//
// With m = l = g = 1 (the papers' choice) psi is the papers' x px + y py. For general
// m we keep the definition psi = {phi, H} of 001 eq. (2): it is the time derivative of
// phi, so the Dirac-bracket formulas of 002 §5 hold unchanged, and the constraint
// "Gram" matrix Q = {phi, psi} = J M^-1 J^T of 002 eq. (28) is the mass-weighted one
// that the mass-orthogonal projections of 001 §4 / 002 §11 need.
//
// The model exposes the primitives the generic formulations need (002 eqs. 27-31):
// constraint Jacobian products J v and J^T lambda, curvature products
// sum_a lambda_a Hess(phi_a) v, the Gram solve Q^-1, the bracket {psi, H} and S = {psi, psi}.
#pragma once

#include <chens/config.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

// Unit = true is the papers' m = l = g = 1 known at compile time (the fields must hold 1):
// products with 1 fold away and m / |q|^2 becomes a reciprocal, which rounds identically
// (x * 1 = x and 1 / y are exact cases of IEEE arithmetic), so a unit pendulum's states
// equal the run-time one's bit for bit while a step costs about a quarter fewer FP64
// instructions (docs/performance.md). The GPU's lean kernels use it when a study's
// parameters are all 1 (kernels/ensemble_kernels.cuh's unit_twin).
template <class Real_, bool Unit = false>
struct Pendulum {
  using Real = Real_;
  static constexpr int dof = 2;
  static constexpr int constraints = 1;
  static constexpr int state_size = 2 * dof;
  static constexpr bool has_momentum_integrals = false;  // gravity: neither P nor L is conserved
  using State = Vec<Real, state_size>;
  using Coords = Vec<Real, dof>;
  using Multipliers = Vec<Real, constraints>;

  Real m;  // mass
  Real l;  // length
  Real g;  // gravitational acceleration (gravity acts along -y)

  // The parameters as the equations use them: the fields, or 1 for a unit pendulum.
  CHENS_HD CHENS_FORCEINLINE Real mass() const {
    if constexpr (Unit) return Real(1);
    else return m;
  }
  CHENS_HD CHENS_FORCEINLINE Real length() const {
    if constexpr (Unit) return Real(1);
    else return l;
  }
  CHENS_HD CHENS_FORCEINLINE Real gravity() const {
    if constexpr (Unit) return Real(1);
    else return g;
  }
  // Whether the parameters are the papers' m = l = g = 1 (then as_unit() may be used).
  CHENS_HD bool has_unit_parameters() const { return m == Real(1) && l == Real(1) && g == Real(1); }
  CHENS_HD Pendulum<Real, true> as_unit() const { return Pendulum<Real, true>{Real(1), Real(1), Real(1)}; }

  // The same model over another arithmetic type (e.g. D2, two instances per register).
  template <class R>
  using rebind = Pendulum<R, Unit>;
  template <class R>
  CHENS_HD Pendulum<R, Unit> rebound() const {
    return Pendulum<R, Unit>{R(m), R(l), R(g)};
  }

  // Size of phi's values, for round-off-level tolerances.
  CHENS_HD Real constraint_scale() const { return length() * length(); }

  CHENS_HD static Coords q_of(const State& z) { return Coords{{z[0], z[1]}}; }
  CHENS_HD static Coords p_of(const State& z) { return Coords{{z[2], z[3]}}; }
  CHENS_HD static State join(const Coords& q, const Coords& p) { return State{{q[0], q[1], p[0], p[1]}}; }

  CHENS_HD Coords minv_mul(const Coords& v) const {
    const Real im = Real(1) / mass();
    return Coords{{im * v[0], im * v[1]}};
  }
  CHENS_HD Real potential(const Coords& q) const { return mass() * gravity() * q[1]; }
  CHENS_HD Coords grad_potential(const Coords&) const { return Coords{{Real(0), mass() * gravity()}}; }
  CHENS_HD Real energy(const State& z) const {
    return (z[2] * z[2] + z[3] * z[3]) / (Real(2) * mass()) + mass() * gravity() * z[1];
  }

  CHENS_HD Multipliers phi(const Coords& q) const {
    return Multipliers{{(q[0] * q[0] + q[1] * q[1] - length() * length()) / Real(2)}};
  }
  // J v with J = grad phi = q^T.
  CHENS_HD Multipliers jac_mul(const Coords& q, const Coords& v) const { return Multipliers{{q[0] * v[0] + q[1] * v[1]}}; }
  // J^T lambda.
  CHENS_HD Coords jac_t_mul(const Coords& q, const Multipliers& lam) const { return Coords{{lam[0] * q[0], lam[0] * q[1]}}; }
  // sum_a lambda_a Hess(phi_a) v; Hess(phi) = I for the pendulum.
  CHENS_HD Coords hess_phi_mul(const Coords&, const Multipliers& lam, const Coords& v) const {
    return Coords{{lam[0] * v[0], lam[0] * v[1]}};
  }
  // Multiplied by 1/m rather than divided: every use of psi feeds a division by |q|^2,
  // and chained divisions double the latency of the right-hand side (docs/performance.md).
  // The sum is fused explicitly (config.hpp's fmadd): the GPU's momentum projection and its
  // tolerance check round alike in every kernel, and a unit pendulum's like a general one's.
  CHENS_HD Multipliers psi(const State& z) const {
    return Multipliers{{fmadd(z[0], z[2], z[1] * z[3]) * (Real(1) / mass())}};
  }
  // The Gram "factorisation" Q^-1 = m / |q|^2 of one point, reused for every solve there.
  struct Gram {
    Real f;
    CHENS_HD CHENS_FORCEINLINE Multipliers solve(const Multipliers& r) const { return Multipliers{{r[0] * f}}; }
  };
  CHENS_HD Gram gram(const Coords& q) const { return Gram{mass() / fmadd(q[0], q[0], q[1] * q[1])}; }
  // J(qa) M^-1 J(qb)^T = qa . qb / m (RATTLE's Newton matrix).
  CHENS_HD Gram cross_gram(const Coords& qa, const Coords& qb) const {
    return Gram{mass() / (qa[0] * qb[0] + qa[1] * qb[1])};
  }
  // Solve Q x = rhs with Q = J M^-1 J^T = (x^2 + y^2) / m (002 eq. 28, 001 Prop. 2's R).
  // rhs * (m / |q|^2): the factor is the same expression in every solve at q, so the
  // compiler computes its one division once per right-hand side.
  CHENS_HD Multipliers gram_solve(const Coords& q, const Multipliers& rhs) const {
    return Multipliers{{rhs[0] * (mass() / (q[0] * q[0] + q[1] * q[1]))}};
  }
  // {psi, H} = p^T M^-1 Hess(phi) M^-1 p - J M^-1 grad V  (002 eq. 45 for one constraint).
  CHENS_HD Multipliers psi_h_bracket(const State& z) const {
    const Real im = Real(1) / mass();
    return Multipliers{{im * im * (z[2] * z[2] + z[3] * z[3]) - gravity() * z[1]}};
  }
  // The same given grad V (constant for the pendulum: the closed form above is used as is).
  CHENS_HD Multipliers psi_h_bracket(const State& z, const Coords&) const { return psi_h_bracket(z); }
  // S nu with S_ab = {psi_a, psi_b}: a 1x1 skew-symmetric matrix vanishes.
  CHENS_HD Multipliers s_mul(const State&, const Multipliers&) const { return Multipliers{{Real(0)}}; }
};

}  // namespace chens
