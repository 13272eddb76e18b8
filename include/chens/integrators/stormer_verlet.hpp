// Stormer-Verlet (velocity Verlet; Hairer-Lubich-Wanner, Geometric Numerical Integration
// §I.1.4) for separable Hamiltonians H = p^T M^-1 p / 2 + V(q):
//   p_1/2 = p_n - h/2 grad V(q_n),  q_n+1 = q_n + h M^-1 p_1/2,  p_n+1 = p_1/2 - h/2 grad V(q_n+1).
// Explicit, symmetric, symplectic, order 2; its energy error stays bounded (O(h^2)) over
// exponentially long times where h omega < 2 for the fastest frequency omega. It is the
// method 003's penalty potentials call for (formulations/penalty.hpp), with h resolved from
// the fast frequency sqrt(mu) (integrator.steps_per_oscillation).
#pragma once

#include <chens/config.hpp>
#include <chens/integrators/status.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

struct StormerVerlet {
  static constexpr bool adaptive = false;
  static constexpr bool has_lanes = false;
  static constexpr int order = 2;

  template <class System>
  CHENS_HD CHENS_FORCEINLINE StepStatus step(const System& sys, const typename System::State& z, typename System::Real h,
                                             typename System::State& z_new) const {
    static_assert(System::separable, "Stormer-Verlet needs a separable Hamiltonian (the penalty model)");
    using Real = typename System::Real;
    using Model = decltype(sys.model);
    const Model& model = sys.model;
    StepStatus st;
    const Real half = h / Real(2);
    const auto p_half = Model::p_of(z) - half * model.grad_potential(Model::q_of(z));
    const auto q1 = Model::q_of(z) + h * model.minv_mul(p_half);
    z_new = Model::join(q1, p_half - half * model.grad_potential(q1));
    st.rhs_evals = 2;  // force (grad V) evaluations
    st.finite = all_finite(z_new);
    return st;
  }
};

}  // namespace chens
