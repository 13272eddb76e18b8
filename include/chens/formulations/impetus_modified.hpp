// Impetus-striction equations of the modified pendulum Hamiltonian (000 eqs. 52-53).
// 000 §8 replaces H by Hbar = |q|^2 |p|^2 / (2 m l^2) + m g y, which agrees with H on
// |q| = l. In impetus variables (p = p* - lambda q*, q.p = 0 by the striction) the
// Lagrange identity |q|^2 |p|^2 = (q.p)^2 + (q x p)^2 gives Hbar* = v^2/(2 m l^2) + m g y
// with v = x* py* - y* px*, independent of lambda, hence (000 eq. 53 for m = l = g = 1)
//   x*' = -v y* / (m l^2),  y*' = v x* / (m l^2),
//   px*' = -v py* / (m l^2),  py*' = v px* / (m l^2) - m g.
// Physical momenta are recovered as for the plain impetus formulation (000 eq. 26).
#pragma once

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/models/pendulum.hpp>

namespace chens {

template <class Model>
struct ImpetusModified {
  static_assert(sizeof(Model) == 0, "the modified impetus Hamiltonian (000 eq. 52) is defined for the pendulum only");
};

template <class Real_, bool Unit>
struct ImpetusModified<Pendulum<Real_, Unit>> {
  using Model = Pendulum<Real_, Unit>;
  using Real = Real_;
  using State = typename Model::State;
  static constexpr FormulationId id = FormulationId::impetus_modified;
  static constexpr bool has_impetus = true;
  Model model;

  CHENS_HD CHENS_FORCEINLINE void rhs(const State& z, State& dz) const {
    const Real x = z[0], y = z[1], px = z[2], py = z[3];
    const Real w = (x * py - y * px) / (model.mass() * model.length() * model.length());
    dz[0] = -w * y;
    dz[1] = w * x;
    dz[2] = -w * py;
    dz[3] = w * px - model.mass() * model.gravity();
  }
  CHENS_HD CHENS_FORCEINLINE State physical(const State& z) const { return impetus_to_physical(model, z); }
};

}  // namespace chens
