// The CPU's packed fixed-step loop: B = P x W instances advanced together, W per vector
// register (linalg/simd_pack.hpp) and P registers' worth interleaved so that their chains of
// dependent operations overlap, with each instance's state kept packed from the first step
// to the sample time. What it computes is the lean loop's (lean_steps.hpp), which is
// advance_fixed_to_sample's (instance.hpp) for an explicit Runge-Kutta method whose only
// projection is the tolerance-triggered momentum projection (lean_policy_for):
//   - a step is ExplicitRk::advance over the packed system (each lane's arithmetic is the
//     scalar step's, simd_pack.hpp), its right-hand side inlined whatever its size: a call
//     (formulation.hpp's rhs_out_of_line for large states) would be compiled for the
//     baseline instruction set, not the one the caller was compiled for (cpu_engine.hpp);
//   - a lane whose result is not finite is lost at that step and keeps its last finite
//     state; a lane whose finite result has max_a |psi_a| > tol is projected
//     (momentum_project over the packed model, kept in the lanes that asked for it) and
//     lost if the projection is not finite;
//   - steps, evaluations (a failed last step included) and projections are counted per lane
//     and committed once per call, as commit_lean does.
// The per-lane decisions are masks rather than branches: a lost lane goes on being computed
// but never again written. Results, states and counters are each instance's scalar ones bit
// for bit, for every W and P (tests/test_cpu_isa.cpp against advance_fixed_to_sample<1>).
//
// The GPU keeps lean_steps (one instance per thread, branches): the rules are the same and
// written as masks here only because a vector register holds several instances. Host-only.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <chens/config.hpp>
#include <chens/ensemble/instance.hpp>
#include <chens/ensemble/lean_steps.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/linalg/simd_pack.hpp>
#include <chens/models/pendulum.hpp>
#include <chens/projections/momentum.hpp>

#if defined(CHENS_HAS_PACKS)

namespace chens {

template <class Real, int N>
struct Chain;

// System (a formulation over a model in double) over Pack<W>: F<Model over Pack<W>>.
template <int W, template <class> class F, class Model>
auto packed_system_type(const F<Model>&) -> F<decltype(std::declval<const Model&>().template rebound<Pack<W>>())>;
template <class System, int W>
using PackedSystemOf = decltype(packed_system_type<W>(std::declval<const System&>()));

// Models whose code runs over Pack<W>: those with a rebind alias (the general lane path's
// gate, formulation.hpp's rebound_system, which user models from V and phi open through their
// spec's cpu_lanes, models/auto_model.hpp), and chains, whose header leaves rebind out only
// to keep that path's per-step SSE2 pairs off (chain.hpp; the packed loop keeps a chain's
// state packed across steps instead).
template <class Model, int W, class = void>
struct model_packs : std::false_type {};
template <class Model, int W>
struct model_packs<Model, W, std::void_t<typename Model::template rebind<Pack<W>>>> : std::true_type {};
template <int N, int W>
struct model_packs<Chain<double, N>, W, void> : std::true_type {};

template <class System, int W, class = void>
struct packable_system : std::false_type {};
template <class System, int W>
struct packable_system<System, W, std::void_t<PackedSystemOf<System, W>>>
    : std::bool_constant<std::is_same_v<typename System::Real, double> &&
                         model_packs<std::decay_t<decltype(std::declval<System>().model)>, W>::value> {};

// The packed system with sys in every lane: rebound_system (which keeps Baumgarte's alpha
// and beta), or for a chain its formulation around the rebound chain (chain formulations
// hold nothing but their model, which the assertion checks).
template <int W, class System>
PackedSystemOf<System, W> broadcast_system(const System& sys) {
  if constexpr (requires { rebound_system<Pack<W>>(sys); }) {
    return rebound_system<Pack<W>>(sys);
  } else {
    static_assert(sizeof(System) == sizeof(sys.model), "a formulation with members beside its model");
    return PackedSystemOf<System, W>{sys.model.template rebound<Pack<W>>()};
  }
}

// [parameters] in lanes: lane l's system is the instance's own, packed member by member
// (pack_systems). That needs every member of the model and formulation to be a double, in
// the same order over Pack<W>, which these models are (m, l, g; the chain's inverse masses,
// bond length and epsilon) and Baumgarte's alpha and beta are; the penalty pendulum's enum
// is not, and its instances with parameters step one at a time.
template <class Model>
struct members_all_real : std::false_type {};
template <bool Unit>
struct members_all_real<Pendulum<double, Unit>> : std::true_type {};
template <int N>
struct members_all_real<Chain<double, N>> : std::true_type {};

template <class System, int W>
inline constexpr bool packs_per_lane_v = [] {
  if constexpr (!packable_system<System, W>::value) {
    return false;
  } else {
    return members_all_real<std::decay_t<decltype(std::declval<System>().model)>>::value &&
           std::is_trivially_copyable_v<System> && sizeof(System) % sizeof(double) == 0 &&
           sizeof(PackedSystemOf<System, W>) == W * sizeof(System);
  }
}();

// The packed system whose lane l is lanes[l] (packs_per_lane_v).
template <int W, class System>
PackedSystemOf<System, W> pack_systems(const System* const* lanes) {
  static_assert(packs_per_lane_v<System, W>);
  constexpr int fields = static_cast<int>(sizeof(System) / sizeof(double));
  alignas(64) double packed[fields * W];
  for (int l = 0; l < W; ++l) {
    double d[fields];
    std::memcpy(d, static_cast<const void*>(lanes[l]), sizeof(System));
    for (int f = 0; f < fields; ++f) packed[f * W + l] = d[f];
  }
  PackedSystemOf<System, W> s;
  std::memcpy(static_cast<void*>(&s), packed, sizeof(s));
  return s;
}

// Whether the packed loop reproduces advance_fixed_to_sample under these run parameters: the
// lean loop's settings (lean_policy_for), without first-passage levels checked after every
// step (the general path checks them per step and instance). `momentum` tells whether the
// tolerance-triggered momentum projection is on.
template <class System, class Inst>
bool packed_fits(const RunParams<double>& rp, bool& momentum) {
  LeanPolicy policy = LeanPolicy::none;
  if (!lean_policy_for<System>(rp, policy)) return false;
  if constexpr (passage_checked_in_v<double, Inst>) {
    if (rp.passage.per_step) return false;
  }
  momentum = policy == LeanPolicy::momentum;
  return true;
}

// Advance in[0 .. P W) (all live, all at the same step) to sample time k, or to step `until`
// if that comes first, as advance_fixed_to_sample<1> does for each. sys[p] is the packed
// system of instances in[p W .. p W + W).
template <int P, int W, class Method, class PackedSystem, class Inst>
CHENS_FORCEINLINE void packed_advance_to_sample(const PackedSystem* sys, const RunParams<double>& rp, bool momentum,
                                                Inst* in, index_t k, index_t until) {
  using PState = typename PackedSystem::State;
  using Mask = MaskOf<W>;
  constexpr int N = PState::size;
  const index_t step = in[0].step;
  const index_t target = rp.sample_step(k) < until ? rp.sample_step(k) : until;
  if (step >= target) return;
  PState z[P];
  CHENS_UNROLL
  for (int p = 0; p < P; ++p)
    for (int c = 0; c < N; ++c)
      for (int l = 0; l < W; ++l) z[p][c].v[l] = in[p * W + l].z[c];
  Mask live[P], steps[P], attempts[P], projections[P];
  CHENS_UNROLL
  for (int p = 0; p < P; ++p) {
    live[p] = Mask{} - 1;  // all ones
    steps[p] = attempts[p] = projections[p] = Mask{};
  }
  const std::int64_t count = target - step;
  // The run's final step has size last_h: a second pass of the same loop (lean_advance_to_sample).
  const std::int64_t last = target == rp.total_steps ? 1 : 0;
  bool any_live = true;
  for (int pass = 0; pass < 2 && any_live; ++pass) {
    const Pack<W> h(pass == 0 ? rp.h : rp.last_h);
    const std::int64_t n = pass == 0 ? count - last : last;
    for (std::int64_t s = 0; s < n && any_live; ++s) {
      PState zn[P];
      CHENS_UNROLL
      for (int p = 0; p < P; ++p) Method::template advance<true>(sys[p], z[p], h, zn[p]);
      any_live = false;
      CHENS_UNROLL
      for (int p = 0; p < P; ++p) {
        Mask finite = finite_lanes(zn[p][0]);
        for (int c = 1; c < N; ++c) finite &= finite_lanes(zn[p][c]);
        if (momentum) {
          const auto psi = sys[p].model.psi(zn[p]);
          Mask over = exceeds_lanes(psi[0], rp.projection_tol);
          for (int a = 1; a < decltype(psi)::size; ++a) over |= exceeds_lanes(psi[a], rp.projection_tol);
          over &= finite & live[p];
          if (any_lane<W>(over)) {
            PState projected = zn[p];
            momentum_project(sys[p].model, projected);
            for (int c = 0; c < N; ++c) {
              zn[p][c] = select<W>(over, projected[c], zn[p][c]);
              finite &= ~over | finite_lanes(zn[p][c]);
            }
            projections[p] -= over;
          }
        }
        attempts[p] -= live[p];
        const Mask ok = live[p] & finite;
        for (int c = 0; c < N; ++c) z[p][c] = select<W>(ok, zn[p][c], z[p][c]);
        steps[p] -= ok;
        live[p] = ok;
        any_live = any_live || any_lane<W>(ok);
      }
    }
  }
  CHENS_UNROLL
  for (int p = 0; p < P; ++p)
    for (int l = 0; l < W; ++l) {
      Inst& i = in[p * W + l];
      for (int c = 0; c < N; ++c) i.z[c] = z[p][c].v[l];
      i.step = step + steps[p][l];
      i.t = rp.step_time(i.step);
      if (!live[p][l]) i.lost = int(LostReason::non_finite);
      i.c.steps += static_cast<std::uint64_t>(steps[p][l]);
      i.c.rhs_evaluations += static_cast<std::uint64_t>(attempts[p][l]) * static_cast<std::uint64_t>(Method::stages);
      i.c.momentum_projections += static_cast<std::uint64_t>(projections[p][l]);
    }
}

}  // namespace chens
#endif
