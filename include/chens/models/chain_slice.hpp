// The planar chain molecule's primitives (models/chain.hpp; 002 §7, eqs. 39-45), written
// once for a chain held by a thread group (ensemble/thread_group.hpp): with G lanes, lane r
// holds atoms i = r A .. r A + A - 1 (A = N / G) and the bonds a = i that start at them,
//   state slice (x_i, y_i of its atoms, then their p_x, p_y),  4 A numbers,
//   multiplier slice (one per bond of its atoms),              A numbers, the last lane's
//                                                               last a placeholder kept 0
//                                                               (bond N-1 does not exist).
// G = 1 is the whole chain in one thread: Chain<Real, N> is ChainSlice<Real, N, SerialGroup>
// (N - 1 multipliers, no placeholder), which the CPU backend and the one-thread GPU kernels
// run. With G >= 2 a CUDA warp tile integrates one instance (issue 20).
//
// Every value is computed by the same operations in the same order for every G, so a
// sliced chain gives a one-thread chain's bits (tests/test_chain_slice.cpp runs the GPU's
// decompositions on host threads and asserts equality): per-bond and per-atom formulas read
// the neighbouring lane's atom or bond through from_next / from_prev; the Lennard-Jones
// force on atom i sums its partners j in ascending order (what the one-thread loop over
// pairs i < j accumulates, using Newton's third law; the group computes each pair on both
// lanes instead, 2x the pair work and no write to another lane's atoms); sums over atoms
// (V, T, P, L) run in atom order (ordered_fold); the tridiagonal systems of Q (002 eq. 42)
// are eliminated by one lane in the group's shared memory with the one-thread Thomas code
// (linalg/tridiagonal.hpp), O(N) per factorisation and solve.
//
// Formulas (general masses, inverse masses w_i; Delta_a = q_{a+1} - q_a, v = M^-1 p):
//   V       = eps sum_{i<j} (r_ij^-12 - 2 r_ij^-6)                         (002 eq. 39)
//   phi_a   = (|Delta_a|^2 - L^2) / 2                                       (002 eq. 41)
//   psi_a   = {phi_a, H} = Delta_a . (v_{a+1} - v_a)                        (002 eq. 41)
//   Q       = J M^-1 J^T: Q_aa = |Delta_a|^2 (w_a + w_{a+1}),
//             Q_{a,a+1} = Q_{a+1,a} = -w_{a+1} Delta_a . Delta_{a+1}        (002 eq. 42)
//   S_{a,a+1} = -S_{a+1,a} = w_{a+1} (Delta_a . Delta v_{a+1} - Delta_{a+1} . Delta v_a)  (002 eq. 43)
//   {psi_a, H} = |Delta v_a|^2 - Delta_a . (w_{a+1} grad_{a+1} V - w_a grad_a V)          (002 eq. 45)
// derived from the general definitions (002 eqs. 27-28); tests/test_chain_formulations.cpp
// checks them against a dense oracle that knows only H and phi.
#pragma once

#include <type_traits>

#include <chens/config.hpp>
#include <chens/ensemble/thread_group.hpp>
#include <chens/linalg/tridiagonal.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

// Q's factor for a group of G >= 2 lanes: the coefficients are gathered in the group's
// shared scratch (7 (N - 1) values: sub, diag, super, the factor's l, e, 1/d, and the
// solution), lane 0 factors and solves there with the one-thread code, every lane reads
// its slice back. One factor per instance is live at a time (the scratch is reused): the
// formulations, projections and integrators hold one Q at a time.
template <class Real, int M, int Local, class Group>
struct GroupTridiagonal {
  Real* s;  // the group's scratch

  static constexpr int scratch_count = 7 * M;
  CHENS_HD CHENS_FORCEINLINE Real* sub() const { return s; }
  CHENS_HD CHENS_FORCEINLINE Real* diag() const { return s + M; }
  CHENS_HD CHENS_FORCEINLINE Real* super() const { return s + 2 * M; }
  CHENS_HD CHENS_FORCEINLINE Real* l() const { return s + 3 * M; }
  CHENS_HD CHENS_FORCEINLINE Real* e() const { return s + 4 * M; }
  CHENS_HD CHENS_FORCEINLINE Real* dinv() const { return s + 5 * M; }
  CHENS_HD CHENS_FORCEINLINE Real* x() const { return s + 6 * M; }

  // sub_, diag_, super_: this lane's rows (global rows rank * Local + k below M).
  CHENS_HD CHENS_FORCEINLINE static GroupTridiagonal factor(const Real* sub_, const Real* diag_, const Real* super_) {
    GroupTridiagonal f{Group::template scratch<Real>(scratch_count)};
    const int row0 = Group::rank() * Local;
    CHENS_UNROLL
    for (int k = 0; k < Local; ++k) {
      if (row0 + k < M) {
        f.sub()[row0 + k] = sub_[k];
        f.diag()[row0 + k] = diag_[k];
        f.super()[row0 + k] = super_[k];
      }
    }
    Group::sync();
    if (Group::rank() == 0) tridiagonal_factor<M>(f.sub(), f.diag(), f.super(), f.l(), f.e(), f.dinv());
    Group::sync();
    return f;
  }

  CHENS_HD CHENS_FORCEINLINE SliceVec<Real, Local, Group> solve(const SliceVec<Real, Local, Group>& r) const {
    const int row0 = Group::rank() * Local;
    CHENS_UNROLL
    for (int k = 0; k < Local; ++k) {
      if (row0 + k < M) x()[row0 + k] = r[k];
    }
    Group::sync();
    if (Group::rank() == 0) tridiagonal_solve<M>(l(), e(), dinv(), x(), x());
    Group::sync();
    SliceVec<Real, Local, Group> out;
    CHENS_UNROLL
    for (int k = 0; k < Local; ++k) out[k] = row0 + k < M ? x()[row0 + k] : Real(0);
    Group::sync();  // every lane has read x before the next solve writes it
    return out;
  }
};

template <class Real_, int N_, class Group_ = SerialGroup>
struct ChainSlice {
  static_assert(N_ >= 2, "a chain needs at least two atoms");
  using Real = Real_;
  using Group = Group_;
  static constexpr int G = Group::size;
  static_assert(N_ % G == 0, "the atoms are shared equally among the group's lanes");
  static constexpr int lane_atoms = N_ / G;  // A
  // The Hamilton-Dirac right-hand side takes a shortcut for one constraint (S vanishes), and
  // the slices' constraint count is per lane.
  static_assert(G == 1 || lane_atoms >= 2, "a group's lane holds two atoms or more");
  static constexpr int atoms = N_;
  // Sizes of this lane's slices (the whole chain's for G = 1).
  static constexpr int dof = 2 * lane_atoms;
  static constexpr int constraints = G == 1 ? N_ - 1 : lane_atoms;
  static constexpr int state_size = 4 * lane_atoms;
  static constexpr bool has_momentum_integrals = true;  // no external field: P and L are conserved
  using State = sliced_vec_t<Real, state_size, Group>;
  using Coords = sliced_vec_t<Real, dof, Group>;
  using Multipliers = sliced_vec_t<Real, constraints, Group>;
  using Gram =
      std::conditional_t<G == 1, TridiagonalFactor<Real, N_ - 1>, GroupTridiagonal<Real, N_ - 1, constraints, Group>>;

  // Inverse masses 1/m_i of this lane's atoms, and for G >= 2 that of the next lane's first
  // atom (w[A]; 0 on the last lane).
  Vec<Real, lane_atoms + (G > 1 ? 1 : 0)> w;
  Real L;    // bond length
  Real eps;  // Lennard-Jones well depth (002 eq. 39: 0.1)

  // This lane's part of the whole chain (called on every lane of the group).
  template <class Whole>
  CHENS_HD static ChainSlice slice_of(const Whole& whole) {
    ChainSlice s;
    const int first = Group::rank() * lane_atoms;
    for (int k = 0; k < lane_atoms; ++k) s.w[k] = whole.w[first + k];
    if constexpr (G > 1) s.w[lane_atoms] = first + lane_atoms < N_ ? whole.w[first + lane_atoms] : Real(0);
    s.L = whole.L;
    s.eps = whole.eps;
    return s;
  }

  // The same slice in another precision (metrics.hpp measures in double). Chain (G = 1)
  // has its own, which returns a Chain.
  template <class R>
  CHENS_HD ChainSlice<R, N_, Group> rebound() const {
    ChainSlice<R, N_, Group> s;
    for (int k = 0; k < w.size; ++k) s.w[k] = R(w[k]);
    s.L = R(L);
    s.eps = R(eps);
    return s;
  }

  CHENS_HD Real constraint_scale() const { return L * L; }

  CHENS_HD CHENS_FORCEINLINE static Coords q_of(const State& z) {
    Coords q;
    CHENS_UNROLL
    for (int i = 0; i < dof; ++i) q[i] = z[i];
    return q;
  }
  CHENS_HD CHENS_FORCEINLINE static Coords p_of(const State& z) {
    Coords p;
    CHENS_UNROLL
    for (int i = 0; i < dof; ++i) p[i] = z[dof + i];
    return p;
  }
  CHENS_HD CHENS_FORCEINLINE static State join(const Coords& q, const Coords& p) {
    State z;
    CHENS_UNROLL
    for (int i = 0; i < dof; ++i) {
      z[i] = q[i];
      z[dof + i] = p[i];
    }
    return z;
  }

  // The whole chain's state component (models/chain.hpp: the N atoms' (x, y), then their
  // momenta) that holds component c of this lane's state slice: lane r holds atoms
  // rA .. rA + A - 1 of both halves. The one map between the two layouts (loads, stores and
  // recorded rows of the group path, ensemble/group_segment.hpp and chain_group_steps.hpp).
  CHENS_HD CHENS_FORCEINLINE static int whole_component(int c) {
    const int first = 2 * Group::rank() * lane_atoms;
    return c < dof ? first + c : 2 * N_ + first + (c - dof);
  }

  // sum_c v_c over the whole state in the whole state's component order (positions of atoms
  // 0..N-1, then momenta), from 0, as one thread's loop over a Vec forms it: the error norm
  // of the adaptive pairs (integrators/embedded_pair.hpp) on slices.
  static constexpr int whole_state_size = 4 * N_;
  CHENS_HD CHENS_FORCEINLINE static Real ordered_state_sum(const State& v) {
    return ordered_state_fold([&](int c) { return v[c]; });
  }
  // sum_c a_c b_c in the same order, as dot() (linalg/vec.hpp) forms it for one thread (its
  // first term a_0 b_0 equals 0 + a_0 b_0, fused or not): the integration error of
  // metrics.hpp on slices.
  CHENS_HD CHENS_FORCEINLINE static Real ordered_state_dot(const State& a, const State& b) {
    return ordered_state_fold([&](int c) { return a[c] * b[c]; });
  }

  // acc = acc + term(c) over the whole state's components in its order, from 0: each lane
  // adds its positions in lane order, then its momenta (ordered_fold passes the sum on).
  template <class Term>
  CHENS_HD CHENS_FORCEINLINE static Real ordered_state_fold(const Term& term) {
    const Real positions = Group::ordered_fold(Real(0), [&](Real acc) {
      CHENS_UNROLL
      for (int c = 0; c < dof; ++c) acc = acc + term(c);
      return acc;
    });
    return Group::ordered_fold(positions, [&](Real acc) {
      CHENS_UNROLL
      for (int c = dof; c < state_size; ++c) acc = acc + term(c);
      return acc;
    });
  }

  // Global index of this lane's atom (and bond) k.
  CHENS_HD CHENS_FORCEINLINE static int atom(int k) { return Group::rank() * lane_atoms + k; }
  // Bond k of this lane exists (not the last lane's placeholder).
  CHENS_HD CHENS_FORCEINLINE static bool has_bond(int k) { return G == 1 || atom(k) < N_ - 1; }
  // Bond k + 1 exists (the super-diagonal of Q and S).
  CHENS_HD CHENS_FORCEINLINE static bool has_next_bond(int k) { return atom(k) + 1 < N_ - 1; }

  // Component j of atom k + 1's vector c (positions, velocities): this lane's, or for its
  // last atom the next lane's first, received beforehand as head = from_next(c[0], c[1]).
  CHENS_HD CHENS_FORCEINLINE static Vec<Real, 2> next_head(const Coords& c) {
    return Group::from_next(Vec<Real, 2>{{c[0], c[1]}});
  }
  CHENS_HD CHENS_FORCEINLINE static Real ahead(const Coords& c, const Vec<Real, 2>& head, int k, int j) {
    return k + 1 < lane_atoms ? c[2 * k + 2 + j] : head[j];
  }
  // Bond k + 1's value of a per-bond array: this lane's, or the next lane's bond 0 (head).
  CHENS_HD CHENS_FORCEINLINE static Real bond_ahead(const Real* b, Real head, int k) {
    return k + 1 < constraints ? b[k + 1] : head;
  }

  // The bond vectors Delta_k of this lane's bonds (the placeholder's is not used).
  struct Bonds {
    Real x[constraints], y[constraints];
  };
  CHENS_HD CHENS_FORCEINLINE static Bonds bonds(const Coords& c) {
    const Vec<Real, 2> head = next_head(c);
    Bonds d;
    CHENS_UNROLL
    for (int k = 0; k < constraints; ++k) {
      d.x[k] = ahead(c, head, k, 0) - c[2 * k];
      d.y[k] = ahead(c, head, k, 1) - c[2 * k + 1];
    }
    return d;  // cppcheck-suppress uninitvar ; the loop sets every element (constraints of them)
  }

  CHENS_HD CHENS_FORCEINLINE Coords minv_mul(const Coords& v) const {
    Coords r;
    CHENS_UNROLL
    for (int k = 0; k < lane_atoms; ++k) {
      r[2 * k] = w[k] * v[2 * k];
      r[2 * k + 1] = w[k] * v[2 * k + 1];
    }
    return r;
  }

  // The pair term of V and of grad V between atoms i < j at dx = x_i - x_j, dy = y_i - y_j:
  // s = 1 / r^2, s^6 - 2 s^3 and 12 eps s^4 (1 - s^3) (d/du (u^-6 - 2 u^-3) = 6 s^4 (1 - s^3), u = r^2).
  CHENS_HD CHENS_FORCEINLINE static Real pair_energy(Real dx, Real dy) {
    const Real s = Real(1) / (dx * dx + dy * dy);
    const Real s3 = s * s * s;
    return s3 * (s3 - Real(2));
  }
  CHENS_HD CHENS_FORCEINLINE static Real pair_force(Real c12, Real dx, Real dy) {
    const Real s = Real(1) / (dx * dx + dy * dy);
    const Real s3 = s * s * s;
    return c12 * s * s3 * (Real(1) - s3);
  }

  // Every atom j = 0..N-1 in ascending order, as (j, x_j, y_j), to f on every lane: lane s's
  // atoms broadcast in turn (one lane: its own array).
  template <class F>
  CHENS_HD CHENS_FORCEINLINE static void for_each_atom(const Coords& q, const F& f) {
    for (int src = 0; src < G; ++src) {
      CHENS_UNROLL
      for (int m = 0; m < lane_atoms; ++m) {
        f(src * lane_atoms + m, Group::broadcast(q[2 * m], src), Group::broadcast(q[2 * m + 1], src));
      }
    }
  }

  // V = eps sum_i sum_{j > i} pair(i, j): the inner sums per atom (each lane its own atoms),
  // then their sum in atom order.
  CHENS_HD Real potential(const Coords& q) const {
    Real row[lane_atoms];
    CHENS_UNROLL
    for (int k = 0; k < lane_atoms; ++k) row[k] = Real(0);
    for_each_atom(q, [&](int j, Real xj, Real yj) {
      CHENS_UNROLL
      for (int k = 0; k < lane_atoms; ++k) {
        if (j > atom(k)) row[k] = row[k] + pair_energy(q[2 * k] - xj, q[2 * k + 1] - yj);
      }
    });
    const Real v = Group::ordered_fold(Real(0), [&](Real acc) {
      CHENS_UNROLL
      for (int k = 0; k < lane_atoms; ++k) acc = acc + row[k];
      return acc;
    });
    return eps * v;
  }

  // grad_i V = sum_{j != i} 12 eps s^4 (1 - s^3) (q_i - q_j), partners j in ascending order
  // from 0. One thread visits each pair i < j once and adds its term to both atoms (the
  // partner's with the sign flipped: the same bits as computing it from j's side); a group
  // computes every pair on the lane of each of its atoms.
  CHENS_HD Coords grad_potential(const Coords& q) const {
    const Real c12 = Real(12) * eps;
    Coords g = Coords::zero();
    if constexpr (G == 1) {
      for (int i = 0; i < N_; ++i) {
        Real gx = g[2 * i], gy = g[2 * i + 1];
        for (int j = i + 1; j < N_; ++j) {
          const Real dx = q[2 * i] - q[2 * j], dy = q[2 * i + 1] - q[2 * j + 1];
          const Real c = pair_force(c12, dx, dy);
          gx = gx + c * dx;
          gy = gy + c * dy;
          g[2 * j] = g[2 * j] - c * dx;
          g[2 * j + 1] = g[2 * j + 1] - c * dy;
        }
        g[2 * i] = gx;
        g[2 * i + 1] = gy;
      }
    } else {
      for_each_atom(q, [&](int j, Real xj, Real yj) {
        CHENS_UNROLL
        for (int k = 0; k < lane_atoms; ++k) {
          const int i = atom(k);
          if (j < i) {  // the pair (j, i), as seen from j: dx = q_j - q_i
            const Real dx = xj - q[2 * k], dy = yj - q[2 * k + 1];
            const Real c = pair_force(c12, dx, dy);
            g[2 * k] = g[2 * k] - c * dx;
            g[2 * k + 1] = g[2 * k + 1] - c * dy;
          } else if (j > i) {
            const Real dx = q[2 * k] - xj, dy = q[2 * k + 1] - yj;
            const Real c = pair_force(c12, dx, dy);
            g[2 * k] = g[2 * k] + c * dx;
            g[2 * k + 1] = g[2 * k + 1] + c * dy;
          }
        }
      });
    }
    return g;
  }

  CHENS_HD Real kinetic(const Coords& p) const {
    const Real k2 = Group::ordered_fold(Real(0), [&](Real acc) {
      CHENS_UNROLL
      for (int k = 0; k < lane_atoms; ++k) acc = acc + w[k] * (p[2 * k] * p[2 * k] + p[2 * k + 1] * p[2 * k + 1]);
      return acc;
    });
    return k2 / Real(2);
  }
  CHENS_HD Real energy(const State& z) const { return kinetic(p_of(z)) + potential(q_of(z)); }

  // Total linear momentum (P_x, P_y) and angular momentum L_z = sum_i x_i p_yi - y_i p_xi.
  CHENS_HD Vec<Real, 3> momentum_integrals(const State& z) const {
    return Group::ordered_fold(Vec<Real, 3>::zero(), [&](Vec<Real, 3> acc) {
      CHENS_UNROLL
      for (int k = 0; k < lane_atoms; ++k) {
        const Real x = z[2 * k], y = z[2 * k + 1], a = z[dof + 2 * k], b = z[dof + 2 * k + 1];
        acc[0] = acc[0] + a;
        acc[1] = acc[1] + b;
        acc[2] = acc[2] + (x * b - y * a);
      }
      return acc;
    });
  }

  CHENS_HD Multipliers phi(const Coords& q) const {
    const Bonds d = bonds(q);
    Multipliers r;
    CHENS_UNROLL
    for (int k = 0; k < constraints; ++k) {
      r[k] = has_bond(k) ? (d.x[k] * d.x[k] + d.y[k] * d.y[k] - L * L) / Real(2) : Real(0);
    }
    return r;
  }
  // (J v)_a = Delta_a . (v_{a+1} - v_a).
  CHENS_HD CHENS_FORCEINLINE Multipliers jac_mul(const Coords& q, const Coords& v) const {
    const Bonds d = bonds(q);
    const Bonds dv = bonds(v);
    Multipliers r;
    CHENS_UNROLL
    for (int k = 0; k < constraints; ++k) r[k] = has_bond(k) ? d.x[k] * dv.x[k] + d.y[k] * dv.y[k] : Real(0);
    return r;
  }

  // Atom i's sum f_{i-1} - f_i of the per-bond vectors f_a = lambda_a u_a (J^T lambda:
  // u = Delta(q); sum_a lambda_a Hess(phi_a) v: u = Delta(v)), accumulated as one thread's
  // loop over bonds does: from 0, first bond i - 1's term, then bond i's.
  CHENS_HD CHENS_FORCEINLINE static Coords bond_forces_on_atoms(const Multipliers& lam, const Bonds& u) {
    Real fx[constraints], fy[constraints];
    CHENS_UNROLL
    for (int k = 0; k < constraints; ++k) {
      fx[k] = lam[k] * u.x[k];
      fy[k] = lam[k] * u.y[k];
    }
    const Real px = Group::from_prev(fx[constraints - 1]), py = Group::from_prev(fy[constraints - 1]);
    Coords r;
    CHENS_UNROLL
    for (int k = 0; k < lane_atoms; ++k) {
      Real rx = Real(0), ry = Real(0);
      if (atom(k) > 0) {
        rx = rx + (k > 0 ? fx[k - 1] : px);
        ry = ry + (k > 0 ? fy[k - 1] : py);
      }
      if (k < constraints && has_bond(k)) {
        rx = rx - fx[k];
        ry = ry - fy[k];
      }
      r[2 * k] = rx;
      r[2 * k + 1] = ry;
    }
    return r;
  }
  // (J^T lambda)_i = lambda_{i-1} Delta_{i-1} - lambda_i Delta_i.
  CHENS_HD CHENS_FORCEINLINE Coords jac_t_mul(const Coords& q, const Multipliers& lam) const {
    return bond_forces_on_atoms(lam, bonds(q));
  }
  // sum_a lambda_a Hess(phi_a) v: Hess(phi_a) couples atoms a, a+1 through
  // (e_{a+1} - e_a)(e_{a+1} - e_a)^T (x) I_2.
  CHENS_HD CHENS_FORCEINLINE Coords hess_phi_mul(const Coords&, const Multipliers& lam, const Coords& v) const {
    return bond_forces_on_atoms(lam, bonds(v));
  }
  CHENS_HD CHENS_FORCEINLINE Multipliers psi(const State& z) const { return jac_mul(q_of(z), minv_mul(p_of(z))); }

  // A = J(qa) M^-1 J(qb)^T: tridiagonal,
  //   A_aa = (w_a + w_{a+1}) Delta_a(qa).Delta_a(qb),
  //   A_{a,a+1} = -w_{a+1} Delta_a(qa).Delta_{a+1}(qb),  A_{a+1,a} = -w_{a+1} Delta_{a+1}(qa).Delta_a(qb).
  // qa = qb gives the Gram matrix Q of 002 eq. (42), symmetric positive definite as long as
  // no bond has length zero (then J has full rank: row a is the only one acting on atom a
  // among rows a..N-2).
  CHENS_HD Gram cross_gram(const Coords& qa, const Coords& qb) const {
    const Bonds da = bonds(qa), db = bonds(qb);
    const Real hax = Group::from_next(da.x[0]), hay = Group::from_next(da.y[0]);
    const Real hbx = Group::from_next(db.x[0]), hby = Group::from_next(db.y[0]);
    Real sub[constraints] = {}, diag[constraints] = {}, super[constraints] = {};
    CHENS_UNROLL
    for (int k = 0; k < constraints; ++k) {
      const Real ax = da.x[k], ay = da.y[k], bx = db.x[k], by = db.y[k];
      diag[k] = (w[k] + w[k + 1]) * (ax * bx + ay * by);
      if (has_next_bond(k)) {
        const Real ax1 = bond_ahead(da.x, hax, k), ay1 = bond_ahead(da.y, hay, k);
        const Real bx1 = bond_ahead(db.x, hbx, k), by1 = bond_ahead(db.y, hby, k);
        super[k] = -w[k + 1] * (ax * bx1 + ay * by1);
        sub[k] = -w[k + 1] * (ax1 * bx + ay1 * by);
      } else {
        super[k] = sub[k] = Real(0);
      }
    }
    return Gram::factor(sub, diag, super);
  }
  CHENS_HD CHENS_FORCEINLINE Gram gram(const Coords& q) const { return cross_gram(q, q); }
  CHENS_HD CHENS_FORCEINLINE Multipliers gram_solve(const Coords& q, const Multipliers& rhs) const {
    return gram(q).solve(rhs);
  }

  // {psi_a, H} = |Delta v_a|^2 - Delta_a . (w_{a+1} grad_{a+1} V - w_a grad_a V)  (002 eq. 45),
  // with the potential gradient gV = grad V(q) passed in (it costs O(N^2)).
  CHENS_HD Multipliers psi_h_bracket(const State& z, const Coords& gV) const {
    const Coords q = q_of(z);
    const Bonds d = bonds(q);
    const Bonds dv = bonds(minv_mul(p_of(z)));
    const Bonds da = bonds(minv_mul(gV));
    Multipliers r;
    CHENS_UNROLL
    for (int k = 0; k < constraints; ++k) {
      r[k] = has_bond(k) ? (dv.x[k] * dv.x[k] + dv.y[k] * dv.y[k]) - (d.x[k] * da.x[k] + d.y[k] * da.y[k]) : Real(0);
    }
    return r;
  }
  CHENS_HD Multipliers psi_h_bracket(const State& z) const { return psi_h_bracket(z, grad_potential(q_of(z))); }

  // (S nu)_a with S_{a,a+1} = -S_{a+1,a} = w_{a+1} (Delta_a . Delta v_{a+1} - Delta_{a+1} . Delta v_a)
  // (002 eq. 43), accumulated as one thread's loop over a does: from 0, -S_{a-1,a} nu_{a-1}
  // first, then S_{a,a+1} nu_{a+1}.
  CHENS_HD Multipliers s_mul(const State& z, const Multipliers& nu) const {
    const Bonds d = bonds(q_of(z));
    const Bonds dv = bonds(minv_mul(p_of(z)));
    const Real hx = Group::from_next(d.x[0]), hy = Group::from_next(d.y[0]);
    const Real hvx = Group::from_next(dv.x[0]), hvy = Group::from_next(dv.y[0]);
    const Real nu_head = Group::from_next(nu[0]);
    Real s[constraints];
    CHENS_UNROLL
    for (int k = 0; k < constraints; ++k) {
      s[k] = Real(0);
      if (has_next_bond(k)) {
        const Real dx1 = bond_ahead(d.x, hx, k), dy1 = bond_ahead(d.y, hy, k);
        const Real dvx1 = bond_ahead(dv.x, hvx, k), dvy1 = bond_ahead(dv.y, hvy, k);
        s[k] = w[k + 1] * ((d.x[k] * dvx1 + d.y[k] * dvy1) - (dx1 * dv.x[k] + dy1 * dv.y[k]));
      }
    }
    const Real s_prev = Group::from_prev(s[constraints - 1]), nu_prev = Group::from_prev(nu[constraints - 1]);
    Multipliers r;
    CHENS_UNROLL
    for (int k = 0; k < constraints; ++k) {
      Real rk = Real(0);
      if (atom(k) > 0 && has_bond(k)) rk = rk - (k > 0 ? s[k - 1] : s_prev) * (k > 0 ? nu[k - 1] : nu_prev);
      if (has_next_bond(k)) rk = rk + s[k] * bond_ahead(&nu[0], nu_head, k);
      r[k] = rk;
    }
    return r;
  }
};

}  // namespace chens
