// Mass-orthogonal momentum projection (002 eq. 66, pendulum 002 eq. 68; 001 Prop. 2):
//   p <- p - J^T Q^-1 (psi(q, p) - target),   Q = J M^-1 J^T,
// the closest point in the mass norm |dp|^2_M = dp^T M^-1 dp on {psi = target}. psi is
// linear in p, so one solve is exact. The projection is a canonical map (001 Prop. 2)
// and changes the energy by O(h^(2r+2)) after a step of order r (001 Prop. 4).
#pragma once

#include <chens/config.hpp>

namespace chens {

template <class Model>
CHENS_HD CHENS_FORCEINLINE void momentum_project(const Model& model, typename Model::State& z,
                                                 const typename Model::Multipliers& target) {
  const auto q = Model::q_of(z);
  auto r = model.psi(z);
  for (int a = 0; a < Model::constraints; ++a) r[a] = r[a] - target[a];
  const auto lam = model.gram(q).solve(r);
  z = Model::join(q, Model::p_of(z) - model.jac_t_mul(q, lam));
}

template <class Model>
CHENS_HD CHENS_FORCEINLINE void momentum_project(const Model& model, typename Model::State& z) {
  momentum_project(model, z, Model::Multipliers::zero());
}

}  // namespace chens
