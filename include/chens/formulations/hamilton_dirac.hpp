// Hamilton-Dirac equations z' = {z, H}* (002 eq. 17), written for imposed holonomic
// constraints with C = [[0, Q], [-Q^T, S]] and the block inverse of 002 eq. 30:
//   q' = M^-1 (p - J^T nu),
//   p' = -grad V + J^T (lambda + Q^-1 S nu) + sum_a nu_a Hess(phi_a) M^-1 p,
// where nu = Q^-1 psi and lambda = -Q^-1 {psi, H} is the naive multiplier
// (002 eq. 31; for the pendulum this is 002 eqs. 35-36 = 001 eq. 15 = 004 eqs. 3.7-3.8).
// The constraints phi and psi are first integrals of this flow (002 eq. 47).
#pragma once

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>

namespace chens {

template <class Model>
struct HamiltonDirac {
  using Real = typename Model::Real;
  using State = typename Model::State;
  static constexpr FormulationId id = FormulationId::dirac;
  static constexpr bool has_impetus = false;
  Model model;

  CHENS_HD CHENS_FORCEINLINE void rhs(const State& z, State& dz) const {
    const auto q = Model::q_of(z);
    const auto p = Model::p_of(z);
    const auto v = model.minv_mul(p);  // dH/dp
    const auto gV = model.grad_potential(q);
    const auto Q = model.gram(q);  // factorised once, three solves (002 §7: O(N) for chains)
    const auto nu = Q.solve(model.psi(z));
    const auto lam = Q.solve(model.psi_h_bracket(z, gV));
    typename Model::Multipliers rhs_l;  // Q^-1 S nu - Q^-1 {psi, H}
    if constexpr (Model::constraints == 1) {
      rhs_l[0] = -lam[0];  // S = {psi, psi} is skew-symmetric: for one constraint it vanishes
    } else {
      rhs_l = Q.solve(model.s_mul(z, nu));
      for (int a = 0; a < Model::constraints; ++a) rhs_l[a] = rhs_l[a] - lam[a];
    }
    const auto dq = model.minv_mul(p - model.jac_t_mul(q, nu));
    const auto dp = model.jac_t_mul(q, rhs_l) + model.hess_phi_mul(q, nu, v) - gV;
    dz = Model::join(dq, dp);
  }
  CHENS_HD CHENS_FORCEINLINE State physical(const State& z) const { return z; }
};

}  // namespace chens
