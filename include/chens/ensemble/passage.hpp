// First-passage times (issue 22, docs/first_passage.md): for each metric given a level
// (output.first_passage), the first time an instance's metric exceeds it, and the first
// sample time at which the instance is found lost. A stability study asks how long an
// integration stays trustworthy; the statistics of these times answer it, where the
// per-sample statistics only say how large the errors are.
//
// When a metric is checked: every metric but the integration error is a function of the
// state alone (H, phi, psi, the momenta, the wedge product: measure_state in metrics.hpp),
// so it is checked after every accepted step, on the state the integration goes on from
// (after projections), and its crossing is located inside the step to the method's order
// (up to 4: ensemble/passage_location.hpp, note_step_crossings). The integration error
// needs the reference solution, which the backends evaluate at sample times only: it is
// checked at samples, and so is the loss (lost_at is the first sample time at which the
// instance is no longer live, the sample at which the per-sample statistics stop counting
// it). Every sample checks every metric as well; a sample is a step, so this changes no
// per-step crossing and catches crossings at t = 0.
//
// The times are doubles (a located time inside a step, or the sample's time of the run's
// grid, in the run's precision, widened), +inf while not crossed; they live in the instance
// (Instance::passage), so checkpoints carry them and any split of the ensemble gives the
// same times.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <chens/config.hpp>
#include <chens/diagnostics/metrics.hpp>

// The checks run on the CPU backend only, for now: the GPU backend refuses a study with
// levels (cuda_unsupported_reason), and nvcc's device pass compiles the per-instance code
// without them. Their registers, live through the stepping loops, spilled the DOPRI5 kernels
// of chains on thread groups and the tangent systems' segment kernel (ptxas; the builds make
// a spill an error there), and their cost on the device is not measured yet.
#if defined(__CUDA_ARCH__)
#define CHENS_PASSAGE_CHECKS 0
#else
#define CHENS_PASSAGE_CHECKS 1
#endif

namespace chens {

// Whether an instance in Real has first-passage checks: in float or double (the flop-counting
// test's instrumented number type has none).
template <class Real>
inline constexpr bool passage_checked_v = CHENS_PASSAGE_CHECKS&& std::is_floating_point_v<Real>;

// Whether what the per-instance driver steps carries passage times (an Instance does; a
// thread group's stepping fields, ensemble/group_segment.hpp, do not: the GPU has no checks).
template <class Inst, class = void>
struct carries_passage : std::false_type {};
template <class Inst>
struct carries_passage<Inst, std::void_t<decltype(std::declval<Inst&>().passage)>> : std::true_type {};
template <class Real, class Inst>
inline constexpr bool passage_checked_in_v = passage_checked_v<Real>&& carries_passage<Inst>::value;

// The slots of the first-passage times: one per metric, then the loss.
inline constexpr int passage_lost = metric_count;
inline constexpr int passage_slots = metric_count + 1;
inline constexpr const char* passage_slot_name(int s) { return s == passage_lost ? "lost" : metric_name(s); }
// Whether metric m is checked after every step (else at sample times only: the integration
// error needs the reference there, the Lyapunov exponent the time since the start).
inline constexpr bool passage_per_step(int m) {
  return m != int(MetricId::integration_error) && m != int(MetricId::lyapunov) && m < metric_count;
}

// The levels a run checks (RunParams::passage).
struct PassageLevels {
  double level[metric_count] = {};  // metric m crosses when its value exceeds level[m]
  unsigned mask = 0;                // bit s: slot s is checked (bit passage_lost: the loss)
  bool per_step = false;            // a metric of passage_per_step is checked

  CHENS_HD bool on(int s) const { return ((mask >> s) & 1u) != 0u; }
  CHENS_HD bool any() const { return mask != 0u; }
};

struct Passage {
  double first[metric_count];  // first time metric m exceeded its level; +inf: not (yet)
  double lost_at;              // first sample time at which the instance was lost; +inf: not

  CHENS_HD static Passage none() {
    Passage p;
    for (int m = 0; m < metric_count; ++m) p.first[m] = INFINITY;
    p.lost_at = INFINITY;
    return p;
  }
  // Slot s's time (passage_lost: lost_at).
  CHENS_HD double at(int s) const { return s == passage_lost ? lost_at : first[s]; }
};

// Crossings among the metrics m (at time t) of those selected by `per_step_only`: the
// per-step metrics, or all of them. A value that is NaN crosses no level; +inf does.
CHENS_HD inline void note_crossings(const PassageLevels& levels, const Metrics<double>& m, double t, bool per_step_only,
                                    Passage& p) {
  for (int c = 0; c < metric_count; ++c) {
    if (!levels.on(c) || (per_step_only && !passage_per_step(c))) continue;
    if (p.first[c] == INFINITY && m.v[c] > levels.level[c]) p.first[c] = t;
  }
}

// The loss, seen at sample time t.
CHENS_HD inline void note_lost(double t, Passage& p) {
  if (p.lost_at == INFINITY) p.lost_at = t;
}

}  // namespace chens
