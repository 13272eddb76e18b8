// One chain instance advanced by a thread group (issue 20): Hamilton-Dirac equations
// (002 eq. 31), classical RK4, and the momentum projection of 002 §11 wherever
// max_a |psi_a| > tol after a step -- the lean fixed-step loop (ensemble/lean_steps.hpp) over
// the chain's slices (models/chain_slice.hpp). The same function runs in a CUDA warp tile of
// G lanes (kernels/chain_group.cu) and, with G = 1, in one CPU thread, with the same
// operations in the same order: the CPU result is the GPU's up to the fused multiply-adds
// nvcc forms (none with -fmad=false, kernels/chain_group.hpp).
//
// States are given in the whole chain's layout (models/chain.hpp: 4N values, positions
// then momenta, atom by atom); each lane loads and stores its atoms' values.
#pragma once

#include <cstdint>

#include <chens/config.hpp>
#include <chens/ensemble/lean_steps.hpp>
#include <chens/ensemble/thread_group.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/chain.hpp>

namespace chens {

// Lanes per instance for an N-atom chain: the largest power of two up to a warp (32) that
// leaves every lane two atoms or more; 1 (one thread) for odd N.
constexpr int chain_group_lanes(int atoms) {
  int g = 1;
  while (g < 32 && atoms % (2 * g) == 0 && atoms / (2 * g) >= 2) g *= 2;
  return g;
}
static_assert(chain_group_lanes(7) == 1 && chain_group_lanes(16) == 8 && chain_group_lanes(32) == 16 &&
                  chain_group_lanes(64) == 32 && chain_group_lanes(256) == 32 && chain_group_lanes(12) == 4,
              "");

// The chain formulations a thread group integrates (ensemble/group_segment.hpp's
// chain_group_system; `chens run`'s backend choice, kernels/cuda_backend.cu): every
// formulation the chain has (naive, Hamilton-Dirac, impetus-striction, and the constrained
// equations with RATTLE), whose right-hand sides and steps use only the model's primitives,
// which ChainSlice provides on slices.
constexpr bool chain_group_formulation(FormulationId f) {
  return f == FormulationId::naive || f == FormulationId::dirac || f == FormulationId::impetus ||
         f == FormulationId::constrained;
}

template <int N, class Group>
struct ChainGroupSteps {
  using Whole = Chain<double, N>;
  using Model = ChainSlice<double, N, Group>;
  using System = HamiltonDirac<Model>;
  using Method = ExplicitRk<Rk4Tableau>;
  using State = typename Model::State;

  CHENS_HD CHENS_FORCEINLINE static State load(const double* z) {
    State s;
    CHENS_UNROLL
    for (int c = 0; c < State::size; ++c) s[c] = z[Model::whole_component(c)];
    return s;
  }
  CHENS_HD CHENS_FORCEINLINE static void store(const State& s, double* z) {
    CHENS_UNROLL
    for (int c = 0; c < State::size; ++c) z[Model::whole_component(c)] = s[c];
  }

  // `steps` steps of size h from the instance's state z (tol < 0: no projection); r.z is
  // this lane's slice of the result (the last finite state where a step or its projection
  // was not finite: r.lost), for store().
  CHENS_HD static LeanStepResult<State> advance(const Whole& whole, const double* z, int steps, double h, double tol) {
    const System sys{Model::slice_of(whole)};
    LeanStepResult<State> r;
    r.z = load(z);
    r.step = 0;
    r.steps = r.attempts = r.projections = 0;
    r.lost = false;
    // The right-hand side inlined into every stage on the GPU (a call would pass the state
    // through the stack), called out of line on the CPU (formulation.hpp's eval_rhs).
#if defined(__CUDA_ARCH__)
    constexpr bool inline_rhs = true;
#else
    constexpr bool inline_rhs = false;
#endif
    if (tol < 0.0) {
      lean_steps<LeanPolicy::none, inline_rhs, System, Method>(sys, r, steps, h, tol);
    } else {
      lean_steps<LeanPolicy::momentum, inline_rhs, System, Method>(sys, r, steps, h, tol);
    }
    return r;
  }
};

#if !defined(__CUDACC__)
// What kernels/chain_group.cu's launch does, on the CPU: `count` instances of z (the whole
// chain's layout, instance after instance) advanced in place, one thread per instance
// (G = 1), OpenMP over the instances; each instance's steps, projections and loss into the
// outputs that are not null. tests/gpu and bench/bench_chain_group.cpp compare it with the GPU.
template <int N>
void chain_group_advance_cpu(const Chain<double, N>& whole, double* z, std::int64_t count, int steps, double h, double tol,
                             std::uint32_t* steps_out = nullptr, std::uint32_t* projections_out = nullptr,
                             std::uint8_t* lost_out = nullptr) {
  using Steps = ChainGroupSteps<N, SerialGroup>;
#pragma omp parallel for schedule(static)
  for (std::int64_t n = 0; n < count; ++n) {
    double* zn = z + n * 4 * N;
    const auto r = Steps::advance(whole, zn, steps, h, tol);
    Steps::store(r.z, zn);
    if (steps_out) steps_out[n] = r.steps;
    if (projections_out) projections_out[n] = r.projections;
    if (lost_out) lost_out[n] = r.lost ? 1 : 0;
  }
}
#endif

}  // namespace chens
