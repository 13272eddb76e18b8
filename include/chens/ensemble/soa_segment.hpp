// One instance through one segment of sample times, with the ensemble stored as a
// structure of arrays of 8-byte words (word w of instance i at soa[w * n + i]): the body of
// the GPU's advance_segment kernel (kernels/ensemble_kernels.cuh), written as host/device
// code so that tests run it on the CPU against the CPU backend (tests/test_soa_segment.cpp).
//
// Why not simply load the whole instance into a local variable: a GPU thread keeps every
// field of a local struct in registers from load to store, and an instance carries what
// only the diagnostics need (H(0), the momentum integrals, the reference solution: for the
// pendulum 30 of its 37 words). ptxas gives the pendulum's Dirac + RK4 kernel 244 registers
// that way (docs/performance.md), which caps occupancy at 8 warps per SM. Here the stepping
// loop holds only the stepping fields (Instance's first group); the diagnostic fields are
// loaded from memory at each sample, just before they are used, and stored back only when
// a numerical reference moved them. For fixed-step methods without an advancing reference
// the counters also start at zero in the segment and are added to the stored ones at its
// end, so that counters a method never increments are compile-time zeros rather than
// live registers. The arithmetic is the per-instance driver's (instance.hpp), unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <chens/config.hpp>
#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/instance.hpp>
#include <chens/ensemble/lean_steps.hpp>

namespace chens {

template <class T>
inline constexpr int soa_words = static_cast<int>(sizeof(T) / sizeof(std::uint64_t));

// Words [w0, w1) of instance i between a structure of arrays and an instance.
template <class T>
CHENS_HD CHENS_FORCEINLINE void soa_load(const std::uint64_t* soa, std::uint64_t n, std::uint64_t i, T& t, int w0, int w1) {
  CHENS_UNROLL
  for (int w = w0; w < w1; ++w) {
    const std::uint64_t x = soa[static_cast<std::uint64_t>(w) * n + i];
    std::memcpy(reinterpret_cast<char*>(&t) + w * sizeof(std::uint64_t), &x, sizeof x);
  }
}

template <class T>
CHENS_HD CHENS_FORCEINLINE void soa_store(std::uint64_t* soa, std::uint64_t n, std::uint64_t i, const T& t, int w0, int w1) {
  CHENS_UNROLL
  for (int w = w0; w < w1; ++w) {
    std::uint64_t x;
    std::memcpy(&x, reinterpret_cast<const char*>(&t) + w * sizeof(std::uint64_t), sizeof x);
    soa[static_cast<std::uint64_t>(w) * n + i] = x;
  }
}

// The word ranges of an instance's three field groups (instance.hpp).
template <class Inst>
struct InstanceWords {
  static_assert(std::is_standard_layout<Inst>::value && std::is_trivially_copyable<Inst>::value, "instance layout");
  static_assert(sizeof(Inst) % sizeof(std::uint64_t) == 0 && offsetof(Inst, c) % sizeof(std::uint64_t) == 0 &&
                    offsetof(Inst, energy0) % sizeof(std::uint64_t) == 0,
                "instance groups must start on 8-byte words");
  static constexpr int stepping_end = static_cast<int>(offsetof(Inst, c) / sizeof(std::uint64_t));
  static constexpr int counters_end = static_cast<int>(offsetof(Inst, energy0) / sizeof(std::uint64_t));
  static constexpr int all = soa_words<Inst>;
};

// The words holding bytes [offset, offset + size) of an instance.
struct FieldWords {
  int first, end;
  static constexpr FieldWords of(std::size_t offset, std::size_t size) {
    return {static_cast<int>(offset / sizeof(std::uint64_t)),
            static_cast<int>((offset + size + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t))};
  }
};

// The words the lean step kernel and the measuring kernel touch (a word is loaded and stored
// whole, so a smaller field sharing it, such as a float run's h beside t, is written back
// unchanged).
template <class Inst>
struct SplitWords {
  using Words = InstanceWords<Inst>;
  static constexpr FieldWords zt = FieldWords::of(offsetof(Inst, z), offsetof(Inst, t) + sizeof(Inst::t));
  static constexpr FieldWords t = FieldWords::of(offsetof(Inst, t), sizeof(Inst::t));
  static constexpr FieldWords step = FieldWords::of(offsetof(Inst, step), sizeof(Inst::step));
  static constexpr FieldWords lost = FieldWords::of(offsetof(Inst, lost), sizeof(Inst::lost));
  static constexpr int counters = Words::stepping_end;  // Counters::steps is the first counter
  static constexpr int counter(std::size_t offset_in_counters) {
    return counters + static_cast<int>(offset_in_counters / sizeof(std::uint64_t));
  }
  static_assert(offsetof(Inst, z) == 0 && step.first >= zt.end && lost.first >= step.end && lost.end <= counters,
                "instance layout: z, t, ..., step, lost, then the counters");
};

// The counters the lean loop moves (c: one call's), added to instance i's in place.
template <class Inst>
CHENS_HD CHENS_FORCEINLINE void add_lean_counters(std::uint64_t* soa, std::uint64_t n, std::uint64_t i, const Counters& c) {
  using W = SplitWords<Inst>;
  soa[static_cast<std::uint64_t>(W::counter(offsetof(Counters, steps))) * n + i] += c.steps;
  soa[static_cast<std::uint64_t>(W::counter(offsetof(Counters, rhs_evaluations))) * n + i] += c.rhs_evaluations;
  if (c.momentum_projections)
    soa[static_cast<std::uint64_t>(W::counter(offsetof(Counters, momentum_projections))) * n + i] += c.momentum_projections;
}

// The GPU's split path, one row at a time (kernels/ensemble_kernels.cuh): instance i to sample
// k through the lean loop, reading and writing only z, t, step, lost and the three counters
// the loop adds to. Lost instances stay frozen. InlineRhs: formulation.hpp's eval_rhs; r:
// the loop's working storage, provided by the caller.
template <LeanPolicy P, bool InlineRhs, class System, class Method, class Inst>
CHENS_HD CHENS_FORCEINLINE void lean_step_soa(const System& sys, const RunParams<typename System::Real>& rp,
                                              std::uint64_t* soa, std::uint64_t n, std::uint64_t i, index_t k,
                                              LeanStepResult<typename System::State>& r, index_t until = INT64_MAX) {
  using W = SplitWords<Inst>;
  Inst in;
  soa_load(soa, n, i, in, W::lost.first, W::lost.end);
  if (in.lost != int(LostReason::none)) return;
  soa_load(soa, n, i, in, W::zt.first, W::zt.end);
  soa_load(soa, n, i, in, W::step.first, W::step.end);
  r.z = in.z;
  r.step = in.step;
  lean_advance_to_sample<P, InlineRhs, System, Method>(sys, rp, k, r, until);
  in.c = Counters{};
  commit_lean<Method>(in, r, rp);
  soa_store(soa, n, i, in, W::zt.first, W::zt.end);
  soa_store(soa, n, i, in, W::step.first, W::step.end);
  if (r.lost) soa_store(soa, n, i, in, W::lost.first, W::lost.end);
  add_lean_counters<Inst>(soa, n, i, in.c);
}

// The split path's measurement of instance i at sample k (after lean_step_soa): what
// advance_segment_soa does at a sample, reading z, lost and the diagnostic fields (with an
// advancing reference, the whole instance), writing back what measuring moved; calls
// emit(k, measured, metrics, instance).
template <class System, class Inst, class Emit>
CHENS_HD CHENS_FORCEINLINE void measure_soa(const System& sys, const RunParams<typename System::Real>& rp,
                                            std::uint64_t* soa, std::uint64_t n, std::uint64_t i, index_t k, Emit&& emit) {
  using Words = InstanceWords<Inst>;
  using W = SplitWords<Inst>;
  constexpr bool advancing = decltype(Inst::ref)::advancing;
  Inst in;
  if constexpr (advancing) {
    soa_load(soa, n, i, in, 0, Words::all);
  } else {
    soa_load(soa, n, i, in, W::zt.first, W::zt.end);
    soa_load(soa, n, i, in, W::lost.first, W::lost.end);
    soa_load(soa, n, i, in, Words::counters_end, Words::all);
  }
  const int lost = in.lost;
  Metrics<double> m;
  const bool ok = measure_instance(sys, rp, in, k, m);
  if constexpr (advancing) soa_store(soa, n, i, in, Words::stepping_end, Words::all);
  if (in.lost != lost) soa_store(soa, n, i, in, W::lost.first, W::lost.end);
  emit(k, ok, m, in);
}

// A pass between stop points for instance i (advance_toward_sample). Returns whether it
// (and its reference) is at sample k.
template <class System, class Method, class Inst>
CHENS_HD bool advance_partial_soa(const System& sys, const Method& method, const RunParams<typename System::Real>& rp,
                                  std::uint64_t* soa, std::uint64_t n, std::uint64_t i, index_t k, const StepLimit& limit) {
  using Words = InstanceWords<Inst>;
  // Stepping reads and writes the stepping fields and counters only (as in
  // advance_segment_soa); an advancing reference needs the whole instance.
  constexpr int end = decltype(Inst::ref)::advancing ? Words::all : Words::counters_end;
  Inst in;
  soa_load(soa, n, i, in, 0, end);
  const bool there = advance_toward_sample(sys, method, rp, in, k, limit);
  soa_store(soa, n, i, in, 0, end);
  return there;
}

// Instance i (already initialised in soa) through samples k0 .. k1-1: advances to each
// sample (k > 0), measures it, and calls emit(k, measured, metrics, instance) with the
// whole instance at that sample. Returns with the instance stored back.
template <class System, class Method, class Inst, class Emit>
CHENS_HD void advance_segment_soa(const System& sys, const Method& method, const RunParams<typename System::Real>& rp,
                                  std::uint64_t* soa, std::uint64_t n, std::uint64_t i, index_t k0, index_t k1,
                                  Emit&& emit) {
  using Words = InstanceWords<Inst>;
  constexpr bool advancing = decltype(Inst::ref)::advancing;
  constexpr bool local_counters = !Method::adaptive && !advancing;  // adaptive runs read their step counts
  Inst in;
  soa_load(soa, n, i, in, 0, local_counters ? Words::stepping_end : Words::counters_end);
  if constexpr (local_counters) in.c = Counters{};
  for (index_t k = k0; k < k1; ++k) {
    if (k > 0) advance_to_sample(sys, method, rp, in, k);
    soa_load(soa, n, i, in, Words::counters_end, Words::all);
    Metrics<double> m;
    const bool ok = measure_instance(sys, rp, in, k, m);
    if constexpr (advancing) soa_store(soa, n, i, in, Words::counters_end, Words::all);
    emit(k, ok, m, in);
  }
  if constexpr (local_counters) {
    Inst stored;
    soa_load(soa, n, i, stored, Words::stepping_end, Words::counters_end);
    stored.c.add(in.c);
    in.c = stored.c;
  }
  soa_store(soa, n, i, in, 0, Words::counters_end);
}

}  // namespace chens
