// Planar chain molecule of N atoms with fixed bond lengths (002 §7, after Leimkuhler &
// Skeel 1994): atoms i = 0..N-1 at q_i = (x_i, y_i) with masses m_i, bonds
// Delta_a = q_{a+1} - q_a, a = 0..N-2, H = sum_i |p_i|^2 / (2 m_i) + V with the
// Lennard-Jones V of 002 eq. 39, constraints phi_a = (|Delta_a|^2 - L^2) / 2 (002 eq. 41).
// The primitives (psi, Q = J M^-1 J^T tridiagonal, S, {psi, H}, grad V, ...) and their
// equations are in models/chain_slice.hpp, written once for a chain held by a thread group;
// Chain is that code for a group of one thread.
//
// Coordinates are stored atom by atom: q = (x_0, y_0, x_1, y_1, ...), likewise p; the
// state is (q, p), 4N numbers. Every primitive is O(N) except the Lennard-Jones
// potential and its gradient, which are O(N^2) (002 §7).
#pragma once

#include <cmath>

#include <chens/config.hpp>
#include <chens/models/chain_slice.hpp>

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

// The whole chain in one thread: the primitives are ChainSlice's (models/chain_slice.hpp)
// for a group of one, which a thread group's slices reproduce bit for bit.
template <class Real_, int N_>
struct Chain : ChainSlice<Real_, N_, SerialGroup> {
  using Real = Real_;
  using typename ChainSlice<Real_, N_, SerialGroup>::State;

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
  // (rebound_system), which chains do not use. Tangent systems take the chain over dual
  // numbers through this function (formulation.hpp, dual_system).
  template <class R>
  CHENS_HD Chain<R, N_> rebound() const {
    Chain<R, N_> c;
    for (int i = 0; i < N_; ++i) c.w[i] = R(this->w[i]);
    c.L = R(this->L);
    c.eps = R(this->eps);
    return c;
  }

  // Default initial data: chain_default_initial below, for this model.
  static State default_initial(const Chain& c, double v0 = 0.25) {
    double w_[N_], z_[Chain::state_size];
    for (int i = 0; i < N_; ++i) w_[i] = static_cast<double>(c.w[i]);
    chain_default_initial(N_, static_cast<double>(c.L), w_, v0, z_);
    State z;
    for (int i = 0; i < Chain::state_size; ++i) z[i] = Real(z_[i]);
    return z;
  }
};

}  // namespace chens
