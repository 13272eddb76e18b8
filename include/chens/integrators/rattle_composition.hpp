// Symmetric compositions of RATTLE (integrators/rattle.hpp) to orders 4, 6 and 8:
//   Phi_h = R_{gamma_s h} o ... o R_{gamma_2 h} o R_{gamma_1 h},
// gamma_i = gamma_{s+1-i}, sum gamma_i = 1. RATTLE is symmetric, symplectic and of order 2
// on the constraint manifold (Hairer-Lubich-Wanner, Geometric Numerical Integration, 2nd ed.
// 2006, §VII.1.4), so every composition is symmetric and symplectic, keeps phi = 0 (to the
// Newton tolerance) and psi = 0 (to rounding) after each substep, and raises the order to the
// scheme's (HLW §II.4 and §V.3; Leimkuhler & Reich, Simulating Hamiltonian Dynamics, 2004,
// ch. 6): the coefficients' order conditions hold for any symmetric method of order 2. A
// substep may be negative (every scheme here has one): RATTLE's equations are solved as for
// h > 0.
//
// The schemes (integrator.method):
//   rattle4          Yoshida (Phys. Lett. A 150, 1990), Forest & Ruth: 3 stages, order 4,
//                    gamma_1 = gamma_3 = 1 / (2 - 2^(1/3)), gamma_2 = -2^(1/3) / (2 - 2^(1/3))
//                    (HLW §II.4, eq. 4.4);
//   rattle4-suzuki   Suzuki (Phys. Lett. A 146, 1990): 5 stages, order 4,
//                    gamma_1 = gamma_2 = gamma_4 = gamma_5 = 1 / (4 - 4^(1/3)),
//                    gamma_3 = -4^(1/3) / (4 - 4^(1/3)) (HLW §II.4, eq. 4.5): smaller
//                    substeps, a smaller error constant than Yoshida's for 5/3 of the work;
//   rattle6          Kahan & Li (Math. Comp. 66, 1997), 9 stages, order 6 (HLW §V.3.2, eq. 3.11);
//   rattle8          Kahan & Li, 17 stages, order 8 (HLW §V.3.2, eq. 3.12).
// The coefficients are the published decimals (26 digits), rounded to double by the compiler.
// The scheme is a run-time value, so that one instantiation serves the four methods (a
// composition costs what its stages cost; the loop over them is not where time goes).
#pragma once

#include <chens/config.hpp>
#include <chens/integrators/rattle.hpp>
#include <chens/integrators/status.hpp>

namespace chens {

// A symmetric composition scheme: s stages, gamma_1 .. gamma_s (gamma_i = gamma_{s+1-i}).
struct CompositionScheme {
  static constexpr int max_stages = 17;
  int stages = 1;
  int order = 2;  // of the composition of a symmetric method of order 2
  double gamma[max_stages] = {1.0};
};

inline constexpr CompositionScheme yoshida3_order4 = {
    3, 4, {1.3512071919596576340476878, -1.7024143839193152680953756, 1.3512071919596576340476878}};
inline constexpr CompositionScheme suzuki5_order4 = {5,
                                                     4,
                                                     {0.41449077179437573714235406, 0.41449077179437573714235406,
                                                      -0.65796308717750294856941625, 0.41449077179437573714235406,
                                                      0.41449077179437573714235406}};
inline constexpr CompositionScheme kahan_li9_order6 = {
    9,
    6,
    {0.39216144400731413927925056, 0.33259913678935943859974864, -0.70624617255763935980996482, 0.08221359629355080023149045,
     0.79854399093482996339895035, 0.08221359629355080023149045, -0.70624617255763935980996482, 0.33259913678935943859974864,
     0.39216144400731413927925056}};
inline constexpr CompositionScheme kahan_li17_order8 = {
    17,
    8,
    {0.13020248308889008087881763, 0.56116298177510838456196441, -0.38947496264484728640807860, 0.15884190655515560089621075,
     -0.39590389413323757733623154, 0.18453964097831570709183254, 0.25837438768632204729397911, 0.29501172360931029887096624,
     -0.60550853383003451169892108, 0.29501172360931029887096624, 0.25837438768632204729397911, 0.18453964097831570709183254,
     -0.39590389413323757733623154, 0.15884190655515560089621075, -0.38947496264484728640807860,
     0.56116298177510838456196441, 0.13020248308889008087881763}};

template <class Real>
struct RattleComposition {
  static constexpr bool adaptive = false;
  static constexpr bool has_lanes = false;  // Newton iteration counts differ per instance
  // The least order of the schemes (the concepts ask for a compile-time order); the run's
  // is scheme.order.
  static constexpr int order = 4;
  Rattle<Real> base;  // each substep's Newton tolerance and sweep limit
  CompositionScheme scheme;

  // The method over another arithmetic type (dual numbers: geometry/tangent_system.hpp).
  template <class R>
  CHENS_HD RattleComposition<R> rebound() const {
    return RattleComposition<R>{base.template rebound<R>(), scheme};
  }

  // The substeps in order; the status counts every substep's force evaluations and Newton
  // sweeps, and is converged only where every substep's Newton iteration met its tolerance.
  template <class System>
  CHENS_HD StepStatus step(const System& sys, const typename System::State& z, Real h, typename System::State& z_new) const {
    StepStatus st;
    typename System::State y = z;
    for (int i = 0; i < scheme.stages; ++i) {
      const StepStatus sub = base.step(sys, y, Real(scheme.gamma[i]) * h, z_new);
      st.converged = st.converged && sub.converged;
      st.iterations += sub.iterations;
      st.rhs_evals += sub.rhs_evals;
      st.finite = sub.finite;
      if (!sub.finite) break;
      y = z_new;
    }
    return st;
  }
};

}  // namespace chens
