// The CPU engine's lane dispatch (backends/cpu/cpu_engine.hpp chooses among them per run):
// how many instances advance together on each path, and the per-instruction-set copies of
// the packed loop (ensemble/packed_steps.hpp) and of the general lane path with implicit
// lanes (integrators/implicit_rk_lanes.hpp). Apart from the engine so that its file holds
// the segment protocol and this one what an instruction set changes (issue 42).
#pragma once

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

}  // namespace chens
