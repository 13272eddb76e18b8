// One instance through one segment of sample times, with the ensemble stored as a
// structure of arrays of 8-byte words (word w of instance i at soa[w * n + i]): the body of
// the GPU's advance_segment kernel (kernels/ensemble_kernel.cuh), written as host/device
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

namespace chens {

template <class T>
inline constexpr int soa_words = static_cast<int>(sizeof(T) / sizeof(std::uint64_t));

// Words [w0, w1) of instance i between a structure of arrays and an instance.
template <class T>
CHENS_HD CHENS_FORCEINLINE void soa_load(const std::uint64_t* soa, std::uint64_t n, std::uint64_t i, T& t, int w0,
                                         int w1) {
  CHENS_UNROLL
  for (int w = w0; w < w1; ++w) {
    const std::uint64_t x = soa[static_cast<std::uint64_t>(w) * n + i];
    std::memcpy(reinterpret_cast<char*>(&t) + w * sizeof(std::uint64_t), &x, sizeof x);
  }
}

template <class T>
CHENS_HD CHENS_FORCEINLINE void soa_store(std::uint64_t* soa, std::uint64_t n, std::uint64_t i, const T& t, int w0,
                                          int w1) {
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
