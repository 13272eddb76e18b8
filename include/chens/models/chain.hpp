// Planar chain molecule of N atoms with fixed bond lengths (002 §7, after Leimkuhler &
// Skeel 1994): atoms i = 0..N-1 at q_i = (x_i, y_i) with masses m_i, bonds
// Delta_a = q_{a+1} - q_a, a = 0..N-2, and
//   H   = sum_i |p_i|^2 / (2 m_i) + V,
//   V   = eps sum_{i<j} (r_ij^-12 - 2 r_ij^-6)                       (002 eq. 39)
//   phi_a = (|Delta_a|^2 - L^2) / 2,                                 (002 eq. 41)
//   psi_a = {phi_a, H} = Delta_a . (v_{a+1} - v_a),   v = M^-1 p.
// With unit masses psi_a is 002 eq. (41)'s Delta x Delta p_x + Delta y Delta p_y, and
//   Q = {phi, psi} = J M^-1 J^T  is 002 eq. (42):
//     Q_aa = |Delta_a|^2 (1/m_a + 1/m_{a+1}),  Q_{a,a+1} = Q_{a+1,a} = -Delta_a . Delta_{a+1} / m_{a+1},
//   S = {psi, psi}  is 002 eq. (43) (skew, tridiagonal):
//     S_{a,a+1} = (Delta_a . Delta v_{a+1} - Delta_{a+1} . Delta v_a) / m_{a+1},
//   {psi_a, H} = |Delta v_a|^2 - Delta_a . (grad_{a+1} V / m_{a+1} - grad_a V / m_a)   (002 eq. 45),
// all derived from the general definitions (002 eqs. 27-28) for general masses; the
// test suite checks them against a dense oracle that knows only H and phi.
//
// Coordinates are stored atom by atom: q = (x_0, y_0, x_1, y_1, ...), likewise p; the
// state is (q, p), 4N numbers. Every primitive is O(N) except the Lennard-Jones
// potential and its gradient, which are O(N^2) (002 §7).
#pragma once

#include <cmath>

#include <chens/config.hpp>
#include <chens/linalg/tridiagonal.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

// Default initial data of an n-atom chain (docs/numerics.md, "Chain molecule"), host
// code, for any n >= 2: for n = 7 the centred hexagon of 002 Fig. 3 on the triangular
// lattice of spacing L, path ring(0) -> ring(60) -> ring(120) -> centre -> ring(300) ->
// ring(240) -> ring(180) (degrees); for other n a zig-zag on the same lattice, centred on
// its mean position. The end atoms get speed v0 perpendicular to their end bonds (the
// first bond turned by +90 degrees at atom 0, the last bond by -90 degrees at atom n-1),
// all others rest; then the centre-of-mass velocity is removed, which leaves psi = 0.
// For n = 7 this is v_0 = (-0.2165064, -0.125) = -v_6. w: inverse masses (n values);
// z: 4n values (q, p) written atom by atom.
inline void chain_default_initial(int n, double L, const double* w, double v0, double* z) {
  const double s3 = std::sqrt(3.0) / 2.0;
  if (n == 7) {
    const double hex[7][2] = {{1, 0}, {0.5, s3}, {-0.5, s3}, {0, 0}, {0.5, -s3}, {-0.5, -s3}, {-1, 0}};
    for (int i = 0; i < n; ++i) {
      z[2 * i] = L * hex[i][0];
      z[2 * i + 1] = L * hex[i][1];
    }
  } else {
    double cx = 0, cy = 0;
    for (int i = 0; i < n; ++i) {
      cx += 0.5 * i;
      cy += (i % 2) ? s3 : 0.0;
    }
    cx /= n;
    cy /= n;
    for (int i = 0; i < n; ++i) {
      z[2 * i] = L * (0.5 * i - cx);
      z[2 * i + 1] = L * (((i % 2) ? s3 : 0.0) - cy);
    }
  }
  auto unit_bond = [&](int a, double& ux, double& uy) {
    const double dx = z[2 * a + 2] - z[2 * a], dy = z[2 * a + 3] - z[2 * a + 1];
    const double r = std::sqrt(dx * dx + dy * dy);
    ux = dx / r;
    uy = dy / r;
  };
  double ux, uy, first[2], last[2];
  unit_bond(0, ux, uy);
  first[0] = -v0 * uy;  // +90 degrees: (x, y) -> (-y, x)
  first[1] = v0 * ux;
  unit_bond(n - 2, ux, uy);
  last[0] = v0 * uy;  // -90 degrees: the opposite sense at the other end
  last[1] = -v0 * ux;
  double* p = z + 2 * n;
  double mass_total = 0, pxs = 0, pys = 0;
  for (int i = 0; i < n; ++i) {
    const double m = 1.0 / w[i];
    const double* v = i == 0 ? first : (i == n - 1 ? last : nullptr);
    p[2 * i] = v ? m * v[0] : 0.0;
    p[2 * i + 1] = v ? m * v[1] : 0.0;
    mass_total += m;
    pxs += p[2 * i];
    pys += p[2 * i + 1];
  }
  for (int i = 0; i < n; ++i) {
    const double m = 1.0 / w[i];
    p[2 * i] -= m * (pxs / mass_total);
    p[2 * i + 1] -= m * (pys / mass_total);
  }
}

template <class Real_, int N_>
struct Chain {
  static_assert(N_ >= 2, "a chain needs at least two atoms");
  using Real = Real_;
  static constexpr int atoms = N_;
  static constexpr int dof = 2 * N_;
  static constexpr int constraints = N_ - 1;
  static constexpr int state_size = 4 * N_;
  static constexpr bool has_momentum_integrals = true;  // no external field: P and L are conserved
  using State = Vec<Real, state_size>;
  using Coords = Vec<Real, dof>;
  using Multipliers = Vec<Real, constraints>;
  using Gram = TridiagonalFactor<Real, constraints>;

  Vec<Real, N_> w;  // inverse masses 1/m_i
  Real L;           // bond length
  Real eps;         // Lennard-Jones well depth (002 eq. 39: 0.1)

  // Unit masses (the paper's choice) unless set otherwise.
  CHENS_HD static Chain uniform(Real bond_length, Real lj_epsilon, Real mass = Real(1)) {
    Chain c;
    for (int i = 0; i < N_; ++i) c.w[i] = Real(1) / mass;
    c.L = bond_length;
    c.eps = lj_epsilon;
    return c;
  }

  // The same chain in another precision (float runs are measured in double, metrics.hpp).
  // Deliberately no `rebind` alias: that would switch on the CPU's SSE2 lanes
  // (rebound_system), which chains do not use.
  template <class R>
  CHENS_HD Chain<R, N_> rebound() const {
    Chain<R, N_> c;
    for (int i = 0; i < N_; ++i) c.w[i] = R(w[i]);
    c.L = R(L);
    c.eps = R(eps);
    return c;
  }

  CHENS_HD Real constraint_scale() const { return L * L; }

  CHENS_HD static Coords q_of(const State& z) {
    Coords q;
    for (int i = 0; i < dof; ++i) q[i] = z[i];
    return q;
  }
  CHENS_HD static Coords p_of(const State& z) {
    Coords p;
    for (int i = 0; i < dof; ++i) p[i] = z[dof + i];
    return p;
  }
  CHENS_HD static State join(const Coords& q, const Coords& p) {
    State z;
    for (int i = 0; i < dof; ++i) {
      z[i] = q[i];
      z[dof + i] = p[i];
    }
    return z;
  }

  CHENS_HD Coords minv_mul(const Coords& v) const {
    Coords r;
    for (int i = 0; i < N_; ++i) {
      r[2 * i] = w[i] * v[2 * i];
      r[2 * i + 1] = w[i] * v[2 * i + 1];
    }
    return r;
  }

  // eps sum_{i<j} (s^6 - 2 s^3), s = 1 / r_ij^2.
  CHENS_HD Real potential(const Coords& q) const {
    Real v = Real(0);
    for (int i = 0; i < N_; ++i) {
      for (int j = i + 1; j < N_; ++j) {
        const Real dx = q[2 * i] - q[2 * j], dy = q[2 * i + 1] - q[2 * j + 1];
        const Real s = Real(1) / (dx * dx + dy * dy);
        const Real s3 = s * s * s;
        v = v + s3 * (s3 - Real(2));
      }
    }
    return eps * v;
  }
  // grad_i V = sum_j 12 eps s^4 (1 - s^3) (q_i - q_j): d/du (u^-6 - 2 u^-3) = 6 s^4 (1 - s^3), u = r^2.
  CHENS_HD Coords grad_potential(const Coords& q) const {
    Coords g = Coords::zero();
    const Real c12 = Real(12) * eps;
    for (int i = 0; i < N_; ++i) {
      Real gx = g[2 * i], gy = g[2 * i + 1];
      for (int j = i + 1; j < N_; ++j) {
        const Real dx = q[2 * i] - q[2 * j], dy = q[2 * i + 1] - q[2 * j + 1];
        const Real s = Real(1) / (dx * dx + dy * dy);
        const Real s3 = s * s * s;
        const Real c = c12 * s * s3 * (Real(1) - s3);
        gx = gx + c * dx;
        gy = gy + c * dy;
        g[2 * j] = g[2 * j] - c * dx;
        g[2 * j + 1] = g[2 * j + 1] - c * dy;
      }
      g[2 * i] = gx;
      g[2 * i + 1] = gy;
    }
    return g;
  }
  CHENS_HD Real kinetic(const Coords& p) const {
    Real k = Real(0);
    for (int i = 0; i < N_; ++i) k = k + w[i] * (p[2 * i] * p[2 * i] + p[2 * i + 1] * p[2 * i + 1]);
    return k / Real(2);
  }
  CHENS_HD Real energy(const State& z) const { return kinetic(p_of(z)) + potential(q_of(z)); }

  // Total linear momentum (P_x, P_y) and angular momentum L_z = sum_i x_i p_yi - y_i p_xi.
  CHENS_HD Vec<Real, 3> momentum_integrals(const State& z) const {
    Real px = Real(0), py = Real(0), lz = Real(0);
    for (int i = 0; i < N_; ++i) {
      const Real x = z[2 * i], y = z[2 * i + 1], a = z[dof + 2 * i], b = z[dof + 2 * i + 1];
      px = px + a;
      py = py + b;
      lz = lz + (x * b - y * a);
    }
    return Vec<Real, 3>{{px, py, lz}};
  }

  CHENS_HD Multipliers phi(const Coords& q) const {
    Multipliers r;
    for (int a = 0; a < constraints; ++a) {
      const Real dx = q[2 * a + 2] - q[2 * a], dy = q[2 * a + 3] - q[2 * a + 1];
      r[a] = (dx * dx + dy * dy - L * L) / Real(2);
    }
    return r;
  }
  // (J v)_a = Delta_a . (v_{a+1} - v_a).
  CHENS_HD Multipliers jac_mul(const Coords& q, const Coords& v) const {
    Multipliers r;
    for (int a = 0; a < constraints; ++a) {
      const Real dx = q[2 * a + 2] - q[2 * a], dy = q[2 * a + 3] - q[2 * a + 1];
      r[a] = dx * (v[2 * a + 2] - v[2 * a]) + dy * (v[2 * a + 3] - v[2 * a + 1]);
    }
    return r;
  }
  // (J^T lambda)_i = lambda_{i-1} Delta_{i-1} - lambda_i Delta_i.
  CHENS_HD Coords jac_t_mul(const Coords& q, const Multipliers& lam) const {
    Coords r = Coords::zero();
    for (int a = 0; a < constraints; ++a) {
      const Real dx = q[2 * a + 2] - q[2 * a], dy = q[2 * a + 3] - q[2 * a + 1];
      const Real fx = lam[a] * dx, fy = lam[a] * dy;
      r[2 * a] = r[2 * a] - fx;
      r[2 * a + 1] = r[2 * a + 1] - fy;
      r[2 * a + 2] = r[2 * a + 2] + fx;
      r[2 * a + 3] = r[2 * a + 3] + fy;
    }
    return r;
  }
  // sum_a lambda_a Hess(phi_a) v: Hess(phi_a) couples atoms a, a+1 through
  // (e_{a+1} - e_a)(e_{a+1} - e_a)^T (x) I_2.
  CHENS_HD Coords hess_phi_mul(const Coords&, const Multipliers& lam, const Coords& v) const {
    Coords r = Coords::zero();
    for (int a = 0; a < constraints; ++a) {
      const Real fx = lam[a] * (v[2 * a + 2] - v[2 * a]), fy = lam[a] * (v[2 * a + 3] - v[2 * a + 1]);
      r[2 * a] = r[2 * a] - fx;
      r[2 * a + 1] = r[2 * a + 1] - fy;
      r[2 * a + 2] = r[2 * a + 2] + fx;
      r[2 * a + 3] = r[2 * a + 3] + fy;
    }
    return r;
  }
  CHENS_HD Multipliers psi(const State& z) const { return jac_mul(q_of(z), minv_mul(p_of(z))); }

  // A = J(qa) M^-1 J(qb)^T: tridiagonal,
  //   A_aa = (w_a + w_{a+1}) Delta_a(qa).Delta_a(qb),
  //   A_{a,a+1} = -w_{a+1} Delta_a(qa).Delta_{a+1}(qb),  A_{a+1,a} = -w_{a+1} Delta_{a+1}(qa).Delta_a(qb).
  // qa = qb gives the Gram matrix Q of 002 eq. (42), symmetric positive definite as long as
  // no bond has length zero (then J has full rank: row a is the only one acting on atom a
  // among rows a..N-2).
  CHENS_HD Gram cross_gram(const Coords& qa, const Coords& qb) const {
    Real sub[constraints] = {}, diag[constraints] = {}, super[constraints] = {};
    for (int a = 0; a < constraints; ++a) {
      const Real ax = qa[2 * a + 2] - qa[2 * a], ay = qa[2 * a + 3] - qa[2 * a + 1];
      const Real bx = qb[2 * a + 2] - qb[2 * a], by = qb[2 * a + 3] - qb[2 * a + 1];
      diag[a] = (w[a] + w[a + 1]) * (ax * bx + ay * by);
      if (a + 1 < constraints) {
        const Real ax1 = qa[2 * a + 4] - qa[2 * a + 2], ay1 = qa[2 * a + 5] - qa[2 * a + 3];
        const Real bx1 = qb[2 * a + 4] - qb[2 * a + 2], by1 = qb[2 * a + 5] - qb[2 * a + 3];
        super[a] = -w[a + 1] * (ax * bx1 + ay * by1);
        sub[a] = -w[a + 1] * (ax1 * bx + ay1 * by);
      } else {
        super[a] = sub[a] = Real(0);
      }
    }
    return Gram::factor(sub, diag, super);
  }
  CHENS_HD Gram gram(const Coords& q) const { return cross_gram(q, q); }
  CHENS_HD Multipliers gram_solve(const Coords& q, const Multipliers& rhs) const { return gram(q).solve(rhs); }

  // {psi_a, H} = |Delta v_a|^2 - Delta_a . (w_{a+1} grad_{a+1} V - w_a grad_a V)  (002 eq. 45),
  // with the potential gradient gV = grad V(q) passed in (it costs O(N^2)).
  CHENS_HD Multipliers psi_h_bracket(const State& z, const Coords& gV) const {
    const Coords q = q_of(z);
    const Coords v = minv_mul(p_of(z));
    const Coords a = minv_mul(gV);
    Multipliers r;
    for (int b = 0; b < constraints; ++b) {
      const Real dvx = v[2 * b + 2] - v[2 * b], dvy = v[2 * b + 3] - v[2 * b + 1];
      const Real dx = q[2 * b + 2] - q[2 * b], dy = q[2 * b + 3] - q[2 * b + 1];
      r[b] = (dvx * dvx + dvy * dvy) - (dx * (a[2 * b + 2] - a[2 * b]) + dy * (a[2 * b + 3] - a[2 * b + 1]));
    }
    return r;
  }
  CHENS_HD Multipliers psi_h_bracket(const State& z) const { return psi_h_bracket(z, grad_potential(q_of(z))); }

  // (S nu)_a with S_{a,a+1} = -S_{a+1,a} = w_{a+1} (Delta_a . Delta v_{a+1} - Delta_{a+1} . Delta v_a)  (002 eq. 43).
  CHENS_HD Multipliers s_mul(const State& z, const Multipliers& nu) const {
    const Coords q = q_of(z);
    const Coords v = minv_mul(p_of(z));
    Multipliers r = Multipliers::zero();
    for (int a = 0; a + 1 < constraints; ++a) {
      const Real dx = q[2 * a + 2] - q[2 * a], dy = q[2 * a + 3] - q[2 * a + 1];
      const Real dx1 = q[2 * a + 4] - q[2 * a + 2], dy1 = q[2 * a + 5] - q[2 * a + 3];
      const Real dvx = v[2 * a + 2] - v[2 * a], dvy = v[2 * a + 3] - v[2 * a + 1];
      const Real dvx1 = v[2 * a + 4] - v[2 * a + 2], dvy1 = v[2 * a + 5] - v[2 * a + 3];
      const Real s = w[a + 1] * ((dx * dvx1 + dy * dvy1) - (dx1 * dvx + dy1 * dvy));
      r[a] = r[a] + s * nu[a + 1];
      r[a + 1] = r[a + 1] - s * nu[a];
    }
    return r;
  }

  // Default initial data: chain_default_initial below, for this model.
  static State default_initial(const Chain& c, double v0 = 0.25) {
    double w_[N_], z_[state_size];
    for (int i = 0; i < N_; ++i) w_[i] = static_cast<double>(c.w[i]);
    chain_default_initial(N_, static_cast<double>(c.L), w_, v0, z_);
    State z;
    for (int i = 0; i < state_size; ++i) z[i] = Real(z_[i]);
    return z;
  }
};

}  // namespace chens
