// Underlying Hamiltonian system of the total Hamiltonian H_t = H + mu phi (001 eq. 5),
// with mu the multiplier of 001 eq. (3): Q mu = {psi, H}. Its equations differ from the
// naive ones only by terms proportional to phi. They need grad mu, which has a closed
// form only model by model; chens provides it for the pendulum (001 eq. 14), written
// here for general m, l, g:
//   A = |p|^2/m - m g y,  r^2 = x^2 + y^2,  mu = A / r^2,
//   x' = px/m + 2 px phi / (m r^2),         y' = py/m + 2 py phi / (m r^2),
//   px' = -mu x + 2 x mu phi / r^2,         py' = -m g - mu y + (m g + 2 y mu) phi / r^2.
// With m = l = g = 1 this is 001 eq. (14) verbatim.
#pragma once

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/models/pendulum.hpp>

namespace chens {

template <class Model>
struct TotalHamiltonian {
  static_assert(sizeof(Model) == 0, "the total-Hamiltonian formulation needs closed-form multiplier gradients; "
                                    "chens provides them for the pendulum only");
};

template <class Real_, bool Unit>
struct TotalHamiltonian<Pendulum<Real_, Unit>> {
  using Model = Pendulum<Real_, Unit>;
  using Real = Real_;
  using State = typename Model::State;
  static constexpr FormulationId id = FormulationId::total;
  static constexpr bool has_impetus = false;
  Model model;

  CHENS_HD CHENS_FORCEINLINE void rhs(const State& z, State& dz) const {
    const Real x = z[0], y = z[1], px = z[2], py = z[3];
    const Real m = model.mass(), mg = model.mass() * model.gravity();
    const Real r2 = x * x + y * y;
    const Real ir2 = Real(1) / r2;
    const Real phi = (r2 - model.length() * model.length()) / Real(2);
    const Real mu = ((px * px + py * py) / m - mg * y) * ir2;
    const Real c = Real(2) * phi * ir2;  // 2 phi / r^2
    dz[0] = px / m + c * px / m;
    dz[1] = py / m + c * py / m;
    dz[2] = -mu * x + c * x * mu;
    dz[3] = -mg - mu * y + (mg + Real(2) * y * mu) * phi * ir2;
  }
  CHENS_HD CHENS_FORCEINLINE State physical(const State& z) const { return z; }
};

}  // namespace chens
