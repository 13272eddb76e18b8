// The lean fixed-step loop: what advance_fixed_to_sample (instance.hpp) computes for an
// explicit Runge-Kutta method whose only projection is the tolerance-triggered momentum
// projection after every step (or none), with the per-step decisions taken once instead:
//   - the projection policy is a template parameter (LeanPolicy), not RunParams flags read
//     after every step;
//   - no step status is built: an explicit step always "converges", and its steps,
//     evaluations and projections are counted once per call from the trip count;
//   - finiteness is tested on the integer pipes: a state is finite unless one of its
//     exponent fields is all ones (Inf or NaN), which costs no FP64 instruction (the general
//     path spends two comparisons and a subtraction per component, on the FP64 pipe, which
//     binds these kernels: docs/performance.md). The test stays in every step so that an
//     instance is lost at the step where the general path loses it, with the same state,
//     counters and projection counts, and no replay is needed;
//   - the trip count is a 32-bit int, and the final short step of a run (RunParams::
//     last_h) is a second pass of the same loop rather than a select in every step.
// A step's and a projection's arithmetic is the general path's own code (ExplicitRk::
// advance, momentum_project), so results are the general path's bit for bit
// (tests/test_lean_steps.cpp; on the GPU tests/gpu/test_gpu_paths.cpp). The GPU's step
// kernel runs this loop for the common settings (kernels/cuda_engine.cuh); the CPU
// backend keeps its lanes.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <chens/config.hpp>
#include <chens/ensemble/counters.hpp>
#include <chens/ensemble/run_params.hpp>
#include <chens/ensemble/slice_vec_fwd.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/linalg/vec.hpp>
#include <chens/projections/momentum.hpp>

namespace chens {

// What the lean loop checks after each step.
enum class LeanPolicy : int {
  none = 0,      // no projection
  momentum = 1,  // momentum projection where max_a |psi_a| > projection_tol (002 §11)
};

template <class Method>
struct is_explicit_rk : std::false_type {};
template <class Tableau>
struct is_explicit_rk<ExplicitRk<Tableau>> : std::true_type {};

// The lean loop applies to plain (no tangents) systems in float or double stepped by an
// explicit Runge-Kutta method.
template <class System, class Method>
inline constexpr bool lean_capable_v =
    is_explicit_rk<Method>::value && !has_tangents_v<System> &&
    (std::is_same_v<typename System::Real, double> || std::is_same_v<typename System::Real, float>);

// The lean policy that reproduces the general path under these run parameters, or false
// when a setting needs the general path (position projection, stage projection, infrequent
// projection, impetus reset, more steps between samples than an int counts).
template <class System, class Real>
CHENS_HD bool lean_policy_for(const RunParams<Real>& rp, LeanPolicy& policy) {
  if (rp.stage_projection || rp.project_position || rp.projection_every > 1) return false;
  if (System::has_impetus && rp.impetus_reset > Real(0)) return false;
  if (rp.steps_per_sample > index_t(0x7fffffff)) return false;
  // Impetus states satisfy psi = 0 by construction: the general path never projects them.
  policy = (rp.project_momentum && !System::has_impetus) ? LeanPolicy::momentum : LeanPolicy::none;
  return true;
}

// Whether every component is finite, from the exponent fields alone (integer operations):
// the same answer as all_finite (vec.hpp) for every float and double.
template <class Real, int N>
CHENS_HD CHENS_FORCEINLINE bool finite_bits(const Vec<Real, N>& z) {
  static_assert(std::is_same_v<Real, double> || std::is_same_v<Real, float>, "IEEE binary64 or binary32");
  constexpr std::uint32_t ones = sizeof(Real) == 8 ? 0x7ff00000u : 0x7f800000u;
  std::uint32_t top = 0;
  CHENS_UNROLL
  for (int c = 0; c < N; ++c) {
    std::uint32_t e;
    if constexpr (sizeof(Real) == 8) {
      std::uint64_t b;
      std::memcpy(&b, &z[c], sizeof b);
      e = static_cast<std::uint32_t>(b >> 32) & ones;
    } else {
      std::uint32_t b;
      std::memcpy(&b, &z[c], sizeof b);
      e = b & ones;
    }
    top = e > top ? e : top;
  }
  return top != ones;
}

// max_a |v_a| > tol, the comparison of apply_projections (projections/policy.hpp): the
// same outcome for every input (NaN compares false either way), with fabs rather than a
// branch per component.
template <class Real, int N>
CHENS_HD CHENS_FORCEINLINE bool any_exceeds(const Vec<Real, N>& v, Real tol) {
  using std::fabs;
  bool over = false;
  CHENS_UNROLL
  for (int a = 0; a < N; ++a) over = over || fabs(v[a]) > tol;
  return over;
}

// The same two tests on one lane's slice of a thread group's instance (ensemble/
// thread_group.hpp): every lane gets the group's answer, so the group leaves the loop together.
template <class Real, int N, class Group>
CHENS_HD CHENS_FORCEINLINE bool finite_bits(const SliceVec<Real, N, Group>& z) {
  return Group::all(finite_bits(z.local));
}
template <class Real, int N, class Group>
CHENS_HD CHENS_FORCEINLINE bool any_exceeds(const SliceVec<Real, N, Group>& v, Real tol) {
  return !Group::all(!any_exceeds(v.local, tol));
}

// Where a lean advance ends: the state, its step index, and what the general path would
// have added to the counters. lean_advance_to_sample sets the counts.
template <class State>
struct LeanStepResult {
  State z;
  State next;  // the step being taken (working storage)
  index_t step;
  std::uint32_t steps;        // accepted steps (Counters::steps)
  std::uint32_t attempts;     // steps evaluated, a failed last one included (rhs_evaluations / stages)
  std::uint32_t projections;  // Counters::momentum_projections
  bool lost;                  // a step or its projection was not finite: LostReason::non_finite
};

// `count` steps of size h from r.z, as advance_fixed_to_sample takes them; stops at a step
// whose result (or projected result) is not finite, leaving r.z at the last finite state.
// InlineRhs inlines large right-hand sides (formulation.hpp's eval_rhs).
template <LeanPolicy P, bool InlineRhs, class System, class Method>
CHENS_HD CHENS_FORCEINLINE void lean_steps(const System& sys, LeanStepResult<typename System::State>& r, int count,
                                           typename System::Real h, typename System::Real tol) {
  for (int s = 0; s < count; ++s) {
    Method::template advance<InlineRhs>(sys, r.z, h, r.next);
    r.attempts += 1;
    if (!finite_bits(r.next)) {
      r.lost = true;
      return;
    }
    if constexpr (P == LeanPolicy::momentum) {
      if (any_exceeds(sys.model.psi(r.next), tol)) {
        momentum_project(sys.model, r.next);
        r.projections += 1;
        if (!finite_bits(r.next)) {
          r.lost = true;
          return;
        }
      }
    }
    r.z = r.next;
    r.steps += 1;
  }
}

// Advance r.z (at step r.step, not lost) to sample time k, or to step `until` if that comes
// first (a stop point, StepLimit in instance.hpp), as advance_fixed_to_sample<1> does; r's
// counts start at zero.
template <LeanPolicy P, bool InlineRhs, class System, class Method>
CHENS_HD CHENS_FORCEINLINE void lean_advance_to_sample(const System& sys, const RunParams<typename System::Real>& rp,
                                                       index_t k, LeanStepResult<typename System::State>& r,
                                                       index_t until = INT64_MAX) {
  const index_t step = r.step;
  r.steps = r.attempts = r.projections = 0;
  r.lost = false;
  const index_t target = rp.sample_step(k) < until ? rp.sample_step(k) : until;
  if (step >= target) return;
  const int count = static_cast<int>(target - step);
  // The run's final step has size last_h (equal to h when t_end is a multiple of h): a
  // second pass of the same loop, so that the step is compiled once.
  const int last = target == rp.total_steps ? 1 : 0;
  for (int pass = 0; pass < 2 && !r.lost; ++pass)
    lean_steps<P, InlineRhs, System, Method>(sys, r, pass == 0 ? count - last : last, pass == 0 ? rp.h : rp.last_h,
                                             rp.projection_tol);
  r.step = step + r.steps;
}

// The result into an instance's stepping fields and counters, as the general path leaves
// them: commit_lean_fields sets all but the state (what a thread group's lane 0 records for
// its instance, ensemble/group_segment.hpp, while each lane stores its slice of the state).
template <class Method, class Inst, class State, class Real>
CHENS_HD CHENS_FORCEINLINE void commit_lean_fields(Inst& in, const LeanStepResult<State>& r, const RunParams<Real>& rp) {
  in.step = r.step;
  in.t = rp.step_time(r.step);
  if (r.lost) in.lost = int(LostReason::non_finite);
  in.c.steps += r.steps;
  in.c.rhs_evaluations += static_cast<std::uint64_t>(r.attempts) * static_cast<std::uint64_t>(Method::stages);
  in.c.momentum_projections += r.projections;
}
template <class Method, class Inst, class State, class Real>
CHENS_HD CHENS_FORCEINLINE void commit_lean(Inst& in, const LeanStepResult<State>& r, const RunParams<Real>& rp) {
  in.z = r.z;
  commit_lean_fields<Method>(in, r, rp);
}

}  // namespace chens
