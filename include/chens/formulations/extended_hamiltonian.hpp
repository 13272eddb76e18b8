// Equations of motion of the extended Hamiltonian H_e = H - lambda phi + mu psi
// (002 eqs. 32-33, 37) with lambda, mu the weakly defined multipliers of 002 eq. (36);
// equivalently H_e = H_c^* of 002 eq. (24). They need derivatives of C^-1 and exist in
// closed form model by model; chens provides the pendulum, written for general m, l, g:
//   r^2 = x^2 + y^2,  lambda = -(|p|^2/m - m g y) / r^2,  mu = -(x px + y py) / (m r^2),
//   q'  = (2 - l^2/r^2) p/m + 2 mu q,
//   p'  = lambda l^2 q / r^2 - 2 mu p - 2 m mu^2 q - (0, (m g / 2)(1 + l^2/r^2)).
// With m = l = g = 1 this is 002 eq. (37) verbatim.
#pragma once

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/models/pendulum.hpp>

namespace chens {

template <class Model>
struct ExtendedHamiltonian {
  static_assert(sizeof(Model) == 0, "the extended-Hamiltonian formulation needs derivatives of C^-1; "
                                    "chens provides them for the pendulum only");
};

template <class Real_, bool Unit>
struct ExtendedHamiltonian<Pendulum<Real_, Unit>> {
  using Model = Pendulum<Real_, Unit>;
  using Real = Real_;
  using State = typename Model::State;
  static constexpr FormulationId id = FormulationId::extended;
  static constexpr bool has_impetus = false;
  Model model;

  CHENS_HD CHENS_FORCEINLINE void rhs(const State& z, State& dz) const {
    const Real x = z[0], y = z[1], px = z[2], py = z[3];
    const Real m = model.mass(), mg = model.mass() * model.gravity(), l2 = model.length() * model.length();
    const Real r2 = x * x + y * y;
    const Real ir2 = Real(1) / r2;
    const Real lam = -((px * px + py * py) / m - mg * y) * ir2;
    const Real mu = -(x * px + y * py) * ir2 / m;
    const Real a = (Real(2) - l2 * ir2) / m;
    const Real b = lam * l2 * ir2 - Real(2) * m * mu * mu;
    dz[0] = a * px + Real(2) * mu * x;
    dz[1] = a * py + Real(2) * mu * y;
    dz[2] = b * x - Real(2) * mu * px;
    dz[3] = b * y - Real(2) * mu * py - mg * (Real(1) + l2 * ir2) / Real(2);
  }
  CHENS_HD CHENS_FORCEINLINE State physical(const State& z) const { return z; }
};

}  // namespace chens
