// Mass-orthogonal position projection by Newton's method with a frozen matrix
// (002 eq. 67): with J~ = J(q~) at the point q~ the step produced,
//   q^(k+1) = q^(k) - M^-1 J~^T (J~ M^-1 J~^T)^-1 (phi(q^(k)) - target),
// stopped as soon as max_a |phi_a(q^(k)) - target_a| <= tol (002 §11). For the pendulum
// the minimum-norm correction of the under-determined Newton system is radial, as in
// 002 eq. 69. Momenta are left untouched.
#pragma once

#include <chens/config.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

struct ProjectionStatus {
  bool converged = true;
  int iterations = 0;
};

template <class Model>
CHENS_HD CHENS_FORCEINLINE ProjectionStatus position_project(const Model& model, typename Model::State& z,
                                                             typename Model::Real tol, int max_iterations,
                                                             const typename Model::Multipliers& target) {
  using Real = typename Model::Real;
  ProjectionStatus st;
  const auto q_frozen = Model::q_of(z);
  auto q = q_frozen;
  const auto Q = model.gram(q_frozen);
  st.converged = false;
  for (int it = 0; it <= max_iterations; ++it) {
    auto r = model.phi(q);
    for (int a = 0; a < Model::constraints; ++a) r[a] = r[a] - target[a];
    const Real res = max_abs(r);
    if (res <= tol) {
      st.converged = true;
      break;
    }
    if (it == max_iterations || !(res == res)) break;
    const auto lam = Q.solve(r);
    q = q - model.minv_mul(model.jac_t_mul(q_frozen, lam));
    st.iterations = it + 1;
  }
  z = Model::join(q, Model::p_of(z));
  return st;
}

template <class Model>
CHENS_HD CHENS_FORCEINLINE ProjectionStatus position_project(const Model& model, typename Model::State& z,
                                                             typename Model::Real tol, int max_iterations) {
  return position_project(model, z, tol, max_iterations, Model::Multipliers::zero());
}

}  // namespace chens
