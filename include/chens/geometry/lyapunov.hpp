// Finite-time Lyapunov exponents on the constraint manifold (issue 43, item 1): the per-instance
// pieces, written once for every model. A run carries tangent vectors dz through the discrete
// variational equations of its own step (geometry/tangent_system.hpp's TangentStepper: the step over
// dual numbers), and the exponents are Benettin's (Benettin, Galgani, Giorgilli & Strelcyn,
// Meccanica 15 (1980) 9-30): the tangents are re-orthonormalised at a fixed interval, the logs
// of their growth summed, and
//   lambda_i(t) = (1/t) sum_k log r_ii(t_k),
// r_ii the diagonal of the QR factorisation (modified Gram-Schmidt) at each renormalisation;
// one tangent gives the largest exponent, as many tangents as the manifold's dimension
// 2(n - m) the spectrum.
//
// The exponents of a constrained system live on its manifold M = {phi(q) = 0, psi(q, p) = 0}
// (psi = G M^-1 p, G = grad phi): a tangent off T_z M would measure how fast the integration
// leaves M, which is the drift the papers study, not the dynamics. tangent_projection puts a
// vector into T_z M:
//   dq <- dq - M^-1 G^T Q^-1 G dq           (then G dq = 0),
//   dp <- dp - G^T Q^-1 dpsi(dq, dp)        (then dpsi = psi_q dq + psi_p dp = 0, psi_p = G M^-1),
// with Q = G M^-1 G^T (002 eq. 28), the Gram matrix the formulations factor, and dpsi by forward
// mode (Dual2) of the model's own psi. They move a vector along M^-1 G^T and G^T, the
// directions in which the mass-orthogonal position and momentum projections move a state
// (002 eqs. 66-67); they fix any vector already tangent, e.g. the Hamilton-Dirac field (002
// eq. 47), and are idempotent (tests/test_lyapunov.cpp).
//
// Norms are Euclidean in the physical (q, p). The finite-time values depend on that choice by
// O(1/t); the limits do not.
#pragma once

#include <cmath>
#include <type_traits>

#include <chens/config.hpp>
#include <chens/linalg/dual.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

// dz at z (on M), projected into T_z M (above). Physical (q, p) for both.
template <class Model>
CHENS_HD typename Model::State tangent_projection(const Model& model, const typename Model::State& z,
                                                  const typename Model::State& dz) {
  using Real = typename Model::Real;
  using D = Dual2<Real>;
  const auto q = Model::q_of(z);
  const auto Q = model.gram(q);
  auto dq = Model::q_of(dz);
  auto dp = Model::p_of(dz);
  dq = dq - model.minv_mul(model.jac_t_mul(q, Q.solve(model.jac_mul(q, dq))));
  const auto dual_model = model.template rebound<D>();
  typename std::decay_t<decltype(dual_model)>::State zd;
  const auto moved = Model::join(dq, dp);
  for (int c = 0; c < Model::State::size; ++c) zd[c] = D(z[c], moved[c], Real(0));
  const auto dpsi = dual_model.psi(zd);
  typename Model::Multipliers r;
  for (int a = 0; a < Model::constraints; ++a) r[a] = dpsi[a].d[0];
  dp = dp - model.jac_t_mul(q, Q.solve(r));
  return Model::join(dq, dp);
}

// Modified Gram-Schmidt of the K tangents v[0..K-1] in place (each of S numbers): afterwards
// orthonormal, and log_r[k] += log r_kk, the log of the k-th vector's growth orthogonal to
// the ones before it. A zero or non-finite r_kk makes log_r[k] -inf or NaN, which the caller
// sees (no exception here).
template <class Real, int S, int K>
CHENS_HD void orthonormalise(Vec<Real, S> (&v)[K], double (&log_r)[K]) {
  using std::log;
  using std::sqrt;
  for (int k = 0; k < K; ++k) {
    for (int j = 0; j < k; ++j) {
      Real along = Real(0);  // v_k . v_j
      for (int c = 0; c < S; ++c) along = along + v[j][c] * v[k][c];
      for (int c = 0; c < S; ++c) v[k][c] = v[k][c] - along * v[j][c];
    }
    Real n2 = Real(0);
    for (int c = 0; c < S; ++c) n2 = n2 + v[k][c] * v[k][c];
    const Real n = sqrt(n2);
    log_r[k] += log(static_cast<double>(n));
    const Real inv = Real(1) / n;
    for (int c = 0; c < S; ++c) v[k][c] = inv * v[k][c];
  }
}

}  // namespace chens
