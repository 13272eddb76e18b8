// Baumgarte stabilisation (Baumgarte 1972; 004 §4, 002 §12) of the naive index-reduced
// equations: the multiplier makes the constraint obey a damped oscillator instead of
// phi'' = 0,
//   q' = M^-1 p,   p' = -grad V + J^T lambda,
//   Q lambda = -{psi, H} - 2 alpha psi - beta^2 phi,
// so that phi'' + 2 alpha phi' + beta^2 phi = 0 (phi' = psi). alpha = beta = 0 is the naive
// formulation (formulations/naive.hpp). The flow is not Hamiltonian (004 §4: "they destroy
// the Hamiltonian structure"); residuals decay with rate alpha (critically damped when
// alpha = beta) instead of drifting.
#pragma once

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>

namespace chens {

template <class Model>
struct Baumgarte {
  using Real = typename Model::Real;
  using State = typename Model::State;
  static constexpr FormulationId id = FormulationId::baumgarte;
  static constexpr bool has_impetus = false;
  Model model;
  Real alpha = Real(1);  // damping of phi' (integrator.baumgarte_alpha)
  Real beta = Real(1);   // frequency of phi (integrator.baumgarte_beta)

  CHENS_HD CHENS_FORCEINLINE void rhs(const State& z, State& dz) const {
    const auto q = Model::q_of(z);
    const auto p = Model::p_of(z);
    const auto gV = model.grad_potential(q);
    const auto br = model.psi_h_bracket(z, gV);
    const auto ps = model.psi(z);
    const auto ph = model.phi(q);
    const Real a2 = Real(2) * alpha, b2 = beta * beta;
    auto r = br;
    for (int c = 0; c < Model::constraints; ++c) r[c] = -(br[c] + a2 * ps[c] + b2 * ph[c]);
    const auto lam = model.gram(q).solve(r);
    dz = Model::join(model.minv_mul(p), model.jac_t_mul(q, lam) - gV);
  }
  CHENS_HD CHENS_FORCEINLINE State physical(const State& z) const { return z; }
};

// The same formulation over another arithmetic type, parameters kept (the CPU lanes and
// the tangent propagation of geometry/tangent_system.hpp rebind systems).
template <class R, class Model>
CHENS_HD Baumgarte<typename Model::template rebind<R>> rebound_system(const Baumgarte<Model>& f) {
  return Baumgarte<typename Model::template rebind<R>>{f.model.template rebound<R>(), R(f.alpha), R(f.beta)};
}

}  // namespace chens
