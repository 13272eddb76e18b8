// Hamilton-Dirac equations z' = {z, H}* (002 eq. 17), written for imposed holonomic
// constraints with C = [[0, Q], [-Q^T, S]] and the block inverse of 002 eq. 30:
//   q' = M^-1 (p - J^T nu),
//   p' = -grad V + J^T (lambda + Q^-1 S nu) + sum_a nu_a Hess(phi_a) M^-1 p,
// where nu = Q^-1 psi and lambda = -Q^-1 {psi, H} is the naive multiplier
// (002 eq. 31; for the pendulum this is 002 eqs. 35-36 = 001 eq. 15 = 004 eqs. 3.7-3.8).
// The constraints phi and psi are first integrals of this flow (002 eq. 47).
#pragma once

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/models/pendulum.hpp>

namespace chens {

// The right-hand side for any model exposing the primitives of 002 eqs. 27-31.
template <class Model>
CHENS_HD CHENS_FORCEINLINE void hamilton_dirac_rhs(const Model& model, const typename Model::State& z,
                                                   typename Model::State& dz) {
  {
    const auto q = Model::q_of(z);
    const auto p = Model::p_of(z);
    const auto v = model.minv_mul(p);  // dH/dp
    const auto gV = model.grad_potential(q);
    const auto Q = model.gram(q);  // factorised once, three solves (002 §7: O(N) for chains)
    const auto nu = Q.solve(model.psi(z));
    const auto lam = Q.solve(model.psi_h_bracket(z, gV));
    typename Model::Multipliers rhs_l;  // Q^-1 S nu - Q^-1 {psi, H}
    if constexpr (Model::constraints == 1) {
      rhs_l[0] = -lam[0];  // S = {psi, psi} is skew-symmetric: for one constraint it vanishes
    } else {
      rhs_l = Q.solve(model.s_mul(z, nu));
      for (int a = 0; a < Model::constraints; ++a) rhs_l[a] = rhs_l[a] - lam[a];
    }
    const auto dq = model.minv_mul(p - model.jac_t_mul(q, nu));
    const auto dp = model.jac_t_mul(q, rhs_l) + model.hess_phi_mul(q, nu, v) - gV;
    dz = Model::join(dq, dp);
  }
}

template <class Model>
struct HamiltonDirac {
  using Real = typename Model::Real;
  using State = typename Model::State;
  static constexpr FormulationId id = FormulationId::dirac;
  static constexpr bool has_impetus = false;
  Model model;

  CHENS_HD CHENS_FORCEINLINE void rhs(const State& z, State& dz) const { hamilton_dirac_rhs(model, z, dz); }
  CHENS_HD CHENS_FORCEINLINE State physical(const State& z) const { return z; }
};

// The pendulum (002 eqs. 35-36): hamilton_dirac_rhs's operations for this model, in its
// order, with the GPU's fused multiply-adds written out (config.hpp's fmadd) instead of left
// to ptxas. On the host every value is the generic one, bit for bit (tests/
// test_lean_steps.cpp). On the GPU no rounding is the compiler's choice, so a unit pendulum
// (m = l = g = 1 known at compile time: the products with 1 and the division's numerator
// fold away) computes exactly what the general one computes with m = l = g = 1, in any
// kernel (tests/gpu/test_gpu_paths.cpp runs both).
template <class Real_, bool Unit>
struct HamiltonDirac<Pendulum<Real_, Unit>> {
  using Model = Pendulum<Real_, Unit>;
  using Real = Real_;
  using State = typename Model::State;
  static constexpr FormulationId id = FormulationId::dirac;
  static constexpr bool has_impetus = false;
  Model model;

  CHENS_HD CHENS_FORCEINLINE void rhs(const State& z, State& dz) const {
    const Real x = z[0], y = z[1], px = z[2], py = z[3];
    const Real m = model.mass(), g = model.gravity();
    const Real im = Real(1) / m;
    const Real v0 = im * px, v1 = im * py;            // v = M^-1 p
    const Real f = m / fmadd(x, x, y * y);            // Q^-1 = m / |q|^2
    const Real nu = (fmadd(x, px, y * py) * im) * f;  // Q^-1 psi
    const Real s = fmadd(px, px, py * py);
    // Q^-1 {psi, H} = (|p|^2 / m^2 - g y) m / |q|^2; the unit pendulum's s - y is the
    // general fused product's value when m = g = 1 (exact products).
    Real bracket;
    if constexpr (Unit) {
      bracket = s - y;
    } else {
      bracket = fmsub(im * im, s, g * y);
    }
    const Real rhs_l = -(bracket * f);  // -lambda
    dz[0] = im * fnmadd(nu, x, px);
    dz[1] = im * fnmadd(nu, y, py);
    dz[2] = fmadd(rhs_l, x, nu * v0) - Real(0);  // - dV/dx, as the generic code (exact)
    if constexpr (Unit) {
      dz[3] = fmadd(rhs_l, y, nu * v1) - Real(1);
    } else {
      dz[3] = fmadd(rhs_l, y, nu * v1) - mul_rn(m, g);  // mul_rn: never fused into the subtraction
    }
  }
  CHENS_HD CHENS_FORCEINLINE State physical(const State& z) const { return z; }
};

}  // namespace chens
