// The high-order embedded Runge-Kutta pairs (integrators/dop853.hpp, integrators/vern9.hpp;
// issue 44, item 3) as one stepper over their tableaus: an explicit step's stages from the
// tableau's a(i, j), the solution from its b(i), the next step's f(z_new) (none is FSAL), the
// tableau's own error norm and controller constants, and its continuous extension where it has
// one. (Dopri5 keeps its own stage loop: its results are those every earlier run gave, bit for
// bit, and it has no other engine code than the pairs'.)
#pragma once

#include <cmath>
#include <type_traits>

#include <chens/config.hpp>
#include <chens/ensemble/slice_vec_fwd.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/step_control.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

// k[1..S-1] of a step of size h from z, with k[0] = f(z) given: k_i = f(z + h sum_j a_ij k_j)
// (k may hold more: a continuous extension's stages after them).
template <class Tableau, class System, class Real, int N>
CHENS_HD void explicit_stages(const System& sys, const typename System::State& z, Real h, typename System::State (&k)[N]) {
  static_assert(N >= Tableau::stages, "room for the tableau's stages");
  for (int i = 1; i < Tableau::stages; ++i) {
    typename System::State zi = z;
    for (int j = 0; j < i; ++j)
      if (Tableau::a(i, j) != 0.0) zi = axpy(zi, h * Real(Tableau::a(i, j)), k[j]);
    eval_rhs(sys, zi, k[i]);
  }
}

// z + h sum_i w(i) k_i over the S stages, the zero weights skipped (w returns double).
template <int S, class State, class Real, class Weight>
CHENS_HD State weighted_stages(const State& z, Real h, const State (&k)[S], Weight w) {
  State out = z;
  for (int i = 0; i < S; ++i)
    if (w(i) != 0.0) out = axpy(out, h * Real(w(i)), k[i]);
  return out;
}

// The error scale of component c, atol + rtol max(|z_c|, |z_new_c|) (Hairer's codes, and
// Dopri5's norm).
template <class State, class Real>
CHENS_HD Real error_scale(const State& z, const State& z_new, int c, Real rtol, Real atol) {
  using std::fabs;
  const Real a = fabs(z[c]), b = fabs(z_new[c]);
  return atol + rtol * (a > b ? a : b);
}

// A pair with per-instance adaptive step size, as Dopri5 is one: Tableau has stages, order,
// name, a(i, j), b(i), the error norm in parts (error_sums, error_terms, error_norm_of), the
// controller's constants `control()` (step_control.hpp), and dense_terms: 0, or 4 with the
// continuous extension's dense_stages, a_dense(i, j) and d(r, i) (Dop853Tableau).
template <class Tableau_, class Real>
struct EmbeddedPair {
  using Tableau = Tableau_;
  static constexpr bool adaptive = true;
  static constexpr bool has_lanes = false;  // step sizes differ per instance
  static constexpr int order = Tableau::order;
  static constexpr int rhs_per_attempt = Tableau::stages;  // stages 2..S and f(z_new)
  static constexpr int dense_terms = Tableau::dense_terms;
  Real rtol;
  Real atol;

  // One trial step of size h from z with k1 = f(z), as Dopri5::attempt: z_new the high-order
  // solution, k_new = f(z_new) (the next k1), the scaled error norm returned.
  template <class System>
  CHENS_HD Real attempt(const System& sys, const typename System::State& z, const typename System::State& k1, Real h,
                        typename System::State& z_new, typename System::State& k_new) const {
    typename System::State k[Tableau::stages];
    k[0] = k1;
    explicit_stages<Tableau>(sys, z, h, k);
    z_new = weighted_stages(z, h, k, [](int i) { return Tableau::b(i); });
    eval_rhs(sys, z_new, k_new);
    return error_norm(sys, k, h, z, z_new);
  }

  // The norm of the step's error estimate. A thread group's instance (ensemble/thread_group.hpp)
  // sums each part in the whole state's order by the model that lays the state out, as
  // Dopri5::attempt does, so that every lane gets the one-thread norm's bits and the group
  // accepts or rejects the step together.
  template <class System>
  CHENS_HD Real error_norm(const System& sys, const typename System::State (&k)[Tableau::stages], Real h,
                           const typename System::State& z, const typename System::State& z_new) const {
    using State = typename System::State;
    constexpr int parts = Tableau::error_sums;
    Real sum[parts];
    if constexpr (is_slice_vec_v<State>) {
      using Model = std::decay_t<decltype(sys.model)>;
      State q[parts];
      for (int c = 0; c < State::size; ++c) {
        Real t[parts];
        Tableau::error_terms(k, h, c, error_scale(z, z_new, c, rtol, atol), t);
        for (int p = 0; p < parts; ++p) q[p][c] = t[p];
      }
      for (int p = 0; p < parts; ++p) sum[p] = Model::ordered_state_sum(q[p]);
      return Tableau::error_norm_of(sum, Real(Model::whole_state_size), h);
    } else {
      for (int p = 0; p < parts; ++p) sum[p] = Real(0);
      for (int c = 0; c < State::size; ++c) {
        Real t[parts];
        Tableau::error_terms(k, h, c, error_scale(z, z_new, c, rtol, atol), t);
        for (int p = 0; p < parts; ++p) sum[p] = sum[p] + t[p];
      }
      return Tableau::error_norm_of(sum, Real(State::size), h);
    }
  }

  // The continuous extension's terms of an accepted step of size h from z (its stages taken
  // again as attempt took them, then f(z_new) and the extension's own stages): the
  // interpolant of ensemble/passage_location.hpp.
  template <class System>
  CHENS_HD void dense_correction(const System& sys, const typename System::State& z, const typename System::State& k1,
                                 Real h, typename System::State (&correction)[dense_terms > 0 ? dense_terms : 1]) const {
    if constexpr (dense_terms > 0) {
      using State = typename System::State;
      State k[Tableau::dense_stages];
      k[0] = k1;
      explicit_stages<Tableau>(sys, z, h, k);
      const State z_new = weighted_stages(z, h, k, [](int i) { return i < Tableau::stages ? Tableau::b(i) : 0.0; });
      eval_rhs(sys, z_new, k[Tableau::stages]);
      for (int i = Tableau::stages + 1; i < Tableau::dense_stages; ++i) {
        State zi = z;
        for (int j = 0; j < i; ++j)
          if (Tableau::a_dense(i, j) != 0.0) zi = axpy(zi, h * Real(Tableau::a_dense(i, j)), k[j]);
        eval_rhs(sys, zi, k[i]);
      }
      for (int r = 0; r < dense_terms; ++r)
        correction[r] = weighted_stages(State::zero(), h, k, [r](int i) { return Tableau::d(r, i); });
    } else {
      (void)sys, (void)z, (void)k1, (void)h, (void)correction;
    }
  }

  // Next step size after a trial of size h with error norm err (Hairer's controller).
  CHENS_HD Real next_step(Dopri5Controller<Real>& ctl, Real err, Real h, bool accepted) const {
    return hairer_next_step(Tableau::control(), ctl, err, h, accepted);
  }
};

}  // namespace chens
