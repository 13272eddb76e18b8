// ImplicitRk (implicit midpoint, Gauss2) for B = P x W instances at once on the CPU: the
// fixed-point iteration of implicit_rk.hpp over packed states (linalg/simd_pack.hpp), each
// lane iterating until its own tolerance is met, its own NaN appears or max_iterations
// runs out. A lane that has stopped keeps its stage values while the others go on, so each
// lane's stages, iteration count, convergence flag and new state are the scalar step's,
// bit for bit (tests/test_cpu_isa.cpp); the per-instance rules after the step (counters,
// projections, lost instances) stay advance_fixed_to_sample's, which calls step_lanes.
//
// Right-hand sides are inlined whatever their size (eval_rhs<true>), as in the packed loop:
// an out-of-line copy would be compiled for the baseline instruction set.
//
// The type is the CPU engine's stand-in for ImplicitRk<Tableau, double> (cpu_engine.hpp):
// ImplicitRk itself is shared with the GPU, which steps one instance per thread and has no
// lanes. Host-only.
#pragma once

#include <cstdint>

#include <chens/config.hpp>
#include <chens/ensemble/packed_steps.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/status.hpp>
#include <chens/linalg/simd_pack.hpp>

#if defined(CHENS_HAS_PACKS)

namespace chens {

// max_a |v_a| lane by lane, with max_abs's comparisons (vec.hpp), so that a NaN propagates
// (or not) in each lane as it does in double.
template <int W, int N>
CHENS_FORCEINLINE Pack<W> max_abs_lanes(const Vec<Pack<W>, N>& a) {
  auto absolute = [](Pack<W> x) { return select<W>(x.v < 0.0, -x, x); };
  Pack<W> m = absolute(a[0]);
  for (int i = 1; i < N; ++i) {
    const Pack<W> x = absolute(a[i]);
    m = select<W>(x.v > m.v, x, m);
  }
  return m;
}

template <class Tableau, int W>
struct ImplicitRkLanes : ImplicitRk<Tableau, double> {
  using Base = ImplicitRk<Tableau, double>;
  static constexpr bool has_lanes = true;
  static constexpr int width = W;

  ImplicitRkLanes() = default;
  explicit ImplicitRkLanes(const Base& m) : Base(m) {}

  // B instances with one system: B / W packs iterated together (their chains of dependent
  // operations overlap); a B that W does not divide steps each instance alone.
  template <int B, class System>
  CHENS_FORCEINLINE void step_lanes(const System& sys, const typename System::State* z, double h,
                                    typename System::State* z_new, StepStatus* st) const {
    if constexpr (B % W != 0) {
      for (int l = 0; l < B; ++l) st[l] = Base::step(sys, z[l], h, z_new[l]);
    } else {
      constexpr int P = B / W, S = Tableau::stages;
      using PState = typename PackedSystemOf<System, W>::State;
      using Mask = MaskOf<W>;
      constexpr int N = PState::size;
      const auto ps = broadcast_system<W>(sys);
      const Pack<W> hp(h);
      const double abs_h = h < 0.0 ? -h : h;
      PState zp[P], k[P][S];
      Mask active[P], converged[P], iterations[P];
      CHENS_UNROLL
      for (int p = 0; p < P; ++p) {
        for (int c = 0; c < N; ++c)
          for (int l = 0; l < W; ++l) zp[p][c].v[l] = z[p * W + l][c];
        eval_rhs<true>(ps, zp[p], k[p][0]);
        for (int i = 1; i < S; ++i) k[p][i] = k[p][0];
        active[p] = Mask{} - 1;
        converged[p] = iterations[p] = Mask{};
      }
      bool any = true;
      for (int it = 0; it < this->max_iterations && any; ++it) {
        any = false;
        CHENS_UNROLL
        for (int p = 0; p < P; ++p) {
          if (!any_lane<W>(active[p])) continue;
          PState kn[S];
          CHENS_UNROLL
          for (int i = 0; i < S; ++i) {
            PState zi = zp[p];
            CHENS_UNROLL
            for (int j = 0; j < S; ++j) zi = axpy(zi, hp * Pack<W>(Tableau::a(i, j)), k[p][j]);
            eval_rhs<true>(ps, zi, kn[i]);
          }
          iterations[p] = active[p] ? Mask{} + (it + 1) : iterations[p];
          Pack<W> delta(0.0);
          CHENS_UNROLL
          for (int i = 0; i < S; ++i) {
            const Pack<W> d = max_abs_lanes(kn[i] - k[p][i]);
            delta = select<W>(d.v > delta.v, d, delta);
            for (int c = 0; c < N; ++c) k[p][i][c] = select<W>(active[p], kn[i][c], k[p][i][c]);
          }
          delta = delta * Pack<W>(abs_h);
          active[p] &= delta.v == delta.v;  // NaN: give up, the finiteness check reports it
          const Mask done = active[p] & (delta.v <= this->tol);
          converged[p] |= done;
          active[p] &= ~done;
          any = any || any_lane<W>(active[p]);
        }
      }
      CHENS_UNROLL
      for (int p = 0; p < P; ++p) {
        PState zn = zp[p];
        CHENS_UNROLL
        for (int i = 0; i < S; ++i) zn = axpy(zn, hp * Pack<W>(Tableau::b(i)), k[p][i]);
        for (int l = 0; l < W; ++l) {
          typename System::State& out = z_new[p * W + l];
          for (int c = 0; c < N; ++c) out[c] = zn[c].v[l];
          StepStatus& s = st[p * W + l];
          s = StepStatus{};
          s.iterations = static_cast<int>(iterations[p][l]);
          s.rhs_evals = 1 + S * s.iterations;
          s.converged = converged[p][l] != 0;
          s.finite = all_finite(out);
        }
      }
    }
  }
};

}  // namespace chens
#endif
