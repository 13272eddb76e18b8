// Dormand-Prince 5(4) with per-instance adaptive step size. The step-size controller is
// the one of Hairer's DOPRI5 code (Hairer, Norsett & Wanner I, §II.4 and the code's
// defaults): safety 0.9, factor bounds [0.2, 10], Lund stabilisation beta = 0.04, and
// the error norm sqrt(mean_i (e_i / (atol + rtol max(|z_i|, |z_new_i|)))^2).
#pragma once

#include <cmath>
#include <type_traits>

#include <chens/config.hpp>
#include <chens/ensemble/slice_vec_fwd.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/integrators/status.hpp>
#include <chens/integrators/step_control.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

template <class Real>
struct Dopri5Controller {
  Real facold = Real(1e-4);
  bool last_rejected = false;
};

template <class Real>
struct Dopri5 {
  using Tableau = Dopri5Tableau;
  static constexpr bool adaptive = true;
  static constexpr bool has_lanes = false;  // step sizes differ per instance
  static constexpr int order = 5;
  static constexpr int rhs_per_attempt = 6;  // stages 2..7, the 7th f(z_new): first same as last
  static constexpr int dense_terms = 1;      // the continuous extension's quartic term
  Real rtol;
  Real atol;

  // One trial step of size h from z with k1 = f(z). On return z_new is the fifth-order
  // solution, k7 = f(z_new) (reused as the next k1: first same as last) and the return
  // value is the scaled error norm (accept when <= 1).
  template <class System>
  CHENS_HD Real attempt(const System& sys, const typename System::State& z, const typename System::State& k1, Real h,
                        typename System::State& z_new, typename System::State& k7) const {
    using std::fabs;
    using std::sqrt;
    using State = typename System::State;
    using T = Dopri5Tableau;
    State k[7];
    stages(sys, z, k1, h, k, z_new);
    k7 = k[6];
    // Component c's term of the norm, (e_c / sc_c)^2.
    auto term = [&](int c) {
      Real e = Real(0);
      CHENS_UNROLL
      for (int i = 0; i < 7; ++i) {
        if (T::e(i) != 0.0) e = e + Real(T::e(i)) * k[i][c];
      }
      e = e * h;
      const Real a = fabs(z[c]), b = fabs(z_new[c]);
      const Real sc = atol + rtol * (a > b ? a : b);
      return (e / sc) * (e / sc);
    };
    if constexpr (is_slice_vec_v<State>) {
      // A thread group's instance (ensemble/thread_group.hpp): the terms summed in the whole
      // state's order by the model that lays the state out, so that every lane gets the
      // one-thread norm's bits and the group accepts or rejects the step together.
      using Model = std::decay_t<decltype(sys.model)>;
      State q;
      CHENS_UNROLL
      for (int c = 0; c < State::size; ++c) q[c] = term(c);
      return sqrt(Model::ordered_state_sum(q) / Real(Model::whole_state_size));
    } else {
      Real sum = Real(0);
      constexpr int n = State::size;
      CHENS_UNROLL
      for (int c = 0; c < n; ++c) sum = sum + term(c);
      return sqrt(sum / Real(n));
    }
  }

  // The stages k[0..6] of a step of size h from z with k1 = f(z), and its fifth-order solution.
  template <class System>
  CHENS_HD CHENS_FORCEINLINE static void stages(const System& sys, const typename System::State& z,
                                                const typename System::State& k1, Real h, typename System::State (&k)[7],
                                                typename System::State& z_new) {
    using State = typename System::State;
    using T = Dopri5Tableau;
    k[0] = k1;
    CHENS_UNROLL
    for (int i = 1; i < 7; ++i) {
      State zi = z;
      CHENS_UNROLL
      for (int j = 0; j < i; ++j) {
        if (T::a(i, j) != 0.0) zi = axpy(zi, h * Real(T::a(i, j)), k[j]);
      }
      if (i == 6) z_new = zi;  // row 7 of A is b
      eval_rhs(sys, zi, k[i]);
    }
  }

  // The continuous extension's quartic term h sum_i d_i k_i of an accepted step of size h from z
  // (Dopri5Tableau::d), its stages taken again as attempt took them: the step's interpolant is
  // the cubic Hermite of its ends plus theta^2 (1 - theta)^2 times it (first passages located
  // inside the step, ensemble/passage_location.hpp).
  template <class System>
  CHENS_HD typename System::State dense_term(const System& sys, const typename System::State& z,
                                             const typename System::State& k1, Real h) const {
    using State = typename System::State;
    using T = Dopri5Tableau;
    State k[7], z_new;
    stages(sys, z, k1, h, k, z_new);
    State d = State::zero();
    for (int i = 0; i < 7; ++i)
      if (T::d(i) != 0.0) d = axpy(d, h * Real(T::d(i)), k[i]);
    return d;
  }

  // The interpolant's terms of a step (ensemble/passage_location.hpp's StepInterpolant).
  template <class System>
  CHENS_HD void dense_correction(const System& sys, const typename System::State& z, const typename System::State& k1,
                                 Real h, typename System::State (&correction)[1]) const {
    correction[0] = dense_term(sys, z, k1, h);
  }

  // Next step size after a trial of size h with error norm err (Hairer's DOPRI5: safety 0.9,
  // factors [0.2, 10], Lund stabilisation beta = 0.04, expo1 = 1/5 - 0.75 beta).
  CHENS_HD Real next_step(Dopri5Controller<Real>& ctl, Real err, Real h, bool accepted) const {
    return hairer_next_step(HairerStepControl{0.9, 0.2, 10.0, 0.2 - 0.04 * 0.75, 0.04}, ctl, err, h, accepted);
  }
};

}  // namespace chens
