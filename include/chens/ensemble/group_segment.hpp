// The GPU engine's thread-group path (issue 20): a chain instance stored in the engine's
// structure of arrays (ensemble/soa_segment.hpp: word w of instance i at soa[w * n + i])
// stepped and measured by a group of lanes, each holding its atoms' slice of the state
// (models/chain_slice.hpp, ensemble/thread_group.hpp). These are the bodies of the CUDA
// engine's group kernels (kernels/group_kernels.cuh), written as host/device code so that
// tests run them with host-thread groups against the CPU backend, word for word
// (tests/test_soa_segment.cpp, SoaSegment.ChainOnThreadGroups*):
//   group_lean_step_soa   lean_step_soa: the lean fixed-step loop (lean_steps.hpp) over the
//                         slices; lane 0 keeps the step, time, loss and counters;
//   group_advance_soa     advance_partial_soa: the per-instance driver (instance.hpp) over
//                         the slices, for every method and projection setting the lean
//                         loop does not take;
//   group_reference_soa   advance_partial_soa's reference part: the instance's numerical
//                         reference (reference/numerical.hpp, a DOPRI5 run held in the
//                         instance) over the slices, once the instance is at the sample;
//   group_measure_soa     measure_soa: measure() (metrics.hpp) over the slices, whose
//                         reductions are the group's collectives in the one-thread order,
//                         and the loss rules of sample_verdict;
//   group_fill_recorded_row  fill_recorded_row's row of a recorded instance;
//   group_at_sample_soa   advance_partial_soa's answer once the stepping has run.
// Which systems have slices: chain_group_system (every chain formulation, chains whose atoms
// divide among two lanes or more, chain_group_lanes). The engine runs them with every method,
// projection setting and the numerical reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <chens/config.hpp>
#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/counters.hpp>
#include <chens/ensemble/chain_group_steps.hpp>
#include <chens/ensemble/instance.hpp>
#include <chens/ensemble/lean_steps.hpp>
#include <chens/ensemble/soa_segment.hpp>
#include <chens/ensemble/thread_group.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/models/chain.hpp>
#include <chens/reference/numerical.hpp>

namespace chens {

// Whether System runs on thread groups, and its lanes' system for a group type: a chain
// formulation of chain_group_formulation (its only member the model) over a chain whose atoms
// divide among two lanes or more.
template <class System>
struct chain_group_system : std::false_type {};
template <template <class> class Formulation, int N>
struct chain_group_system<Formulation<Chain<double, N>>>
    : std::bool_constant<(chain_group_lanes(N) > 1) && chain_group_formulation(Formulation<Chain<double, N>>::id)> {
  static constexpr int atoms = N;
  static constexpr int lanes = chain_group_lanes(N);
  template <class Group>
  using slice = Formulation<ChainSlice<double, N, Group>>;
  // This lane's system (called on every lane).
  template <class Group>
  CHENS_HD static slice<Group> slice_of(const Formulation<Chain<double, N>>& sys) {
    static_assert(sizeof(sys) == sizeof(sys.model), "the formulation holds its model alone");
    return slice<Group>{ChainSlice<double, N, Group>::slice_of(sys.model)};
  }
};
template <class System>
inline constexpr bool chain_group_system_v = chain_group_system<System>::value;

// This lane's slice of instance i's state, and back: the instance's own (its first words,
// instance.hpp) or, from word First on, its reference's (GroupReferenceFields).
template <class Slice, int First = 0>
CHENS_HD CHENS_FORCEINLINE typename Slice::State group_load_state(const std::uint64_t* soa, std::uint64_t n,
                                                                  std::uint64_t i) {
  static_assert(std::is_same_v<typename Slice::Real, double>, "one state component per word");
  using Model = decltype(Slice::model);
  typename Slice::State s;
  CHENS_UNROLL
  for (int c = 0; c < Slice::State::size; ++c) {
    const std::uint64_t x = soa[static_cast<std::uint64_t>(First + Model::whole_component(c)) * n + i];
    std::memcpy(&s[c], &x, sizeof x);
  }
  return s;
}
template <class Slice, int First = 0>
CHENS_HD CHENS_FORCEINLINE void group_store_state(std::uint64_t* soa, std::uint64_t n, std::uint64_t i,
                                                  const typename Slice::State& s) {
  using Model = decltype(Slice::model);
  CHENS_UNROLL
  for (int c = 0; c < Slice::State::size; ++c) {
    std::uint64_t x;
    std::memcpy(&x, &s[c], sizeof x);
    soa[static_cast<std::uint64_t>(First + Model::whole_component(c)) * n + i] = x;
  }
}

// One field of instance i (at byte Offset of the instance), read from or written into the
// words that hold it (a write keeps the rest of those words). The group bodies touch a few of
// an instance's fields; a local instance to load them into lived in local memory beyond
// N = 64 (8 560 B at N = 128 with its reference's storage, docs/performance.md).
template <class T, std::size_t Offset>
CHENS_HD CHENS_FORCEINLINE T soa_field(const std::uint64_t* soa, std::uint64_t n, std::uint64_t i) {
  constexpr FieldWords f = FieldWords::of(Offset, sizeof(T));
  constexpr int first = f.first, end = f.end;
  std::uint64_t w[end - first];
  CHENS_UNROLL
  for (int k = first; k < end; ++k) w[k - first] = soa[static_cast<std::uint64_t>(k) * n + i];
  T v;
  std::memcpy(&v, reinterpret_cast<const char*>(w) + (Offset - first * sizeof(std::uint64_t)), sizeof v);
  return v;
}
template <class T, std::size_t Offset>
CHENS_HD CHENS_FORCEINLINE void soa_set_field(std::uint64_t* soa, std::uint64_t n, std::uint64_t i, const T& v) {
  constexpr FieldWords f = FieldWords::of(Offset, sizeof(T));
  constexpr int first = f.first, end = f.end;
  std::uint64_t w[end - first];
  CHENS_UNROLL
  for (int k = first; k < end; ++k) w[k - first] = soa[static_cast<std::uint64_t>(k) * n + i];
  std::memcpy(reinterpret_cast<char*>(w) + (Offset - first * sizeof(std::uint64_t)), &v, sizeof v);
  CHENS_UNROLL
  for (int k = first; k < end; ++k) soa[static_cast<std::uint64_t>(k) * n + i] = w[k - first];
}

// What the lean loop commits for an instance besides its state (commit_lean_fields).
struct GroupLeanFields {
  double t;
  index_t step;
  int lost;
  Counters c;
};

// Instance i's progress: its loss, step and time, the words integration_at_sample reads.
template <class Inst>
CHENS_HD CHENS_FORCEINLINE GroupLeanFields group_progress(const std::uint64_t* soa, std::uint64_t n, std::uint64_t i) {
  GroupLeanFields f{};
  f.lost = soa_field<decltype(Inst::lost), offsetof(Inst, lost)>(soa, n, i);
  f.step = soa_field<decltype(Inst::step), offsetof(Inst, step)>(soa, n, i);
  f.t = soa_field<decltype(Inst::t), offsetof(Inst, t)>(soa, n, i);
  return f;
}

// lean_step_soa on a group: instance i to sample k (or step `until`), every lane calling it
// with its slice of the system; lost instances stay frozen. The decisions inside the loop are
// the group's (finite_bits, any_exceeds on slices), so every lane leaves with the same step
// count, loss and projections; each lane stores its slice, lane 0 the step, time, loss and
// counters. InlineRhs: formulation.hpp's eval_rhs; r: the loop's working storage. Lane 0
// writes after the group's last collective: the other lanes see its words only after a
// kernel boundary (or a Group::sync()), which the engine has between stepping and measuring.
template <LeanPolicy P, bool InlineRhs, class Method, class Inst, class Slice>
CHENS_HD CHENS_FORCEINLINE void group_lean_step_soa(const Slice& sys, const RunParams<double>& rp, std::uint64_t* soa,
                                                    std::uint64_t n, std::uint64_t i, index_t k,
                                                    LeanStepResult<typename Slice::State>& r, index_t until = INT64_MAX) {
  using Group = typename decltype(Slice::model)::Group;
  // One word, read by every lane: the group leaves together.
  if (soa_field<decltype(Inst::lost), offsetof(Inst, lost)>(soa, n, i) != int(LostReason::none)) return;
  r.z = group_load_state<Slice>(soa, n, i);
  r.step = soa_field<decltype(Inst::step), offsetof(Inst, step)>(soa, n, i);
  lean_advance_to_sample<P, InlineRhs, Slice, Method>(sys, rp, k, r, until);
  group_store_state<Slice>(soa, n, i, r.z);
  Group::sync();  // every lane has read the step before lane 0 moves it (a loop of no steps has no collective)
  if (Group::rank() == 0) {
    GroupLeanFields f{0.0, 0, int(LostReason::none), Counters{}};
    commit_lean_fields<Method>(f, r, rp);
    soa_set_field<decltype(Inst::t), offsetof(Inst, t)>(soa, n, i, f.t);
    soa_set_field<decltype(Inst::step), offsetof(Inst, step)>(soa, n, i, f.step);
    if (r.lost) soa_set_field<decltype(Inst::lost), offsetof(Inst, lost)>(soa, n, i, f.lost);
    add_lean_counters<Inst>(soa, n, i, f.c);
  }
}

// The stepping fields of an instance (instance.hpp's Instance, its first group, and the
// counters) with one lane's slice of the state: what the per-instance driver reads and
// writes, so that a group runs the driver itself.
template <class State>
struct GroupStepping {
  State z;
  double t;
  double h;
  Dopri5Controller<double> ctl;
  index_t step;
  int lost;
  Counters c;
};

// advance_partial_soa on a group: instance i toward sample k within `limit` (no limit: to
// it) by instance.hpp's advance_to_sample, unchanged -- every fixed-step method (RATTLE
// included) with every projection setting (position and momentum projections,
// projection.every, the stage projection of MidpointProjection, the impetus reset,
// ensemble.lost_unconverged) and DOPRI5 -- over this lane's slice. Every decision the driver
// takes is a group collective (all_finite and max_abs on slices, the fixed-point iterations'
// and Newton's max_abs, DOPRI5's error norm summed in the whole state's order,
// ChainSlice::ordered_state_sum), so the lanes take the same steps and
// agree on losses and counters. Each lane stores its slice, lane 0 the time, step size,
// controller, step, loss and counters (after the group's last collective: the other lanes
// see them after a kernel boundary or a Group::sync()). The group leaves together: the loss
// word and the fields read below are the same on every lane.
template <class Method, class Inst, class Slice>
CHENS_HD void group_advance_soa(const Slice& sys, const Method& method, const RunParams<double>& rp, std::uint64_t* soa,
                                std::uint64_t n, std::uint64_t i, index_t k, const StepLimit& limit = StepLimit{}) {
  using Group = typename decltype(Slice::model)::Group;
  const GroupLeanFields at = group_progress<Inst>(soa, n, i);
  if (integration_at_sample<Method>(rp, at, k)) return;  // also where it is lost
  GroupStepping<typename Slice::State> g;
  g.lost = at.lost;
  g.t = at.t;
  g.step = at.step;
  g.h = soa_field<decltype(Inst::h), offsetof(Inst, h)>(soa, n, i);
  g.ctl = soa_field<decltype(Inst::ctl), offsetof(Inst, ctl)>(soa, n, i);
  g.c = soa_field<decltype(Inst::c), offsetof(Inst, c)>(soa, n, i);
  g.z = group_load_state<Slice>(soa, n, i);
  advance_to_sample(sys, method, rp, g, k, limit);
  group_store_state<Slice>(soa, n, i, g.z);
  Group::sync();  // every lane has read the instance's words before lane 0 moves them
  if (Group::rank() == 0) {
    soa_set_field<decltype(Inst::t), offsetof(Inst, t)>(soa, n, i, g.t);
    soa_set_field<decltype(Inst::h), offsetof(Inst, h)>(soa, n, i, g.h);
    soa_set_field<decltype(Inst::ctl), offsetof(Inst, ctl)>(soa, n, i, g.ctl);
    soa_set_field<decltype(Inst::step), offsetof(Inst, step)>(soa, n, i, g.step);
    soa_set_field<decltype(Inst::lost), offsetof(Inst, lost)>(soa, n, i, g.lost);
    soa_set_field<decltype(Inst::c), offsetof(Inst, c)>(soa, n, i, g.c);
  }
}

// Where an instance's advancing numerical reference (reference/numerical.hpp: a DOPRI5 run
// of its own, held in the instance) keeps its fields: byte offsets into the instance for
// soa_field, and the first word of its state.
template <class Inst>
struct GroupReferenceFields {
  using Ref = decltype(Inst::ref);
  using Run = decltype(Ref::run);
  static constexpr std::size_t on = offsetof(Inst, ref) + offsetof(Ref, on);
  static constexpr std::size_t run = offsetof(Inst, ref) + offsetof(Ref, run);
  static constexpr std::size_t t = run + offsetof(Run, t), h = run + offsetof(Run, h), ctl = run + offsetof(Run, ctl),
                               step = run + offsetof(Run, step), lost = run + offsetof(Run, lost),
                               c = run + offsetof(Run, c);
  static constexpr std::size_t z = run + offsetof(Run, z);
  static_assert(z % sizeof(std::uint64_t) == 0, "the reference's state starts a word");
  static constexpr int state_word = static_cast<int>(z / sizeof(std::uint64_t));
};

// integration_at_sample's method for a kernel that knows only whether the method is adaptive.
template <bool Adaptive>
struct StepKind {
  static constexpr bool adaptive = Adaptive;
};

// advance_reference_to_sample on a group, as a pass takes it (reference_toward_sample): once
// instance i's integration is at sample k (Adaptive: by its time, else by its step index) and
// it is not lost, its numerical reference toward sample k within `attempts` trial steps, by
// NumericalReference::advance_run over this lane's slice of the reference's state (DOPRI5 on
// the slices' Hamilton-Dirac equations, its error norm an ordered group sum, so the lanes
// take the one-thread steps). Each lane stores its slice; lane 0 the reference's time, step
// size, controller, step, loss and counters, the instance's reference counters, and the loss
// reference_failed where the reference failed (after the group's last collective: the other
// lanes see them after a kernel boundary or a Group::sync()). A no-op without a reference.
template <bool Adaptive, class Inst, class Slice>
CHENS_HD void group_reference_soa(const Slice& sys, const RunParams<double>& rp, std::uint64_t* soa, std::uint64_t n,
                                  std::uint64_t i, index_t k, index_t attempts = INT64_MAX) {
  using Ref = decltype(Inst::ref);
  if constexpr (Ref::advancing) {
    using Group = typename decltype(Slice::model)::Group;
    using F = GroupReferenceFields<Inst>;
    static_assert(std::is_same_v<typename Slice::State, typename HamiltonDirac<decltype(Slice::model)>::State>,
                  "the reference's state is laid out as the instance's");
    const GroupLeanFields at = group_progress<Inst>(soa, n, i);
    if (at.lost != int(LostReason::none) || !integration_at_sample<StepKind<Adaptive>>(rp, at, k)) return;
    if (!soa_field<decltype(Ref::on), F::on>(soa, n, i)) return;
    GroupStepping<typename Slice::State> g;
    g.lost = soa_field<decltype(F::Run::lost), F::lost>(soa, n, i);
    g.t = soa_field<decltype(F::Run::t), F::t>(soa, n, i);
    if (Ref::run_at_sample(true, g.lost, g.t, rp, k)) return;  // advance_run would take no step
    g.h = soa_field<decltype(F::Run::h), F::h>(soa, n, i);
    g.ctl = soa_field<decltype(F::Run::ctl), F::ctl>(soa, n, i);
    g.step = soa_field<decltype(F::Run::step), F::step>(soa, n, i);
    g.c = soa_field<decltype(F::Run::c), F::c>(soa, n, i);
    g.z = group_load_state<Slice, F::state_word>(soa, n, i);
    Ref::advance_run(sys.model, rp, g, k, attempts);
    group_store_state<Slice, F::state_word>(soa, n, i, g.z);
    Group::sync();  // every lane has read the words before lane 0 moves them
    if (Group::rank() == 0) {
      soa_set_field<decltype(F::Run::t), F::t>(soa, n, i, g.t);
      soa_set_field<decltype(F::Run::h), F::h>(soa, n, i, g.h);
      soa_set_field<decltype(F::Run::ctl), F::ctl>(soa, n, i, g.ctl);
      soa_set_field<decltype(F::Run::step), F::step>(soa, n, i, g.step);
      soa_set_field<decltype(F::Run::lost), F::lost>(soa, n, i, g.lost);
      soa_set_field<decltype(F::Run::c), F::c>(soa, n, i, g.c);
      constexpr std::size_t counters = offsetof(Inst, c);
      soa_set_field<std::uint64_t, counters + offsetof(Counters, reference_steps)>(soa, n, i, g.c.steps);
      soa_set_field<std::uint64_t, counters + offsetof(Counters, reference_rhs_evaluations)>(soa, n, i, g.c.rhs_evaluations);
      if (g.lost != int(LostReason::none))
        soa_set_field<decltype(Inst::lost), offsetof(Inst, lost)>(soa, n, i, int(LostReason::reference_failed));
    }
  }
}

// Instance i's reference as a thread group sees it at the sample it was last advanced to
// (measure()'s Reference: available, enabled, eval): eval reads this lane's slice of its state
// from the instance's words when asked, so that the measuring kernel holds no second state
// (at N = 256 a lane's slice of it is 32 doubles).
template <class Inst, class Slice>
struct GroupReferenceSlice {
  static constexpr bool available = decltype(Inst::ref)::advancing;
  const std::uint64_t* soa;
  std::uint64_t n, i;
  bool on;
  CHENS_HD static GroupReferenceSlice of(const std::uint64_t* soa, std::uint64_t n, std::uint64_t i) {
    GroupReferenceSlice r{soa, n, i, false};
    if constexpr (available) r.on = soa_field<decltype(decltype(Inst::ref)::on), GroupReferenceFields<Inst>::on>(soa, n, i);
    return r;
  }
  CHENS_HD bool enabled() const { return on; }
  CHENS_HD typename Slice::State eval(double) const {
    static_assert(available, "only an advancing reference has a state in the instance");
    return group_load_state<Slice, GroupReferenceFields<Inst>::state_word>(soa, n, i);
  }
};

// measure_soa on a group: instance i at sample k, its reference (where it has one) already
// advanced there (group_reference_soa). Every value measure() reports is a group collective
// (max_abs over slices, the energy's and the momenta's sums in atom order, the integration
// error's sum of squares in the whole state's order), so the lanes agree on the verdict;
// lane 0 records a loss. Every lane then calls emit(k, measured, metrics, slice, reference),
// with its slice of the state (a lost instance's frozen one) and its view of the reference,
// for the recorded rows (group_fill_recorded_row).
template <class Inst, class Slice, class Emit>
CHENS_HD CHENS_FORCEINLINE void group_measure_soa(const Slice& sys, const RunParams<double>& rp, std::uint64_t* soa,
                                                  std::uint64_t n, std::uint64_t i, index_t k, Emit&& emit) {
  using Group = typename decltype(Slice::model)::Group;
  const typename Slice::State z = group_load_state<Slice>(soa, n, i);
  const GroupReferenceSlice<Inst, Slice> ref = GroupReferenceSlice<Inst, Slice>::of(soa, n, i);
  Metrics<double> m{};
  bool ok = false;
  if (soa_field<decltype(Inst::lost), offsetof(Inst, lost)>(soa, n, i) == int(LostReason::none)) {
    const double energy0 = soa_field<decltype(Inst::energy0), offsetof(Inst, energy0)>(soa, n, i);
    const Vec<double, 3> integrals0 = soa_field<decltype(Inst::integrals0), offsetof(Inst, integrals0)>(soa, n, i);
    const bool finite = measure(sys, z, energy0, integrals0, ref, rp.reference_time(k), m);
    const int lost = sample_verdict(rp, finite, m, energy0);
    ok = lost == int(LostReason::none);
    Group::sync();  // every lane has read the loss word
    if (!ok && Group::rank() == 0) soa_set_field<decltype(Inst::lost), offsetof(Inst, lost)>(soa, n, i, lost);
  }
  emit(k, ok, m, z, ref);
}

// fill_recorded_row (host/backends/instance_records.hpp's layout: the physical state, the
// reference's, the metrics, whether measured) from a group: each lane writes its slices of
// the physical state (impetus-striction's is a group computation: every lane calls this) and
// of the reference's (zeros without one), lane 0 the rest.
template <class Slice, class Inst>
CHENS_HD CHENS_FORCEINLINE void group_fill_recorded_row(const Slice& sys, const typename Slice::State& z,
                                                        const GroupReferenceSlice<Inst, Slice>& ref, bool measured,
                                                        const Metrics<double>& m, double* row) {
  using Model = decltype(Slice::model);
  constexpr int S = Model::whole_state_size;
  const typename Slice::State phys = sys.physical(z);
  for (int c = 0; c < Slice::State::size; ++c) {
    row[Model::whole_component(c)] = phys[c];
    row[S + Model::whole_component(c)] = 0.0;
  }
  if constexpr (GroupReferenceSlice<Inst, Slice>::available) {
    if (ref.enabled()) {  // advanced to the sample by group_reference_soa
      const typename Slice::State r = ref.eval(0.0);
      for (int c = 0; c < Slice::State::size; ++c) row[S + Model::whole_component(c)] = r[c];
    }
  }
  if (Model::Group::rank() == 0) {
    for (int c = 0; c < metric_count; ++c) row[2 * S + c] = measured ? m.v[c] : 0.0;
    row[2 * S + metric_count] = measured ? 1.0 : 0.0;
  }
}

// Whether instance i and its reference are at sample k (or lost): advance_partial_soa's
// answer (advance_toward_sample's) once the group path's stepping (lean or general) and
// group_reference_soa have run.
template <class Method, class Inst>
CHENS_HD CHENS_FORCEINLINE bool group_at_sample_soa(const RunParams<double>& rp, const std::uint64_t* soa, std::uint64_t n,
                                                    std::uint64_t i, index_t k) {
  const GroupLeanFields f = group_progress<Inst>(soa, n, i);
  if (!integration_at_sample<Method>(rp, f, k)) return false;
  using Ref = decltype(Inst::ref);
  if constexpr (Ref::advancing) {
    using F = GroupReferenceFields<Inst>;
    if (f.lost != int(LostReason::none)) return true;
    return Ref::run_at_sample(soa_field<decltype(Ref::on), F::on>(soa, n, i),
                              soa_field<decltype(F::Run::lost), F::lost>(soa, n, i),
                              soa_field<decltype(F::Run::t), F::t>(soa, n, i), rp, k);
  }
  return true;
}

}  // namespace chens
