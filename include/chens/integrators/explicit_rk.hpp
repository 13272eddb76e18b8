// Fixed-step explicit Runge-Kutta stepping for any explicit tableau (tableaus.hpp).
#pragma once

#include <type_traits>

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/integrators/status.hpp>
#include <chens/linalg/simd2.hpp>
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
  CHENS_HD CHENS_FORCEINLINE void step_lanes(const System& sys, const typename System::State* z, typename System::Real h,
                                             typename System::State* z_new, StepStatus* st) const {
    using Real = typename System::Real;
#if defined(CHENS_HAS_D2)
    // CPU: pairs of lanes share SSE2 registers when the system can be rebound to D2;
    // each lane's arithmetic is unchanged (simd2.hpp), so results are identical.
    if constexpr (B % 2 == 0 && std::is_same_v<Real, double> && requires { rebound_system<D2>(sys); }) {
      const auto sys2 = rebound_system<D2>(sys);
      using State2 = typename decltype(sys2)::State;
      constexpr int P = B / 2, N = State2::size;
      State2 z2[P], zn2[P];
      CHENS_UNROLL
      for (int p = 0; p < P; ++p) {
        CHENS_UNROLL
        for (int c = 0; c < N; ++c) z2[p][c] = D2::pack(z[2 * p][c], z[2 * p + 1][c]);
      }
      advance_lanes<P>(sys2, z2, D2(h), zn2);
      CHENS_UNROLL
      for (int p = 0; p < P; ++p) {
        CHENS_UNROLL
        for (int c = 0; c < N; ++c) {
          z_new[2 * p][c] = zn2[p][c].lo();
          z_new[2 * p + 1][c] = zn2[p][c].hi();
        }
      }
    } else
#endif
    {
      advance_lanes<B>(sys, z, h, z_new);
    }
    CHENS_UNROLL
    for (int l = 0; l < B; ++l) {
      st[l] = StepStatus{};
      st[l].rhs_evals = Tableau::stages;
      st[l].finite = all_finite(z_new[l]);
    }
  }

  template <class System>
  CHENS_HD CHENS_FORCEINLINE StepStatus step(const System& sys, const typename System::State& z, typename System::Real h,
                                             typename System::State& z_new) const {
    StepStatus st;
    step_lanes<1>(sys, &z, h, &z_new, &st);
    return st;
  }

  // One step's arithmetic alone, without the status: what step() computes, bit for bit. The
  // lean fixed-step loop (ensemble/lean_steps.hpp) counts the evaluations itself and tests
  // finiteness once per segment.
  template <bool InlineRhs = false, class System>
  CHENS_HD CHENS_FORCEINLINE static void advance(const System& sys, const typename System::State& z, typename System::Real h,
                                                 typename System::State& z_new) {
    advance_lanes<1, InlineRhs>(sys, &z, h, &z_new);
  }

  // Whether stage i reads only the stage before it (a_ij = 0 for j < i - 1): Euler, RK2 and
  // RK4. Then one instance needs one stage value at a time (advance_lanes, B = 1).
  static constexpr bool streams() {
    for (int i = 0; i < Tableau::stages; ++i)
      for (int j = 0; j + 1 < i; ++j)
        if (Tableau::a(i, j) != 0.0) return false;
    return true;
  }

 private:
  // The stages and the update of B lanes: arithmetic only, for any scalar type (double,
  // float, or D2 holding two lanes).
  template <int B, bool InlineRhs = false, class System>
  CHENS_HD CHENS_FORCEINLINE static void advance_lanes(const System& sys, const typename System::State* z,
                                                       typename System::Real h, typename System::State* z_new) {
    using Real = typename System::Real;
    using State = typename System::State;
    constexpr int S = Tableau::stages;
    if constexpr (B == 1 && streams()) {
      // One instance (the GPU's thread, a single CPU instance): the update z_new += h b_i k_i
      // is taken as soon as k_i exists, and k_i is dropped once stage i + 1 has read it, so
      // that a state and two stage values are live instead of S + 1 (a seven-atom chain's
      // RK4 step then fits a GPU thread's registers). The operations and their order are
      // those of the general loop below: z_new = (((z + h b_0 k_0) + h b_1 k_1) + ...), and
      // stage i's input is z + h a_{i,i-1} k_{i-1}; results are identical. (z and z_new are
      // distinct: z is read after z_new is written.)
      State k;
      z_new[0] = z[0];
      CHENS_UNROLL
      for (int i = 0; i < S; ++i) {
        State zi = z[0];
        if (i > 0 && Tableau::a(i, i - 1) != 0.0) zi = axpy(zi, h * Real(Tableau::a(i, i - 1)), k);
        eval_rhs<InlineRhs>(sys, zi, k);
        if (Tableau::b(i) != 0.0) z_new[0] = axpy(z_new[0], h * Real(Tableau::b(i)), k);
      }
    } else {
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
          eval_rhs<InlineRhs>(sys, zi, k[i][l]);
        }
      }
      CHENS_UNROLL
      for (int l = 0; l < B; ++l) {
        z_new[l] = z[l];
        CHENS_UNROLL
        for (int i = 0; i < S; ++i) {
          if (Tableau::b(i) != 0.0) z_new[l] = axpy(z_new[l], h * Real(Tableau::b(i)), k[i][l]);
        }
      }
    }
  }
};

}  // namespace chens
