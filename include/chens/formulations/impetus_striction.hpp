// Impetus-striction formalism (000 §5-6). The state is (q*, p*) with impetuses p*;
// the strictions lambda solve the linear system (000 eq. 32)
//   Q lambda = J M^-1 p*          (Q = J M^-1 J^T, mass-orthogonal projection),
// the physical momenta are p = p* - J^T lambda (000 eq. 26), and the equations of
// motion are (000 eq. 30, pendulum: 000 eq. 50)
//   q*' = M^-1 p,   p*' = -grad V + sum_a lambda_a Hess(phi_a) M^-1 p.
// Derivatives of lambda drop out because of 000 eq. 25. The "reset" of 000 §8
// replaces p* by p; it changes no physical observable.
#pragma once

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>

namespace chens {

// Physical state of an impetus state (000 eq. 26): q = q*, p = p* - J^T lambda.
template <class Model>
CHENS_HD CHENS_FORCEINLINE typename Model::State impetus_to_physical(const Model& model, const typename Model::State& z) {
  const auto q = Model::q_of(z);
  const auto lam = model.gram_solve(q, model.psi(z));
  return Model::join(q, Model::p_of(z) - model.jac_t_mul(q, lam));
}

template <class Model>
struct ImpetusStriction {
  using Real = typename Model::Real;
  using State = typename Model::State;
  static constexpr FormulationId id = FormulationId::impetus;
  static constexpr bool has_impetus = true;
  Model model;

  CHENS_HD CHENS_FORCEINLINE void rhs(const State& z, State& dz) const {
    const auto q = Model::q_of(z);
    const auto lam = model.gram_solve(q, model.psi(z));
    const auto p = Model::p_of(z) - model.jac_t_mul(q, lam);
    const auto v = model.minv_mul(p);
    dz = Model::join(v, model.hess_phi_mul(q, lam, v) - model.grad_potential(q));
  }
  CHENS_HD CHENS_FORCEINLINE State physical(const State& z) const { return impetus_to_physical(model, z); }
};

}  // namespace chens
