// Naive index-reduced underlying ODE (002 eq. 38 = 001 eq. 13 = 004 eq. 1.6):
//   q' = M^-1 p,   p' = -grad V + J^T lambda,
// with lambda chosen so that d^2 phi / dt^2 = 0, i.e. Q lambda = -{psi, H}
// (002 eqs. 26/28; the sign follows 002 eq. 36, which is the consistent one).
#pragma once

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>

namespace chens {

template <class Model>
struct Naive {
  using Real = typename Model::Real;
  using State = typename Model::State;
  static constexpr FormulationId id = FormulationId::naive;
  static constexpr bool has_impetus = false;
  Model model;

  CHENS_HD CHENS_FORCEINLINE void rhs(const State& z, State& dz) const {
    const auto q = Model::q_of(z);
    const auto p = Model::p_of(z);
    const auto gV = model.grad_potential(q);
    auto lam = model.gram(q).solve(model.psi_h_bracket(z, gV));
    for (int a = 0; a < Model::constraints; ++a) lam[a] = -lam[a];
    const auto dq = model.minv_mul(p);
    const auto dp = model.jac_t_mul(q, lam) - gV;
    dz = Model::join(dq, dp);
  }
  CHENS_HD CHENS_FORCEINLINE State physical(const State& z) const { return z; }
};

}  // namespace chens
