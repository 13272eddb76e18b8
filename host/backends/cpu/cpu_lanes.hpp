// The CPU engine's lane dispatch (backends/cpu/cpu_engine.hpp chooses among them per run):
// how many instances advance together on each path, and the per-instruction-set copies of
// the packed loop (ensemble/packed_steps.hpp) and of the general lane path with implicit
// lanes (integrators/implicit_rk_lanes.hpp). Apart from the engine so that its file holds
// the segment protocol and this one what an instruction set changes (issue 42).
#pragma once

#include <string>
#include <type_traits>

#include <chens/ensemble/instance.hpp>
#include <chens/ensemble/packed_steps.hpp>
#include <chens/ensemble/run_params.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/implicit_rk_lanes.hpp>

#include "backends/cpu/cpu_isa.hpp"

namespace chens {

// Instances the general lane path advances in lockstep (advance_fixed_to_sample<4>,
// ExplicitRk::step_lanes, two per SSE2 register): a single instance's right-hand side is one
// chain of dependent operations, so interleaving independent instances fills the core's
// pipelines. Divides cpu_block_size.
inline constexpr int cpu_lanes = 4;
inline constexpr int cpu_lanes_max_state = 8;
// The packed loop (ensemble/packed_steps.hpp): registers of W doubles interleaved per lane
// group (2 x 8 = 16 instances with AVX-512; docs/performance.md, "CPU lanes"), for states
// up to this size (a seven-atom chain's 28; larger chains would multiply the build's time
// for a gain their right-hand side's own width already gives).
inline constexpr int cpu_packs = 2;
inline constexpr int cpu_packed_max_state = 32;

// The packed loop's body compiled for each instruction set: the target attribute compiles
// the function, and flatten everything it calls (the step, the model, the projection), with
// that set's registers; results are the same (linalg/simd_pack.hpp). Which one runs is
// chosen at run time (cpu_isa.hpp). A set this build does not compile (CHENS_CPU_ISAS) has an
// empty copy that traps: nothing calls it, as cpu_isa_supported() says no.
template <int P, int W, class Method, class PackedSystem, class Inst>
[[gnu::flatten]] void packed_advance_sse2(const PackedSystem* sys, const RunParams<double>& rp, bool momentum, Inst* in,
                                          index_t k, index_t until) {
  if constexpr (cpu_isa_compiled(CpuIsa::sse2)) {
    packed_advance_to_sample<P, W, Method>(sys, rp, momentum, in, k, until);
  } else {
    __builtin_trap();
  }
}
template <int P, int W, class Method, class PackedSystem, class Inst>
[[gnu::target("avx2"), gnu::flatten]] void packed_advance_avx2(const PackedSystem* sys, const RunParams<double>& rp,
                                                               bool momentum, Inst* in, index_t k, index_t until) {
  if constexpr (cpu_isa_compiled(CpuIsa::avx2)) {
    packed_advance_to_sample<P, W, Method>(sys, rp, momentum, in, k, until);
  } else {
    __builtin_trap();
  }
}
template <int P, int W, class Method, class PackedSystem, class Inst>
[[gnu::target("avx512f"), gnu::flatten]] void packed_advance_avx512(const PackedSystem* sys, const RunParams<double>& rp,
                                                                    bool momentum, Inst* in, index_t k, index_t until) {
  if constexpr (cpu_isa_compiled(CpuIsa::avx512)) {
    packed_advance_to_sample<P, W, Method>(sys, rp, momentum, in, k, until);
  } else {
    __builtin_trap();
  }
}
// The general lane path (advance_fixed_to_sample<B>, every rule per instance) with a method
// whose step_lanes packs W instances per register (ImplicitRkLanes), likewise per set.
template <int B, class System, class LaneMethod, class Inst>
[[gnu::flatten]] void lanes_advance_sse2(const System& sys, const LaneMethod& m, const RunParams<double>& rp, Inst* in,
                                         index_t k, const StepLimit& limit) {
  if constexpr (cpu_isa_compiled(CpuIsa::sse2)) {
    advance_fixed_to_sample<B>(sys, m, rp, in, k, limit);
  } else {
    __builtin_trap();
  }
}
template <int B, class System, class LaneMethod, class Inst>
[[gnu::target("avx2"), gnu::flatten]] void lanes_advance_avx2(
    const System& sys, const LaneMethod& m, const RunParams<double>& rp, Inst* in, index_t k, const StepLimit& limit) {
  if constexpr (cpu_isa_compiled(CpuIsa::avx2)) {
    advance_fixed_to_sample<B>(sys, m, rp, in, k, limit);
  } else {
    __builtin_trap();
  }
}
template <int B, class System, class LaneMethod, class Inst>
[[gnu::target("avx512f"), gnu::flatten]] void lanes_advance_avx512(
    const System& sys, const LaneMethod& m, const RunParams<double>& rp, Inst* in, index_t k, const StepLimit& limit) {
  if constexpr (cpu_isa_compiled(CpuIsa::avx512)) {
    advance_fixed_to_sample<B>(sys, m, rp, in, k, limit);
  } else {
    __builtin_trap();
  }
}

// The tableau of an implicit Runge-Kutta method in double (implicit midpoint, Gauss2), or void.
template <class Method>
struct implicit_rk_tableau {
  using type = void;
};
template <class Tableau>
struct implicit_rk_tableau<ImplicitRk<Tableau, double>> {
  using type = Tableau;
};

// Which lanes a CPU engine's instances of System and Method step in (docs/performance.md,
// "CPU lanes"): per instruction set, the lane group's width and loop, fixed at compile time,
// and the run's settings that decide whether a group steps together. The engine (cpu_engine.hpp)
// keeps the segment protocol; this, what an instruction set changes (issue 42).
template <class System, class Method>
struct CpuLaneChoice {
  using Real = typename System::Real;
  // The general lane path (advance_fixed_to_sample<4>: each step packed into SSE2 pairs and
  // unpacked, every rule per instance) pays off for small states only: four chain states
  // would spill the registers.
  static constexpr bool general_lanes = !Method::adaptive && Method::has_lanes && System::State::size <= cpu_lanes_max_state;
  // Instruction set I's registers hold W doubles; the packed loop runs where the method is an
  // explicit Runge-Kutta method and the system packs (packed_steps.hpp).
  template <CpuIsa I>
  static constexpr int width_of = I == CpuIsa::avx512 ? 8
                                  : I == CpuIsa::avx2 ? 4
                                                      : 2;
  // Whether a method that can (Eligible) steps this system in registers of W = width_of<I>:
  // a vector instruction set, no tangents, a state small enough, a system that packs. Eligible
  // is tested first, so that packable_system is not asked of systems no such method steps.
  template <CpuIsa I, bool Eligible>
  static constexpr bool packs_in_registers = [] {
    if constexpr (!Eligible || I == CpuIsa::scalar || has_tangents_v<System> ||
                  (System::State::size > cpu_packed_max_state)) {
      return false;
    } else {
      return packable_system<System, width_of<I>>::value;
    }
  }();
  template <CpuIsa I>
  static constexpr bool packed_of = packs_in_registers<I, std::is_same_v<Real, double> && is_explicit_rk<Method>::value>;
  // Implicit midpoint and Gauss2 step cpu_packs registers of W through the general lane path
  // (ImplicitRkLanes: each lane its own fixed-point iterations).
  using ImplicitTableau = typename implicit_rk_tableau<Method>::type;
  template <CpuIsa I>
  static constexpr bool implicit_of = packs_in_registers<I, !std::is_void_v<ImplicitTableau>>;
  // A lane group's instances: cpu_packs registers of W with the packed loop or an implicit
  // method's lanes, else the general path's four, else one (no lanes; and with
  // CHENS_CPU_ISA = scalar).
  template <CpuIsa I>
  static constexpr int lanes_of = I == CpuIsa::scalar                ? 1
                                  : (packed_of<I> || implicit_of<I>) ? cpu_packs* width_of<I>
                                  : general_lanes                    ? cpu_lanes
                                                                     : 1;

  // The run's instruction set (cpu_isa.hpp): the run's, or the widest narrower one this unit
  // compiled where it was built against headers of a build with fewer sets (same results).
  CpuIsa isa = CpuIsa::scalar;
  bool varied = false;           // [parameters] vary the instances' settings
  bool packed_fits = false;      // the run's settings fit the packed loop (packed_fits)
  bool packed_momentum = false;  // and it checks the momentum projection
  bool with_parameters = false;  // with [parameters], the instances share one time grid

  // Whether this run's instances step in lane groups of I: always without [parameters]; with
  // them only in the packed loop (a system per lane) and on one time grid.
  template <CpuIsa I>
  bool apply() const {
    if constexpr (packed_of<I>) {
      if (varied) return packs_per_lane_v<System, width_of<I>> && packed_fits && with_parameters;
    }
    return !varied;
  }
  // f.template operator()<I>() for this run's instruction set, one of those this build compiles
  // (cpu_isa.hpp: isa is one; the others are not instantiated).
  template <class F>
  void on_isa(F&& f) const {
    switch (isa) {
      case CpuIsa::scalar: f.template operator()<CpuIsa::scalar>(); break;
      case CpuIsa::sse2:
        if constexpr (cpu_isa_compiled(CpuIsa::sse2)) f.template operator()<CpuIsa::sse2>();
        break;
      case CpuIsa::avx2:
        if constexpr (cpu_isa_compiled(CpuIsa::avx2)) f.template operator()<CpuIsa::avx2>();
        break;
      case CpuIsa::avx512:
        if constexpr (cpu_isa_compiled(CpuIsa::avx512)) f.template operator()<CpuIsa::avx512>();
        break;
    }
  }
  // Instances in[0 .. lanes_of<I>) to sample k (or limit): the packed loop where the run's
  // settings fit it and the group is together (all live, at one step), else the general
  // lane path, else one instance at a time; each gives every instance the same result. at:
  // the group's settings (the engine's Settings: `own`, each lane's `lane[j].sys`, and
  // `visit(j, sys, rp, f)`), (sys, rp) the study's.
  template <CpuIsa I, int B, class Inst, class Settings>
  void advance(const System& sys, const Method& method, const RunParams<Real>& rp, Inst* in, index_t k,
               const StepLimit& limit, const Settings& at) const {
    static_assert(B == lanes_of<I>);
    if constexpr (packed_of<I>) {
      bool together = packed_fits && (!at.own || packs_per_lane_v<System, width_of<I>>);
      for (int j = 0; j < B && together; ++j) together = in[j].lost == int(LostReason::none) && in[j].step == in[0].step;
      if (together) {
        constexpr int W = width_of<I>, P = B / W;
        PackedSystemOf<System, W> packed[P];
        if constexpr (packs_per_lane_v<System, W>) {
          if (at.own)
            for (int p = 0; p < P; ++p) {
              const System* lanes[W];
              for (int l = 0; l < W; ++l) lanes[l] = &at.lane[p * W + l].sys;
              packed[p] = pack_systems<W>(lanes);
            }
        }
        if (!at.own)
          for (int p = 0; p < P; ++p) packed[p] = broadcast_system<W>(sys);
        if constexpr (I == CpuIsa::avx512) {
          packed_advance_avx512<P, W, Method>(packed, rp, packed_momentum, in, k, limit.until_step);
        } else if constexpr (I == CpuIsa::avx2) {
          packed_advance_avx2<P, W, Method>(packed, rp, packed_momentum, in, k, limit.until_step);
        } else {
          packed_advance_sse2<P, W, Method>(packed, rp, packed_momentum, in, k, limit.until_step);
        }
        return;
      }
    }
    if constexpr (implicit_of<I>) {
      if (!varied) {
        const ImplicitRkLanes<ImplicitTableau, width_of<I>> lanes(method);
        if constexpr (I == CpuIsa::avx512) {
          lanes_advance_avx512<B>(sys, lanes, rp, in, k, limit);
        } else if constexpr (I == CpuIsa::avx2) {
          lanes_advance_avx2<B>(sys, lanes, rp, in, k, limit);
        } else {
          lanes_advance_sse2<B>(sys, lanes, rp, in, k, limit);
        }
        return;
      }
    }
    if constexpr (general_lanes && B % cpu_lanes == 0) {
      if (!varied) {
        for (int j = 0; j < B; j += cpu_lanes) advance_fixed_to_sample<cpu_lanes>(sys, method, rp, in + j, k, limit);
        return;
      }
    }
    for (int j = 0; j < B; ++j)
      at.visit(j, sys, rp, [&](const System& sys_j, const RunParams<Real>& rp_j) {
        advance_fixed_to_sample<1>(sys_j, method, rp_j, in + j, k, limit);
      });
  }
  // EnsembleResult::device's account of the lanes.
  std::string note() const {
    std::string how;
    on_isa([&]<CpuIsa I>() {
      constexpr int L = lanes_of<I>;
      if constexpr (L == 1) {
        how = "one instance at a time";
      } else if constexpr (implicit_of<I>) {
        how = std::to_string(L) + " instances in " + std::to_string(L / width_of<I>) + " registers of " +
              std::to_string(width_of<I>) + " doubles, each its own fixed-point iterations";
      } else if constexpr (packed_of<I>) {
        how = std::to_string(L) + " instances in " + std::to_string(L / width_of<I>) + " registers of " +
              std::to_string(width_of<I>) + " doubles";
        if (!packed_fits)
          how = general_lanes ? "4 instances in SSE2 pairs (these settings need the general lane path)"
                              : "one instance at a time (these settings need the general path)";
      } else {
        how = "4 instances in SSE2 pairs";
      }
      if constexpr (L > 1)
        if (!apply<I>())
          how = with_parameters
                    ? "one instance at a time (each instance its own system, which only the packed loop steps in lanes)"
                    : "one instance at a time (each instance its own step size)";
    });
    return std::string(cpu_isa_name(isa)) + ": " + how;
  }
};

}  // namespace chens
