// The named interfaces of the per-instance code (issue 18): what a model, a system (a
// formulation bound to a model) and a method must provide, with the paper equation each
// member implements (docs/references.md for the numbering). Checked where a compiler has
// C++20 concepts: the host build (dispatch/make_engine.hpp requires them of every entry of the
// systems list) and tests/test_concepts.cpp; nvcc compiles this code as C++17 and skips them.
#pragma once

#include <chens/config.hpp>

#if defined(__cpp_concepts) && __cpp_concepts >= 201907L
#include <concepts>

#include <type_traits>

#include <chens/formulations/formulation.hpp>
#include <chens/integrators/status.hpp>

namespace chens {

// A Hamiltonian H = p^T M^-1 p / 2 + V(q) with holonomic constraints phi(q) = 0, through the
// primitives the generic formulations use (002 eqs. 27-31).
template <class M>
concept ConstrainedModel = requires(const M& m, const typename M::State& z, const typename M::Coords& q,
                                    const typename M::Multipliers& lam) {
  typename M::Real;
  typename M::State;        // (q, p), state_size = 2 dof numbers
  typename M::Coords;       // q or p: dof numbers
  typename M::Multipliers;  // one number per constraint
  requires M::state_size == 2 * M::dof;
  requires M::constraints >= 1;
  { M::has_momentum_integrals } -> std::convertible_to<bool>;  // total P and L are first integrals
  { M::q_of(z) } -> std::same_as<typename M::Coords>;
  { M::p_of(z) } -> std::same_as<typename M::Coords>;
  { M::join(q, q) } -> std::same_as<typename M::State>;
  { m.energy(z) } -> std::same_as<typename M::Real>;                  // H
  { m.potential(q) } -> std::same_as<typename M::Real>;               // V(q)
  { m.grad_potential(q) } -> std::same_as<typename M::Coords>;        // grad V
  { m.minv_mul(q) } -> std::same_as<typename M::Coords>;              // M^-1 v
  { m.phi(q) } -> std::same_as<typename M::Multipliers>;              // phi (001 eq. 2)
  { m.jac_mul(q, q) } -> std::same_as<typename M::Multipliers>;       // J v, J = d phi / dq
  { m.jac_t_mul(q, lam) } -> std::same_as<typename M::Coords>;        // J^T lambda
  { m.hess_phi_mul(q, lam, q) } -> std::same_as<typename M::Coords>;  // sum_a lambda_a Hess(phi_a) v
  { m.psi(z) } -> std::same_as<typename M::Multipliers>;              // psi = {phi, H} = J M^-1 p
  { m.gram(q).solve(lam) } -> std::same_as<typename M::Multipliers>;  // Q^-1 r, Q = J M^-1 J^T (002 eq. 28)
  { m.gram_solve(q, lam) } -> std::same_as<typename M::Multipliers>;
  { m.psi_h_bracket(z, q) } -> std::same_as<typename M::Multipliers>;  // {psi, H} given grad V (002 eq. 45)
  { m.s_mul(z, lam) } -> std::same_as<typename M::Multipliers>;        // S lambda, S = {psi, psi} (002 eq. 43)
  { m.constraint_scale() } -> std::convertible_to<typename M::Real>;   // |phi|'s scale (tolerances)
};

// A formulation bound to its model: the underlying equations z' = f(z) (002 §§3-5: naive
// eq. 38, Hamilton-Dirac eq. 31, ...) or, for FormulationId::constrained, the DAE RATTLE
// integrates (no right-hand side).
template <class S>
concept ModelSystem = requires(const S& sys, const typename S::State& z) {
  typename S::Real;
  typename S::State;
  requires ConstrainedModel<std::remove_cvref_t<decltype(sys.model)>>;
  { S::id } -> std::convertible_to<FormulationId>;
  { S::has_impetus } -> std::convertible_to<bool>;  // impetus-striction: p* carried in the state (000 §8)
  { sys.physical(z) } -> std::convertible_to<typename decltype(sys.model)::State>;  // the physical (q, p)
};

// A one-step method: fixed-step ones advance by step(); adaptive ones (DOPRI5) by their own
// attempts under the per-instance driver (ensemble/instance.hpp).
template <class Mt, class S>
concept OneStepMethod = ModelSystem<S> &&
    requires(const Mt& method, const S& sys, const typename S::State& z, typename S::Real h, typename S::State& z_new) {
  { Mt::adaptive } -> std::convertible_to<bool>;
  { Mt::has_lanes } -> std::convertible_to<bool>;  // several instances in lockstep (CPU lanes)
  { Mt::order } -> std::convertible_to<int>;
  requires Mt::adaptive || requires {
    { method.step(sys, z, h, z_new) } -> std::same_as<StepStatus>;
  };
};

}  // namespace chens
#endif
