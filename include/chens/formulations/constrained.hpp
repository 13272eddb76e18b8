// The constrained Hamiltonian system itself, q' = M^-1 p, p' = -grad V - J^T lambda,
// phi(q) = 0 (an index-3 DAE; 004 eq. 1.1-1.3), for methods that integrate it directly
// rather than an underlying ODE: RATTLE (integrators/rattle.hpp). It has no right-hand
// side; the state is the physical (q, p).
#pragma once

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>

namespace chens {

template <class Model>
struct Constrained {
  using Real = typename Model::Real;
  using State = typename Model::State;
  static constexpr FormulationId id = FormulationId::constrained;
  static constexpr bool has_impetus = false;
  Model model;

  CHENS_HD CHENS_FORCEINLINE State physical(const State& z) const { return z; }
};

}  // namespace chens
