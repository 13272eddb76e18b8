// Fixed-step explicit Runge-Kutta stepping for any explicit tableau (tableaus.hpp).
#pragma once

#include <chens/config.hpp>
#include <chens/integrators/status.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

template <class Tableau>
struct ExplicitRk {
  static constexpr bool adaptive = false;
  static constexpr int order = Tableau::order;
  static constexpr int stages = Tableau::stages;

  // z_new = z + h sum_i b_i k_i; z is left untouched so a failed step can be discarded.
  template <class System>
  CHENS_HD CHENS_FORCEINLINE StepStatus step(const System& sys, const typename System::State& z,
                                             typename System::Real h, typename System::State& z_new) const {
    using Real = typename System::Real;
    using State = typename System::State;
    constexpr int S = Tableau::stages;
    State k[S];
    CHENS_UNROLL
    for (int i = 0; i < S; ++i) {
      State zi = z;
      CHENS_UNROLL
      for (int j = 0; j < i; ++j) {
        if (Tableau::a(i, j) != 0.0) zi = axpy(zi, h * Real(Tableau::a(i, j)), k[j]);
      }
      sys.rhs(zi, k[i]);
    }
    z_new = z;
    CHENS_UNROLL
    for (int i = 0; i < S; ++i) {
      if (Tableau::b(i) != 0.0) z_new = axpy(z_new, h * Real(Tableau::b(i)), k[i]);
    }
    StepStatus st;
    st.rhs_evals = S;
    st.finite = all_finite(z_new);
    return st;
  }
};

}  // namespace chens
