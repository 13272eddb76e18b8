// The embedded Runge-Kutta pairs with per-instance adaptive step size (integrators/dopri5.hpp,
// dop853.hpp, vern9.hpp; issue 44, item 3) as one stepper over their tableaus: an explicit
// step's stages from the tableau's a(i, j), the solution from its b(i), the next step's
// f(z_new) (DOPRI5's last stage, first same as last; a stage of its own for the others), the
// tableau's own error norm and controller constants, and its continuous extension. DOPRI5 on
// this stepper computes what its own stepper did before, bit for bit, from the same
// instructions (docs/numerics.md, "DOP853 and Vern9").
#pragma once

#include <cmath>
#include <type_traits>

#include <chens/config.hpp>
#include <chens/ensemble/slice_vec_fwd.hpp>
#include <chens/integrators/step_control.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

// Whether a tableau's loops are unrolled (every index a constant its coefficients fold into, as
// ExplicitRk's are): DOPRI5's 7 stages are, as they always were; DOP853's 12 and Vern9's 16
// stay loops (unrolled, a unit of both took 2.7 times as long to compile and ran no faster;
// docs/numerics.md).
inline constexpr int max_unrolled_stages = 8;
template <class Tableau>
inline constexpr bool unrolled_stages = Tableau::stages <= max_unrolled_stages;

// A loop over [first, last) of a stage or a component, unrolled where `unrolled` (every index
// then a constant the tableau's coefficients fold into). A pragma cannot depend on a template
// parameter, so each such loop is written twice: here for the bodies that are a stage's or a
// component's lambda, and in stage_combination.
template <bool unrolled, class Body>
CHENS_HD CHENS_FORCEINLINE void index_loop(int first, int last, Body&& body) {
  if constexpr (unrolled) {
    CHENS_UNROLL
    for (int i = first; i < last; ++i) body(i);
  } else {
    for (int i = first; i < last; ++i) body(i);
  }
}

// z + h sum_{j<count} c(j) k_j, the zero coefficients skipped (c returns double): a stage's
// argument, the solution and the continuous extension's stages and terms. Its loop is written
// out, not handed to index_loop as a lambda: that way g++ -O3 gave DOP853's and Vern9's loops
// another shape; written out, every attempt compiles to the floating-point instructions it
// did before (docs/numerics.md, "DOP853 and Vern9").
template <bool unrolled, class State, class Real, int N, class Coefficient>
CHENS_HD CHENS_FORCEINLINE State stage_combination(const State& z, Real h, const State (&k)[N], int count, Coefficient c) {
  State out = z;
  if constexpr (unrolled) {
    CHENS_UNROLL
    for (int j = 0; j < count; ++j)
      if (c(j) != 0.0) out = axpy(out, h * Real(c(j)), k[j]);
  } else {
    for (int j = 0; j < count; ++j)
      if (c(j) != 0.0) out = axpy(out, h * Real(c(j)), k[j]);
  }
  return out;
}

// The argument of stage i, z + h sum_{j<i} a_ij k_j.
template <class Tableau, class State, class Real, int N>
CHENS_HD CHENS_FORCEINLINE State stage_argument(int i, const State& z, Real h, const State (&k)[N]) {
  return stage_combination<unrolled_stages<Tableau>>(z, h, k, i, [i](int j) { return Tableau::a(i, j); });
}

// k[1..S-1] of a step of size h from z, with k[0] = f(z) given: k_i = f(z + h sum_j a_ij k_j)
// (k may hold more: a continuous extension's stages after them). With keep_last, the last
// stage's argument goes to *last: a first-same-as-last tableau's solution.
template <class Tableau, bool keep_last = false, class System, class Real, int N>
CHENS_HD CHENS_FORCEINLINE void explicit_stages(const System& sys, const typename System::State& z, Real h,
                                                typename System::State (&k)[N], typename System::State* last = nullptr) {
  static_assert(N >= Tableau::stages, "room for the tableau's stages");
  auto stage = [&](int i) {
    const typename System::State zi = stage_argument<Tableau>(i, z, h, k);
    if constexpr (keep_last)
      if (i == Tableau::stages - 1) *last = zi;
    eval_rhs(sys, zi, k[i]);
  };
  index_loop<unrolled_stages<Tableau>>(1, Tableau::stages, stage);
}

// z + h sum_i w(i) k_i over the S stages, the zero weights skipped (w returns double).
template <int S, class State, class Real, class Weight>
CHENS_HD State weighted_stages(const State& z, Real h, const State (&k)[S], Weight w) {
  return stage_combination<(S <= max_unrolled_stages)>(z, h, k, S, w);
}

// The error scale of component c, atol + rtol max(|z_c|, |z_new_c|) (Hairer's codes).
template <class State, class Real>
CHENS_HD Real error_scale(const State& z, const State& z_new, int c, Real rtol, Real atol) {
  using std::fabs;
  const Real a = fabs(z[c]), b = fabs(z_new[c]);
  return atol + rtol * (a > b ? a : b);
}

// A pair with per-instance adaptive step size: Tableau has stages, order, name, a(i, j), b(i),
// fsal (whether its last stage's argument is the solution, so that the stage is f(z_new)),
// the error norm in parts (error_sums, error_terms, error_norm_of), the controller's constants
// `control()` (step_control.hpp), and its continuous extension: dense_terms (0: none),
// dense_stages, a_dense(i, j) for the stages beyond the step's and f(z_new), and d(r, i).
template <class Tableau_, class Real>
struct EmbeddedPair {
  using Tableau = Tableau_;
  static constexpr bool adaptive = true;
  static constexpr bool has_lanes = false;  // step sizes differ per instance
  static constexpr int order = Tableau::order;
  static constexpr bool fsal = Tableau::fsal;
  // Stages 2..S, and f(z_new) where it is not the last of them.
  static constexpr int rhs_per_attempt = fsal ? Tableau::stages - 1 : Tableau::stages;
  static constexpr int dense_terms = Tableau::dense_terms;
  Real rtol;
  Real atol;

  // One trial step of size h from z with k1 = f(z): z_new the high-order solution, k_new =
  // f(z_new) (the next k1), the scaled error norm returned (accept when <= 1).
  template <class System>
  CHENS_HD Real attempt(const System& sys, const typename System::State& z, const typename System::State& k1, Real h,
                        typename System::State& z_new, typename System::State& k_new) const {
    typename System::State k[Tableau::stages];
    k[0] = k1;
    if constexpr (fsal) {
      explicit_stages<Tableau, true>(sys, z, h, k, &z_new);
      k_new = k[Tableau::stages - 1];
    } else {
      explicit_stages<Tableau>(sys, z, h, k);
      z_new = weighted_stages(z, h, k, [](int i) { return Tableau::b(i); });
      eval_rhs(sys, z_new, k_new);
    }
    return error_norm(sys, k, h, z, z_new);
  }

  // The norm of the step's error estimate. A thread group's instance (ensemble/thread_group.hpp)
  // sums each part in the whole state's order by the model that lays the state out, so that
  // every lane gets the one-thread norm's bits and the group accepts or rejects the step
  // together.
  template <class System>
  CHENS_HD Real error_norm(const System& sys, const typename System::State (&k)[Tableau::stages], Real h,
                           const typename System::State& z, const typename System::State& z_new) const {
    using State = typename System::State;
    constexpr int parts = Tableau::error_sums;
    Real sum[parts];
    // Component c's terms, into q or added to sum.
    auto terms = [&](int c, Real(&t)[parts]) { Tableau::error_terms(k, h, c, error_scale(z, z_new, c, rtol, atol), t); };
    if constexpr (is_slice_vec_v<State>) {
      using Model = std::decay_t<decltype(sys.model)>;
      State q[parts];
      auto component = [&](int c) {
        Real t[parts];
        terms(c, t);
        for (int p = 0; p < parts; ++p) q[p][c] = t[p];
      };
      index_loop<unrolled_stages<Tableau>>(0, State::size, component);
      for (int p = 0; p < parts; ++p) sum[p] = Model::ordered_state_sum(q[p]);
      return Tableau::error_norm_of(sum, Real(Model::whole_state_size), h);
    } else {
      for (int p = 0; p < parts; ++p) sum[p] = Real(0);
      auto component = [&](int c) {
        Real t[parts];
        terms(c, t);
        for (int p = 0; p < parts; ++p) sum[p] = sum[p] + t[p];
      };
      index_loop<unrolled_stages<Tableau>>(0, State::size, component);
      return Tableau::error_norm_of(sum, Real(State::size), h);
    }
  }

  // The continuous extension's terms of an accepted step of size h from z (its stages taken
  // again as attempt took them, then f(z_new) unless it is the last of them, and the
  // extension's own stages): the interpolant of ensemble/passage_location.hpp.
  template <class System>
  CHENS_HD void dense_correction(const System& sys, const typename System::State& z, const typename System::State& k1,
                                 Real h, typename System::State (&correction)[dense_terms > 0 ? dense_terms : 1]) const {
    if constexpr (dense_terms > 0) {
      using State = typename System::State;
      State k[Tableau::dense_stages];
      k[0] = k1;
      explicit_stages<Tableau>(sys, z, h, k);
      constexpr int first_own = fsal ? Tableau::stages : Tableau::stages + 1;  // the extension's own stages
      if constexpr (!fsal) {
        const State z_new = weighted_stages(z, h, k, [](int i) { return i < Tableau::stages ? Tableau::b(i) : 0.0; });
        eval_rhs(sys, z_new, k[Tableau::stages]);
      }
      if constexpr (Tableau::dense_stages > first_own) {
        for (int i = first_own; i < Tableau::dense_stages; ++i)
          eval_rhs(sys, stage_combination<false>(z, h, k, i, [i](int j) { return Tableau::a_dense(i, j); }), k[i]);
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
