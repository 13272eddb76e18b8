// Fixed-step explicit Runge-Kutta stepping for any explicit tableau (tableaus.hpp).
#pragma once

#include <chens/config.hpp>
#include <chens/integrators/status.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

template <class Tableau>
struct ExplicitRk {
  static constexpr bool adaptive = false;
  static constexpr bool has_lanes = true;
  static constexpr int order = Tableau::order;
  static constexpr int stages = Tableau::stages;

  // B independent steps z_new[l] = z[l] + h sum_i b_i k_i[l], lanes innermost: each stage
  // evaluates B right-hand sides back to back so that their dependency chains overlap in
  // an out-of-order CPU core (a single instance is latency-bound, docs/performance.md).
  // Per lane the arithmetic is exactly that of B = 1, which the GPU runs (one instance per
  // thread). z is left untouched so that a failed step can be discarded.
  template <int B, class System>
  CHENS_HD CHENS_FORCEINLINE void step_lanes(const System& sys, const typename System::State* z,
                                             typename System::Real h, typename System::State* z_new,
                                             StepStatus* st) const {
    using Real = typename System::Real;
    using State = typename System::State;
    constexpr int S = Tableau::stages;
    State k[S][B];
    CHENS_UNROLL
    for (int i = 0; i < S; ++i) {
      CHENS_UNROLL
      for (int l = 0; l < B; ++l) {
        State zi = z[l];
        CHENS_UNROLL
        for (int j = 0; j < i; ++j) {
          if (Tableau::a(i, j) != 0.0) zi = axpy(zi, h * Real(Tableau::a(i, j)), k[j][l]);
        }
        sys.rhs(zi, k[i][l]);
      }
    }
    CHENS_UNROLL
    for (int l = 0; l < B; ++l) {
      z_new[l] = z[l];
      CHENS_UNROLL
      for (int i = 0; i < S; ++i) {
        if (Tableau::b(i) != 0.0) z_new[l] = axpy(z_new[l], h * Real(Tableau::b(i)), k[i][l]);
      }
      st[l] = StepStatus{};
      st[l].rhs_evals = S;
      st[l].finite = all_finite(z_new[l]);
    }
  }

  template <class System>
  CHENS_HD CHENS_FORCEINLINE StepStatus step(const System& sys, const typename System::State& z,
                                             typename System::Real h, typename System::State& z_new) const {
    StepStatus st;
    step_lanes<1>(sys, &z, h, &z_new, &st);
    return st;
  }
};

}  // namespace chens
