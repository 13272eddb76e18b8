// A constrained model from two functions (issue 19; docs/custom-models.md): the user writes
// V(q) and phi(q) as templates over the scalar type, a diagonal mass matrix and named
// parameters, in a "spec" struct; AutoModel<Spec, Real> derives every primitive the generic
// formulations, methods, projections and diagnostics use (concepts.hpp's ConstrainedModel)
// by forward-mode automatic differentiation (linalg/jet.hpp), from the papers' general
// definitions for H = p^T M^-1 p / 2 + V(q), phi(q) = 0:
//
//   J = d phi / dq                               one pass of phi over Jet<Real, n>
//   J v (psi = J M^-1 p, 001 eq. 2)              one pass over Jet<Real, 1> seeded with v
//   grad V                                       one pass of V over Jet<Real, n>
//   sum_a l_a Hess(phi_a) v = grad_q (l . J v)   one pass over Jet<Jet<Real, 1>, n>
//   D^2 phi_a [u, w] = u^T Hess(phi_a) w         one pass over Jet<Jet<Real, 1>, 1>
//   Q = J M^-1 J^T (002 eq. 28)                  from J, dense Cholesky (linalg/dense_solve.hpp)
//   {psi_a, H} = D^2 phi_a [v, v] - J_a M^-1 grad V,  v = M^-1 p           (002 eq. 45's form)
//   (S nu)_a = D^2 phi_a [u, v] - (J M^-1 sum_b nu_b Hess(phi_b) v)_a,  u = M^-1 J^T nu
//     from S_ab = {psi_a, psi_b} = J_b M^-1 Hess(phi_a) v - J_a M^-1 Hess(phi_b) v (002 eq. 43's
//     definition, with d psi_a / dq = Hess(phi_a) v and d psi_a / dp = M^-1 J_a^T).
// The passes seed q_i along e_i alone: the jets' masks of structural zeros (linalg/jet.hpp)
// drop the products with the other directions' zero tangents at compile time.
//
// A spec (examples/custom_model/models/ has three) is a struct with
//   static constexpr const char* name;                       model.kind in study files
//   static constexpr int dof, constraints;                   n and m (n <= 12, m <= 6 tested)
//   static constexpr ModelParameter parameters[];            names and defaults ([model] keys)
//   static constexpr const char* coordinates[];              names of q (state columns)
//   template <class K> static Real mass(const K& k, int i);  diagonal of M
//   template <class T, class K> static T potential(const K& k, const Vec<T, n>& q);
//   template <class T, class K> static Vec<T, m> constraint(const K& k, const Vec<T, n>& q);
// and optionally
//   static void initial(const double* k, double* z);         default initial (q, p), consistent
//   template <class K> static Real constraint_scale(const K&); |phi|'s scale (default 1)
//   template <class T, class K> static T angular_momentum(const K&, const Vec<T, n>& q,
//                                                         const Vec<T, n>& p);  a first integral,
//                                                         reported as angular_momentum_error
//   static constexpr bool cpu_lanes = false;                  V or phi use functions the CPU
//                                                         lanes' D2 lacks (D2 has + - * / and exp only)
// where k holds the parameters' values in the study's order (k[0] is parameters[0]).
//
// Host/device (CHENS_HD), fixed sizes, trivially copyable, no heap or exceptions.
#pragma once

#include <type_traits>

#include <chens/config.hpp>
#include <chens/linalg/dense_solve.hpp>
#include <chens/linalg/jet.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

// A named parameter of a user model and its default; [model] name = value sets it.
struct ModelParameter {
  const char* name;
  double value;
  const char* meaning;
};

namespace auto_model_detail {
template <class S, class = void>
struct parameter_count : std::integral_constant<int, 0> {};
template <class S>
struct parameter_count<S, std::void_t<decltype(S::parameters)>>
    : std::integral_constant<int, int(sizeof(S::parameters) / sizeof(ModelParameter))> {};
template <class S, class = void>
struct has_angular_momentum : std::false_type {};
template <class S>
struct has_angular_momentum<S, std::void_t<decltype(S::template angular_momentum<double>(
                                   Vec < double, parameter_count<S>::value<1 ? 1 : parameter_count<S>::value>{},
                                   Vec<double, S::dof>{}, Vec<double, S::dof>{}))>> : std::true_type {};
template <class S, class = void>
struct has_constraint_scale : std::false_type {};
template <class S>
struct has_constraint_scale<S, std::void_t<decltype(S::constraint_scale(Vec<double, 1>{}))>> : std::true_type {};
template <class S, class = void>
struct cpu_lanes : std::true_type {};
template <class S>
struct cpu_lanes<S, std::void_t<decltype(S::cpu_lanes)>> : std::bool_constant<S::cpu_lanes> {};
template <class S, class = void>
struct has_initial : std::false_type {};
template <class S>
struct has_initial<S, std::void_t<decltype(S::initial(static_cast<const double*>(nullptr), static_cast<double*>(nullptr)))>>
    : std::true_type {};
}  // namespace auto_model_detail

template <class Spec>
inline constexpr int spec_parameter_count = auto_model_detail::parameter_count<Spec>::value;
template <class Spec>
inline constexpr bool spec_has_initial = auto_model_detail::has_initial<Spec>::value;

template <class Spec, class Real_>
struct AutoModel {
  using Real = Real_;
  static constexpr int dof = Spec::dof;
  static constexpr int constraints = Spec::constraints;
  static constexpr int state_size = 2 * dof;
  static constexpr int parameter_count = spec_parameter_count<Spec>;
  static_assert(dof >= 1 && constraints >= 1 && constraints < dof,
                "a user model needs 1 <= constraints < dof (docs/custom-models.md)");
  // A user model's conserved quantity besides H, if its spec names one: metrics.hpp's third
  // momentum integral (angular_momentum_error); the linear momenta are not reported.
  static constexpr bool has_momentum_integrals = auto_model_detail::has_angular_momentum<Spec>::value;
  static constexpr bool reports_linear_momentum = false;
  using State = Vec<Real, state_size>;
  using Coords = Vec<Real, dof>;
  using Multipliers = Vec<Real, constraints>;
  using Params = Vec<Real, (parameter_count < 1 ? 1 : parameter_count)>;
  using Gram = DenseCholesky<Real, constraints>;
  using CrossGram = DenseLu<Real, constraints>;
  using spec_type = Spec;

  Params k;         // the parameters' values, in the order of Spec::parameters
  Coords inv_mass;  // M^-1's diagonal, from Spec::mass

  CHENS_HD static AutoModel make(const Params& k) {
    AutoModel m;
    m.k = k;
    for (int i = 0; i < dof; ++i) m.inv_mass[i] = Real(1) / Real(Spec::mass(k, i));
    return m;
  }

  // The same model over another arithmetic type: double (the diagnostics of every run), the
  // CPU lanes' D2 (two instances per SSE2 register) where the spec allows it.
  template <class R>
  using rebind =
      std::enable_if_t<std::is_floating_point_v<R> || auto_model_detail::cpu_lanes<Spec>::value, AutoModel<Spec, R>>;
  template <class R>
  CHENS_HD AutoModel<Spec, R> rebound() const {
    AutoModel<Spec, R> m;
    for (int i = 0; i < Params::size; ++i) m.k[i] = R(k[i]);
    for (int i = 0; i < dof; ++i) m.inv_mass[i] = R(inv_mass[i]);
    return m;
  }

  CHENS_HD Real constraint_scale() const {
    if constexpr (auto_model_detail::has_constraint_scale<Spec>::value) {
      return Real(Spec::constraint_scale(k));
    } else {
      return Real(1);
    }
  }

  CHENS_HD CHENS_FORCEINLINE static Coords q_of(const State& z) {
    Coords q;
    for (int i = 0; i < dof; ++i) q[i] = z[i];
    return q;
  }
  CHENS_HD CHENS_FORCEINLINE static Coords p_of(const State& z) {
    Coords p;
    for (int i = 0; i < dof; ++i) p[i] = z[dof + i];
    return p;
  }
  CHENS_HD CHENS_FORCEINLINE static State join(const Coords& q, const Coords& p) {
    State z;
    for (int i = 0; i < dof; ++i) {
      z[i] = q[i];
      z[dof + i] = p[i];
    }
    return z;
  }

  CHENS_HD CHENS_FORCEINLINE Coords minv_mul(const Coords& v) const {
    Coords r;
    for (int i = 0; i < dof; ++i) r[i] = inv_mass[i] * v[i];
    return r;
  }
  CHENS_HD Real potential(const Coords& q) const { return Spec::potential(k, q); }
  CHENS_HD Real energy(const State& z) const {
    Real t = Real(0);
    for (int i = 0; i < dof; ++i) t = t + z[dof + i] * z[dof + i] * inv_mass[i];
    return t / Real(2) + potential(q_of(z));
  }
  CHENS_HD Multipliers phi(const Coords& q) const { return Spec::constraint(k, q); }

  // q as the variables of a first-order pass: q_i along e_i alone (the jets' masks know the
  // zeros).
  CHENS_HD CHENS_FORCEINLINE static Vec<Jet<Real, dof>, dof> variables(const Coords& q) {
    using J = Jet<Real, dof>;
    Vec<J, dof> x;
    CHENS_UNROLL
    for (int i = 0; i < dof; ++i) {
      x[i] = J(q[i]);
      x[i].set_tangent(i, Real(1));
    }
    return x;
  }
  // grad V: V over Jet<Real, n>, q_i seeded with e_i.
  CHENS_HD CHENS_FORCEINLINE Coords grad_potential(const Coords& q) const {
    using J = Jet<Real, dof>;
    const Vec<J, dof> x = variables(q);
    const J V = Spec::potential(k, x);
    Coords g;
    for (int i = 0; i < dof; ++i) g[i] = V.d[i];
    return g;
  }

  // The Jacobian J = d phi / dq (m x n): phi over Jet<Real, n>.
  struct Jacobian {
    Real a[constraints][dof];
  };
  // The three contractions of an m x n block (J, or the rows Hess(phi_a) v) that every
  // primitive and the one-pass right-hand side below share, in one operation order:
  //   rows_mul:   r_a = sum_i x_ai w_i                        (J v, v^T Hess(phi_a) w)
  //   rows_t_mul: r_i = sum_a x_ai l_a                        (J^T lambda, sum_a l_a Hess(phi_a) v)
  //   weighted_products: A_ab = sum_i x_ai M^-1_ii y_bi       (Q = J M^-1 J^T, RATTLE's matrix)
  using Rows = Real[constraints][dof];
  CHENS_HD CHENS_FORCEINLINE static Multipliers rows_mul(const Rows& x, const Coords& w) {
    Multipliers r;
    for (int a = 0; a < constraints; ++a) {
      Real s = x[a][0] * w[0];
      for (int i = 1; i < dof; ++i) s = s + x[a][i] * w[i];
      r[a] = s;
    }
    return r;
  }
  CHENS_HD CHENS_FORCEINLINE static Coords rows_t_mul(const Rows& x, const Multipliers& l) {
    Coords r;
    for (int i = 0; i < dof; ++i) {
      Real s = x[0][i] * l[0];
      for (int a = 1; a < constraints; ++a) s = s + x[a][i] * l[a];
      r[i] = s;
    }
    return r;
  }
  // symmetric (x = y): the lower triangle, mirrored.
  template <bool Symmetric>
  CHENS_HD CHENS_FORCEINLINE Mat<Real, constraints> weighted_products(const Rows& x, const Rows& y) const {
    Mat<Real, constraints> A;
    for (int a = 0; a < constraints; ++a)
      for (int b = 0; b < (Symmetric ? a + 1 : constraints); ++b) {
        Real s = x[a][0] * inv_mass[0] * y[b][0];
        for (int i = 1; i < dof; ++i) s = s + x[a][i] * inv_mass[i] * y[b][i];
        A.a[a][b] = s;
        if (Symmetric) A.a[b][a] = s;
      }
    return A;
  }
  CHENS_HD CHENS_FORCEINLINE Jacobian jacobian(const Coords& q) const {
    using J = Jet<Real, dof>;
    const Vec<J, dof> x = variables(q);
    const Vec<J, constraints> f = Spec::constraint(k, x);
    Jacobian jac;
    for (int a = 0; a < constraints; ++a)
      for (int i = 0; i < dof; ++i) jac.a[a][i] = f[a].d[i];
    return jac;
  }

  // J v: phi over Jet<Real, 1> seeded with v (a directional derivative).
  CHENS_HD CHENS_FORCEINLINE Multipliers jac_mul(const Coords& q, const Coords& v) const {
    using J = Jet<Real, 1>;
    Vec<J, dof> x;
    CHENS_UNROLL
    for (int i = 0; i < dof; ++i) {
      x[i].v = q[i];
      x[i].d[0] = v[i];
    }
    const Vec<J, constraints> f = Spec::constraint(k, x);
    Multipliers r;
    for (int a = 0; a < constraints; ++a) r[a] = f[a].d[0];
    return r;
  }
  // J^T lambda.
  CHENS_HD CHENS_FORCEINLINE Coords jac_t_mul(const Coords& q, const Multipliers& lam) const {
    return rows_t_mul(jacobian(q).a, lam);
  }
  // Everything the Hamilton-Dirac right-hand side needs of phi at (q, v), from ONE pass of phi
  // over Jet<Jet<Real, 1>, n> (inner tangent v, outer tangents e_i): phi_a's outer tangents
  // are the rows of J, their inner tangents Hess(phi_a) v, the value's inner tangent J v.
  struct Local {
    Jacobian jac;
    Multipliers jv;             // J v
    Real hv[constraints][dof];  // Hess(phi_a) v
  };
  CHENS_HD CHENS_FORCEINLINE Local local(const Coords& q, const Coords& v) const {
    using I = Jet<Real, 1>;
    using J = Jet<I, dof>;
    Vec<J, dof> x;
    CHENS_UNROLL
    for (int i = 0; i < dof; ++i) {
      I qi;
      qi.v = q[i];
      qi.d[0] = v[i];
      x[i] = J(qi);
      x[i].set_tangent(i, I(Real(1)));  // e_i, with no inner tangent
    }
    const Vec<J, constraints> f = Spec::constraint(k, x);
    Local l;
    for (int a = 0; a < constraints; ++a) {
      l.jv[a] = f[a].v.d[0];
      for (int i = 0; i < dof; ++i) {
        l.jac.a[a][i] = f[a].d[i].v;
        l.hv[a][i] = f[a].d[i].d[0];
      }
    }
    return l;
  }

  // sum_a lambda_a Hess(phi_a) v = grad_q (lambda . J(q) v), from local()'s one pass.
  CHENS_HD CHENS_FORCEINLINE Coords hess_phi_mul(const Coords& q, const Multipliers& lam, const Coords& v) const {
    return rows_t_mul(local(q, v).hv, lam);
  }
  // D^2 phi_a [u, w] = u^T Hess(phi_a) w for every a: phi over Jet<Jet<Real, 1>, 1>.
  CHENS_HD CHENS_FORCEINLINE Multipliers second_derivative(const Coords& q, const Coords& u, const Coords& w) const {
    using I = Jet<Real, 1>;
    using J = Jet<I, 1>;
    Vec<J, dof> x;
    CHENS_UNROLL
    for (int i = 0; i < dof; ++i) {
      x[i].v.v = q[i];
      x[i].v.d[0] = w[i];
      x[i].d[0] = I(u[i]);  // u, with no inner tangent
    }
    const Vec<J, constraints> f = Spec::constraint(k, x);
    Multipliers r;
    for (int a = 0; a < constraints; ++a) r[a] = f[a].d[0].d[0];
    return r;
  }

  // psi = {phi, H} = J M^-1 p (001 eq. 2).
  CHENS_HD CHENS_FORCEINLINE Multipliers psi(const State& z) const { return jac_mul(q_of(z), minv_mul(p_of(z))); }

  // A = J(qa) M^-1 J(qb)^T; qa = qb gives Q (002 eq. 28).
  CHENS_HD Mat<Real, constraints> cross_matrix(const Coords& qa, const Coords& qb) const {
    return weighted_products<false>(jacobian(qa).a, jacobian(qb).a);
  }
  CHENS_HD Mat<Real, constraints> gram_matrix(const Coords& q) const {
    const Jacobian jac = jacobian(q);
    return weighted_products<true>(jac.a, jac.a);
  }
  CHENS_HD Gram gram(const Coords& q) const { return Gram::factor(gram_matrix(q)); }
  CHENS_HD Multipliers gram_solve(const Coords& q, const Multipliers& r) const { return gram(q).solve(r); }
  // RATTLE's Newton matrix (integrators/rattle.hpp).
  CHENS_HD CrossGram cross_gram(const Coords& qa, const Coords& qb) const { return CrossGram::factor(cross_matrix(qa, qb)); }

  // {psi_a, H} = v^T Hess(phi_a) v - J_a M^-1 grad V, given gV = grad V (002 eq. 45's form).
  CHENS_HD Multipliers psi_h_bracket(const State& z, const Coords& gV) const {
    const Coords q = q_of(z);
    const Coords v = minv_mul(p_of(z));
    return second_derivative(q, v, v) - jac_mul(q, minv_mul(gV));
  }
  CHENS_HD Multipliers psi_h_bracket(const State& z) const { return psi_h_bracket(z, grad_potential(q_of(z))); }

  // S nu, S = {psi, psi} (002 eq. 43's definition; header comment).
  CHENS_HD Multipliers s_mul(const State& z, const Multipliers& nu) const {
    const Coords q = q_of(z);
    const Coords v = minv_mul(p_of(z));
    const Coords u = minv_mul(jac_t_mul(q, nu));
    return second_derivative(q, u, v) - jac_mul(q, minv_mul(hess_phi_mul(q, nu, v)));
  }

  // The spec's conserved quantity (P_x, P_y unused, L): metrics.hpp's momentum integrals.
  CHENS_HD Vec<Real, 3> momentum_integrals(const State& z) const {
    Vec<Real, 3> r = Vec<Real, 3>::zero();
    if constexpr (has_momentum_integrals) r[2] = Spec::angular_momentum(k, q_of(z), p_of(z));
    return r;
  }
};

// The Hamilton-Dirac right-hand side (002 eq. 31, as formulations/hamilton_dirac.hpp's
// hamilton_dirac_rhs writes it for every model) for a user model, with phi's derivatives from
// the one pass of AutoModel::local instead of one pass per primitive (seven): the same
// formula, term for term, about half the work (docs/performance.md, "User models"). With
// v = M^-1 p, nu = Q^-1 psi, lambda = Q^-1 {psi, H}:
//   q' = M^-1 (p - J^T nu),
//   p' = -grad V + J^T (Q^-1 S nu - lambda) + sum_a nu_a Hess(phi_a) v,
//   {psi_a, H} = v^T Hess(phi_a) v - J_a M^-1 grad V,
//   (S nu)_a = u^T Hess(phi_a) v - J_a M^-1 sum_b nu_b Hess(phi_b) v,  u = M^-1 J^T nu.
// Checked against the dense oracle like every other primitive (tests/test_auto_model.cpp).
template <class Spec, class Real>
CHENS_HD CHENS_FORCEINLINE void hamilton_dirac_rhs(const AutoModel<Spec, Real>& model,
                                                   const typename AutoModel<Spec, Real>::State& z,
                                                   typename AutoModel<Spec, Real>::State& dz) {
  using M = AutoModel<Spec, Real>;
  constexpr int m = M::constraints;
  const auto q = M::q_of(z);
  const auto p = M::p_of(z);
  const auto v = model.minv_mul(p);
  const auto gV = model.grad_potential(q);
  const typename M::Local L = model.local(q, v);
  const auto Q = M::Gram::factor(model.template weighted_products<true>(L.jac.a, L.jac.a));
  const auto nu = Q.solve(L.jv);
  // {psi, H}_a = v^T Hess(phi_a) v - J_a M^-1 grad V
  const auto lam = Q.solve(M::rows_mul(L.hv, v) - M::rows_mul(L.jac.a, model.minv_mul(gV)));
  const auto hnu = M::rows_t_mul(L.hv, nu);  // sum_a nu_a Hess(phi_a) v
  typename M::Multipliers rhs_l;
  if constexpr (m == 1) {
    rhs_l[0] = -lam[0];  // S is skew: zero for one constraint
  } else {
    // (S nu)_a = u^T Hess(phi_a) v - J_a M^-1 hnu,  u = M^-1 J^T nu
    const auto u = model.minv_mul(M::rows_t_mul(L.jac.a, nu));
    rhs_l = Q.solve(M::rows_mul(L.hv, u) - M::rows_mul(L.jac.a, model.minv_mul(hnu)));
    for (int a = 0; a < m; ++a) rhs_l[a] = rhs_l[a] - lam[a];
  }
  const auto dq = model.minv_mul(p - M::rows_t_mul(L.jac.a, nu));
  const auto dp = M::rows_t_mul(L.jac.a, rhs_l) + hnu - gV;
  dz = M::join(dq, dp);
}

}  // namespace chens
