// Planar double pendulum in Cartesian coordinates (docs/adding-a-model.md's worked example):
// two point masses m1, m2 at q = (x1, y1, x2, y2), a rigid link of length l1 from the pivot
// at the origin to mass 1 and one of length l2 from mass 1 to mass 2, gravity g along -y:
//
//   H   = |p1|^2 / (2 m1) + |p2|^2 / (2 m2) + V,   V = g (m1 y1 + m2 y2),
//   phi1 = (x1^2 + y1^2 - l1^2) / 2,   phi2 = (|d|^2 - l2^2) / 2,   d = q2 - q1,
//   psi = {phi, H} = J M^-1 p  (001 eq. 2):   psi1 = q1 . v1,   psi2 = d . (v2 - v1),   v = M^-1 p,
//
// the constraint convention of the pendulum (models/pendulum.hpp) and the chain
// (models/chain.hpp). The Jacobian J = d phi / dq has the rows (x1, y1, 0, 0) and
// (-dx, -dy, dx, dy); Hess(phi1) = diag(I, 0), Hess(phi2) = [[I, -I], [-I, I]] (x) I_2. From
// the general definitions (002 eqs. 27-28; the Dirac bracket quantities of 002 eqs. 29-31):
//
//   Q = {phi, psi} = J M^-1 J^T  (002 eq. 28; a 2x2 SPD matrix, solved in closed form):
//     Q11 = |q1|^2 / m1,   Q12 = Q21 = -(q1 . d) / m1,   Q22 = |d|^2 (1/m1 + 1/m2),
//   S = {psi, psi} (skew):   S12 = -S21 = (q1 . (v2 - v1) - d . v1) / m1,
//   {psi_a, H} = v^T Hess(phi_a) v - J_a M^-1 grad V:
//     {psi1, H} = |v1|^2 - q1 . (grad_1 V / m1)                        = |v1|^2 - g y1,
//     {psi2, H} = |v2 - v1|^2 - d . (grad_2 V / m2 - grad_1 V / m1)     = |v2 - v1|^2.
//
// This is the chain of 002 eqs. 42-45 with a third, infinitely heavy atom pinned at the
// origin in front (w0 = 0): Q is its tridiagonal Q, S its S, the brackets its brackets. The
// tests check every primitive against the dense oracle that knows only H and phi
// (tests/test_double_pendulum.cpp). Q is SPD whenever q1 != 0 and d != 0:
// det Q = (|q1|^2 |d|^2 - (q1 . d)^2) / m1^2 + |q1|^2 |d|^2 / (m1 m2) > 0.
//
// Host/device code (CHENS_HD), fixed sizes, trivially copyable, C++17 (nvcc compiles it).
#pragma once

#include <chens/config.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

template <class Real_>
struct DoublePendulum {
  using Real = Real_;
  static constexpr int dof = 4;
  static constexpr int constraints = 2;
  static constexpr int state_size = 2 * dof;
  static constexpr bool has_momentum_integrals = false;  // gravity and the pivot: neither P nor L is conserved
  using State = Vec<Real, state_size>;
  using Coords = Vec<Real, dof>;
  using Multipliers = Vec<Real, constraints>;

  Real m1;  // mass of bob 1 (at the end of link 1)
  Real m2;  // mass of bob 2
  Real l1;  // length of link 1 (pivot - bob 1)
  Real l2;  // length of link 2 (bob 1 - bob 2)
  Real g;   // gravitational acceleration (along -y)

  // The same model over another arithmetic type: D2 (two instances per SSE2 register, the
  // CPU lanes: formulation.hpp's rebound_system) and double (metrics of float runs).
  template <class R>
  using rebind = DoublePendulum<R>;
  template <class R>
  CHENS_HD DoublePendulum<R> rebound() const {
    return DoublePendulum<R>{R(m1), R(m2), R(l1), R(l2), R(g)};
  }

  // Size of phi's values, for round-off-level tolerances (perturbation.hpp).
  CHENS_HD Real constraint_scale() const { return l1 * l1 + l2 * l2; }

  CHENS_HD static Coords q_of(const State& z) { return Coords{{z[0], z[1], z[2], z[3]}}; }
  CHENS_HD static Coords p_of(const State& z) { return Coords{{z[4], z[5], z[6], z[7]}}; }
  CHENS_HD static State join(const Coords& q, const Coords& p) {
    return State{{q[0], q[1], q[2], q[3], p[0], p[1], p[2], p[3]}};
  }

  CHENS_HD Coords minv_mul(const Coords& v) const {
    const Real i1 = Real(1) / m1, i2 = Real(1) / m2;
    return Coords{{i1 * v[0], i1 * v[1], i2 * v[2], i2 * v[3]}};
  }
  CHENS_HD Real potential(const Coords& q) const { return g * (m1 * q[1] + m2 * q[3]); }
  CHENS_HD Coords grad_potential(const Coords&) const { return Coords{{Real(0), m1 * g, Real(0), m2 * g}}; }
  CHENS_HD Real energy(const State& z) const {
    const Real k1 = (z[4] * z[4] + z[5] * z[5]) / (Real(2) * m1);
    const Real k2 = (z[6] * z[6] + z[7] * z[7]) / (Real(2) * m2);
    return k1 + k2 + potential(q_of(z));
  }

  // phi1 = (|q1|^2 - l1^2) / 2, phi2 = (|q2 - q1|^2 - l2^2) / 2.
  CHENS_HD Multipliers phi(const Coords& q) const {
    const Real dx = q[2] - q[0], dy = q[3] - q[1];
    return Multipliers{{(q[0] * q[0] + q[1] * q[1] - l1 * l1) / Real(2), (dx * dx + dy * dy - l2 * l2) / Real(2)}};
  }
  // J v = (q1 . v1, d . (v2 - v1)).
  CHENS_HD Multipliers jac_mul(const Coords& q, const Coords& v) const {
    const Real dx = q[2] - q[0], dy = q[3] - q[1];
    return Multipliers{{q[0] * v[0] + q[1] * v[1], dx * (v[2] - v[0]) + dy * (v[3] - v[1])}};
  }
  // J^T lambda = (lambda1 q1 - lambda2 d, lambda2 d).
  CHENS_HD Coords jac_t_mul(const Coords& q, const Multipliers& lam) const {
    const Real fx = lam[1] * (q[2] - q[0]), fy = lam[1] * (q[3] - q[1]);
    return Coords{{lam[0] * q[0] - fx, lam[0] * q[1] - fy, fx, fy}};
  }
  // sum_a lambda_a Hess(phi_a) v = (lambda1 v1 - lambda2 (v2 - v1), lambda2 (v2 - v1)).
  CHENS_HD Coords hess_phi_mul(const Coords&, const Multipliers& lam, const Coords& v) const {
    const Real fx = lam[1] * (v[2] - v[0]), fy = lam[1] * (v[3] - v[1]);
    return Coords{{lam[0] * v[0] - fx, lam[0] * v[1] - fy, fx, fy}};
  }
  // psi = {phi, H} = J M^-1 p (001 eq. 2).
  CHENS_HD Multipliers psi(const State& z) const { return jac_mul(q_of(z), minv_mul(p_of(z))); }

  // A 2x2 matrix A = [[a11, a12], [a21, a22]] and 1 / det A: solves by Cramer's rule
  // (for the SPD Q the forward error is ~ cond(Q) u, as an LU solve's).
  struct Gram {
    Real a11, a12, a21, a22, idet;
    CHENS_HD static Gram factor(Real a11, Real a12, Real a21, Real a22) {
      return Gram{a11, a12, a21, a22, Real(1) / (a11 * a22 - a12 * a21)};
    }
    CHENS_HD CHENS_FORCEINLINE Multipliers solve(const Multipliers& r) const {
      return Multipliers{{(a22 * r[0] - a12 * r[1]) * idet, (a11 * r[1] - a21 * r[0]) * idet}};
    }
  };
  // A = J(qa) M^-1 J(qb)^T (RATTLE's Newton matrix; qa = qb gives Q of 002 eq. 28):
  //   A11 = qa1 . qb1 / m1,  A12 = -(qa1 . db) / m1,  A21 = -(da . qb1) / m1,
  //   A22 = (da . db) (1/m1 + 1/m2).
  CHENS_HD Gram cross_gram(const Coords& qa, const Coords& qb) const {
    const Real i1 = Real(1) / m1, i2 = Real(1) / m2;
    const Real dax = qa[2] - qa[0], day = qa[3] - qa[1];
    const Real dbx = qb[2] - qb[0], dby = qb[3] - qb[1];
    return Gram::factor(i1 * (qa[0] * qb[0] + qa[1] * qb[1]), -i1 * (qa[0] * dbx + qa[1] * dby),
                        -i1 * (dax * qb[0] + day * qb[1]), (i1 + i2) * (dax * dbx + day * dby));
  }
  CHENS_HD Gram gram(const Coords& q) const { return cross_gram(q, q); }
  CHENS_HD Multipliers gram_solve(const Coords& q, const Multipliers& rhs) const { return gram(q).solve(rhs); }

  // {psi_a, H} = v^T Hess(phi_a) v - J_a M^-1 grad V (002 eq. 45's form for these two
  // constraints), given gV = grad V(q): (|v1|^2 - q1 . a1, |v2 - v1|^2 - d . (a2 - a1)), a = M^-1 gV.
  CHENS_HD Multipliers psi_h_bracket(const State& z, const Coords& gV) const {
    const Coords q = q_of(z);
    const Coords v = minv_mul(p_of(z));
    const Coords a = minv_mul(gV);
    const Real dx = q[2] - q[0], dy = q[3] - q[1];
    const Real dvx = v[2] - v[0], dvy = v[3] - v[1];
    return Multipliers{{(v[0] * v[0] + v[1] * v[1]) - (q[0] * a[0] + q[1] * a[1]),
                        (dvx * dvx + dvy * dvy) - (dx * (a[2] - a[0]) + dy * (a[3] - a[1]))}};
  }
  CHENS_HD Multipliers psi_h_bracket(const State& z) const { return psi_h_bracket(z, grad_potential(q_of(z))); }

  // S nu with S12 = -S21 = (q1 . (v2 - v1) - d . v1) / m1 (the chain's 002 eq. 43 with w0 = 0).
  CHENS_HD Multipliers s_mul(const State& z, const Multipliers& nu) const {
    const Coords q = q_of(z);
    const Coords v = minv_mul(p_of(z));
    const Real dx = q[2] - q[0], dy = q[3] - q[1];
    const Real s = (q[0] * (v[2] - v[0]) + q[1] * (v[3] - v[1]) - (dx * v[0] + dy * v[1])) / m1;
    return Multipliers{{s * nu[1], -s * nu[0]}};
  }

  // Default initial data (docs/numerics.md, "Double pendulum"): both links horizontal along
  // +x, q1 = (l1, 0), q2 = (l1 + l2, 0), turning downwards about the pivot as one rigid rod
  // with angular velocity omega: v1 = (0, -omega l1), v2 = (0, -omega (l1 + l2)), p = M v.
  // Then phi = 0 and psi = 0 exactly (q1 . v1 = 0, d . (v2 - v1) = 0).
  CHENS_HD static State default_initial(const DoublePendulum& m, Real omega = Real(1)) {
    return State{
        {m.l1, Real(0), m.l1 + m.l2, Real(0), Real(0), -m.m1 * omega * m.l1, Real(0), -m.m2 * omega * (m.l1 + m.l2)}};
  }
};

}  // namespace chens
