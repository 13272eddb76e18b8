// Equations of motion of the penalty (augmented-potential) model, 003 eqs. (48)-(51) in
// Hamiltonian form: q' = M^-1 p, p' = -grad V_mu(q) (models/penalty_pendulum.hpp). No
// constraint enters the dynamics; H_mu is separable, so Stormer-Verlet applies
// (integrators/stormer_verlet.hpp).
#pragma once

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>

namespace chens {

template <class Model>
struct PenaltyOde {
  using Real = typename Model::Real;
  using State = typename Model::State;
  static constexpr FormulationId id = FormulationId::penalty;
  static constexpr bool has_impetus = false;
  static constexpr bool separable = true;  // H = T(p) + V(q): velocity and force apart
  Model model;

  CHENS_HD CHENS_FORCEINLINE void rhs(const State& z, State& dz) const {
    const auto q = Model::q_of(z);
    dz = Model::join(model.minv_mul(Model::p_of(z)), Real(-1) * model.grad_potential(q));
  }
  CHENS_HD CHENS_FORCEINLINE State physical(const State& z) const { return z; }
};

}  // namespace chens
