// The pendulum with its constraint replaced by a stiff augmented potential (003, Fax 1998,
// after Rubin & Ungar 1957): an unconstrained Hamiltonian system in R^4,
//
//   H_mu = |p|^2 / (2m) + m g y + mu C(q)^2,
//   C = G  = x^2 + y^2 - l^2                       (003 eq. 46), or
//   C = G1 = exp(x / l) G                          (003 §5: the same zero set),
//   p' = -grad V_mu = -(0, m g) - 2 mu C grad C,   grad G1 = exp(x/l) (G / l + 2x, 2y).
//
// Convention: we follow the Hamiltonian the issue states (penalty mu ||C||^2, gravity
// along -y). 003's Lagrangian (eq. 45) has +g y, i.e. gravity along +y, and its
// equations (48)-(49) are the gradient of (mu/2) G^2, not of mu G^2, while (50)-(51) are
// not a gradient at all (e^x instead of e^{2x}: their curl does not vanish, so they are
// not Hamiltonian). With our convention the force is -2 mu C grad C for both C, gravity
// pulls to -y as in every other chens pendulum, and 003's mu is 2 mu here; the limit
// mu -> infinity and the convergence orders do not depend on the factor.
//
// The constraint geometry (phi, psi, Q, projections) is the rigid pendulum's: it defines
// the consistent and inconsistent initial data (tangential / non-tangential velocity,
// ensemble/perturbation.hpp), the residual metrics and the closed-form constrained
// solution that the penalty dynamics approach (reference/pendulum_exact.hpp).
#pragma once

#include <cmath>

#include <chens/config.hpp>
#include <chens/linalg/vec.hpp>
#include <chens/models/pendulum.hpp>

namespace chens {

enum class PenaltyConstraint : int { g = 0, g1 = 1 };  // C = G or C = G1 = exp(x/l) G

template <class Real_>
struct PenaltyPendulum : Pendulum<Real_> {
  using Real = Real_;
  using Base = Pendulum<Real_>;
  using typename Base::Coords;
  using typename Base::State;

  Real mu;                       // penalty strength
  PenaltyConstraint constraint;  // which C

  CHENS_HD static PenaltyPendulum make(Real m, Real l, Real g, Real mu, PenaltyConstraint c) {
    PenaltyPendulum r;
    r.m = m;
    r.l = l;
    r.g = g;
    r.mu = mu;
    r.constraint = c;
    return r;
  }

  template <class R>
  using rebind = PenaltyPendulum<R>;
  template <class R>
  CHENS_HD PenaltyPendulum<R> rebound() const {
    return PenaltyPendulum<R>::make(R(this->m), R(this->l), R(this->g), R(mu), constraint);
  }

  // C(q) and the factor e = exp(x/l) (1 for C = G).
  CHENS_HD Real stretch(const Coords& q) const {
    using std::exp;
    return constraint == PenaltyConstraint::g1 ? exp(q[0] / this->l) : Real(1);
  }
  CHENS_HD Real c_of(const Coords& q) const { return stretch(q) * (q[0] * q[0] + q[1] * q[1] - this->l * this->l); }
  CHENS_HD Real potential(const Coords& q) const {
    const Real c = c_of(q);
    return this->m * this->g * q[1] + mu * c * c;
  }
  CHENS_HD Coords grad_potential(const Coords& q) const {
    const Real e = stretch(q);
    const Real G = q[0] * q[0] + q[1] * q[1] - this->l * this->l;
    const Real k = Real(2) * mu * e * G;  // 2 mu C
    const Real gx = constraint == PenaltyConstraint::g1 ? e * (G / this->l + Real(2) * q[0]) : Real(2) * q[0];
    const Real gy = e * Real(2) * q[1];
    return Coords{{k * gx, this->m * this->g + k * gy}};
  }
  CHENS_HD Real energy(const State& z) const {
    return (z[2] * z[2] + z[3] * z[3]) / (Real(2) * this->m) + potential(Base::q_of(z));
  }
  // Angular frequency of the fast normal oscillation on the circle, mu large:
  // V ~ mu e^2 (2 l delta)^2 for a radial displacement delta, so omega^2 = 8 mu l^2 e^2 / m,
  // largest at x = l for C = G1 (e = exp(1)).
  static double fast_frequency(double m, double l, double mu, PenaltyConstraint c) {
    const double e = c == PenaltyConstraint::g1 ? std::exp(1.0) : 1.0;
    return std::sqrt(8.0 * mu / m) * l * e;
  }
};

}  // namespace chens
