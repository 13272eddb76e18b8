// One ensemble instance and the per-instance driver: the code both backends run.
// The CPU backend (host/backends/cpu) calls these functions from an OpenMP loop over
// instances; the CUDA kernels (kernels/) call the very same functions from one thread
// per instance. Nothing here allocates, throws or knows which backend runs it.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <chens/config.hpp>
#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/counters.hpp>
#include <chens/ensemble/passage.hpp>
#include <chens/ensemble/passage_location.hpp>
#include <chens/ensemble/perturbation.hpp>
#include <chens/ensemble/run_params.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/geometry/tangent_system.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/status.hpp>
#include <chens/linalg/vec.hpp>
#include <chens/projections/policy.hpp>

namespace chens {

// Fields in three groups, in this order (the GPU keeps only what stepping needs in
// registers, ensemble/soa_segment.hpp): what stepping reads and writes; the work
// counters; what only the diagnostics read (and an advancing reference writes).
template <class Real, int S, class Reference>
struct Instance {
  Vec<Real, S> z;              // state in the formulation's variables
  Real t;                      // time of z
  Real h;                      // adaptive: next trial step
  Dopri5Controller<Real> ctl;  // adaptive: controller memory
  index_t step;                // fixed-step: steps taken
  int lost;                    // LostReason
  Counters c;
  double energy0;             // H of the initial physical state (diagnostics are in double)
  Vec<double, 3> integrals0;  // (P_x, P_y, L_z) of the initial physical state, or zeros
  Passage passage;            // first-passage times (output.first_passage, passage.hpp)
  Reference ref;              // reference solution of this instance
};

template <class System, class Reference>
using InstanceOf = Instance<typename System::Real, System::State::size, Reference>;

template <class System, class Reference>
CHENS_HD InstanceOf<System, Reference> make_instance(const System& sys, const ModelStateOf<System>& z0,
                                                     typename System::Real perturbation, std::uint64_t seed,
                                                     std::uint64_t index, const RunParams<typename System::Real>& rp) {
  InstanceOf<System, Reference> in;
  bool on_level_set = true;
  in.z = initial_augmented_state(sys, perturbed_initial_state(sys.model, z0, perturbation, seed, index, &on_level_set,
                                                              rp.perturbation_shape));
  in.t = typename System::Real(0);
  in.h = rp.h;
  in.ctl = Dopri5Controller<typename System::Real>{};
  // Diagnostics and references work in double (metrics.hpp); for double runs these are copies.
  const auto model = sys.model.template rebound<double>();
  const auto phys = vec_cast<double>(sys.physical(in.z));
  in.energy0 = model.energy(phys);
  in.integrals0 = momentum_integrals_of(model, phys);
  in.passage = Passage::none();
  if constexpr (decltype(in.ref)::advancing) {
    in.ref = Reference::make(sys.model, sys.physical(in.z), rp);  // numerical references run in Real
  } else {
    in.ref = Reference::make(model, phys, rp);
  }
  in.step = 0;
  in.lost = !all_finite(in.z) ? int(LostReason::non_finite)
            : !on_level_set   ? int(LostReason::initial_projection)
                              : int(LostReason::none);
  in.c = Counters{};
  return in;
}

// Where an advance may stop short of its sample time: the stop points between sample
// times that let a long sample interval honour an interrupt or a checkpoint within
// seconds (issue 17, docs/checkpoints.md). Stopping short and calling again changes no
// result and no counter: a fixed-step instance goes on from its step index, an adaptive
// one from its time, step size and controller memory (its first stage, recomputed on
// re-entry, is f at the same state and is not counted twice, see in.step below).
struct StepLimit {
  index_t until_step = INT64_MAX;  // fixed-step methods: stop at this step index
  index_t attempts = INT64_MAX;    // adaptive methods (and numerical references): at most this many trial steps
};

// Fixed-step methods: advance B instances, all at the same step, to sample time k in
// lockstep (B = 1 on the GPU and for single instances; the CPU backend uses B = 4 for
// methods with lanes). Per instance the arithmetic, projections, counters and lost-
// instance rules do not depend on B. A lost instance stays frozen at its last finite state.
template <int B, class System, class Method, class Inst>
CHENS_HD void advance_fixed_to_sample(const System& sys, const Method& method, const RunParams<typename System::Real>& rp,
                                      Inst* in, index_t k, const StepLimit& limit = StepLimit{}) {
  using Real = typename System::Real;
  using State = typename System::State;
  if constexpr (B > 1) {
    bool together = true;
    for (int j = 0; j < B; ++j) together = together && in[j].lost == int(LostReason::none) && in[j].step == in[0].step;
    if (!together) {
      for (int j = 0; j < B; ++j) advance_fixed_to_sample<1>(sys, method, rp, &in[j], k, limit);
      return;
    }
  }
  if (in[0].lost != int(LostReason::none)) return;  // B = 1; for B > 1 all are live here
  const index_t target = rp.sample_step(k) < limit.until_step ? rp.sample_step(k) : limit.until_step;
  State z[B];
  bool alive[B];
  index_t step[B];
  for (int j = 0; j < B; ++j) {
    z[j] = in[j].z;
    alive[j] = true;
    step[j] = in[j].step;
  }
  int live = B;
  for (index_t s = in[0].step; s < target && live > 0; ++s) {
    const Real h = (s + 1 == rp.total_steps) ? rp.last_h : rp.h;
    State zn[B];
    StepStatus st[B];
    if constexpr (Method::has_lanes) {
      method.template step_lanes<B>(sys, z, h, zn, st);
    } else {
      for (int j = 0; j < B; ++j) st[j] = method.step(sys, z[j], h, zn[j]);
    }
    for (int j = 0; j < B; ++j) {
      if (!alive[j]) continue;
      Counters& c = in[j].c;
      c.rhs_evaluations += static_cast<std::uint64_t>(st[j].rhs_evals);
      c.iterations += static_cast<std::uint64_t>(st[j].iterations);
      if (!st[j].converged) c.unconverged_steps += 1;
      const std::uint64_t unconverged_projections = c.unconverged_position_projections;
      const bool project_now = rp.projects_after(static_cast<std::uint64_t>(s + 1));
      if (!st[j].finite || (project_now && apply_projections(sys, rp, zn[j], c) && !all_finite(zn[j]))) {
        in[j].lost = int(LostReason::non_finite);
        alive[j] = false;
        live -= 1;
        continue;
      }
      // ensemble.lost_unconverged: frozen at the last state whose iterations converged.
      if (rp.lost_unconverged && (!st[j].converged || c.unconverged_position_projections != unconverged_projections)) {
        in[j].lost = int(LostReason::unconverged);
        alive[j] = false;
        live -= 1;
        continue;
      }
      if constexpr (passage_checked_in_v<Real, Inst>) {
        if (rp.passage.per_step)
          note_step_crossings(sys, rp.passage, z[j], zn[j], h, rp.step_time_double(s), rp.step_time_double(s + 1),
                              in[j].energy0, in[j].integrals0, in[j].passage);
      }
      z[j] = zn[j];
      step[j] = s + 1;
      c.steps += 1;
      if constexpr (has_tangents_v<System>) {
        if (rp.lyapunov_every > 0 && (s + 1) % rp.lyapunov_every == 0) sys.renormalise(z[j]);
      }
    }
  }
  for (int j = 0; j < B; ++j) {
    in[j].z = z[j];
    in[j].step = step[j];
    in[j].t = rp.step_time(step[j]);
  }
}

// The right-hand sides one attempt of an adaptive method costs: its own, and for a method
// with a Jacobian per attempt (Rodas5P) the Jacobian counted as N of them, N = the state's
// size: its forward-mode evaluation carries N derivative components, the work of the N
// right-hand sides a finite-difference Jacobian takes (docs/numerics.md, "Rodas5P").
template <class Method, class = void>
struct jacobians_per_attempt_of {
  static constexpr int value = 0;
};
template <class Method>
struct jacobians_per_attempt_of<Method, std::void_t<decltype(Method::jacobians_per_attempt)>> {
  static constexpr int value = Method::jacobians_per_attempt;
};
template <class Method, class State>
inline constexpr int attempt_rhs_cost = Method::rhs_per_attempt + (jacobians_per_attempt_of<Method>::value * State::size);

// Adaptive methods (dopri5, dop853, vern9, rodas5p): advance one instance to sample time k, landing on it exactly.
template <class System, class Method, class Inst>
CHENS_HD void advance_adaptive_to_sample(const System& sys, const Method& method, const RunParams<typename System::Real>& rp,
                                         Inst& in, index_t k, const StepLimit& limit = StepLimit{}) {
  using Real = typename System::Real;
  using State = typename System::State;
  using std::fabs;
  if (in.lost != int(LostReason::none)) return;
  const Real t_target = rp.sample_time(k);
  if (!(in.t < t_target)) return;
  State k1;
  eval_rhs(sys, in.z, k1);
  // in.step (the step index of fixed-step methods) is 1 while an adaptive instance is inside
  // a sample interval, after a StepLimit stopped it: its first stage was counted on entry.
  if (in.step == 0) in.c.rhs_evaluations += 1;
  in.step = 1;
  index_t tried = 0;
  while (in.t < t_target) {
    if (tried >= limit.attempts) return;
    tried += 1;
    if (in.c.steps + in.c.rejected_steps >= static_cast<std::uint64_t>(rp.max_steps)) {
      in.lost = int(LostReason::max_steps);
      return;
    }
    Real h = in.h;
    bool clamped = false;
    if (in.t + Real(1.01) * h >= t_target) {  // as Hairer's DOPRI5: no sliver of a last step
      h = t_target - in.t;
      clamped = true;
    }
    if (!(h > Real(16) * machine_epsilon<Real>() * fabs(t_target))) {
      in.lost = int(LostReason::step_size_underflow);
      return;
    }
    State zn, k7;
    const Real err = method.attempt(sys, in.z, k1, h, zn, k7);
    in.c.rhs_evaluations += attempt_rhs_cost<Method, State>;
    if (err <= Real(1) && all_finite(zn)) {
      const Real hn = method.next_step(in.ctl, err, h, true);
      [[maybe_unused]] const Real t_before = in.t;
      in.t = clamped ? t_target : in.t + h;
      in.c.steps += 1;
      const std::uint64_t unconverged_projections = in.c.unconverged_position_projections;
      if (rp.projects_after(in.c.steps) && apply_projections(sys, rp, zn, in.c)) {
        if (!all_finite(zn)) {
          in.lost = int(LostReason::non_finite);
          return;
        }
        if (rp.lost_unconverged && in.c.unconverged_position_projections != unconverged_projections) {
          in.lost = int(LostReason::unconverged);  // the state before the step is kept, as in the fixed-step path
          return;
        }
        eval_rhs(sys, zn, k7);
        in.c.rhs_evaluations += 1;
      }
      // A step that lands on the sample time takes the sample's time in double (as the
      // sample's own check would), not the Real time widened. The step's interpolant: k1 and
      // k7 are its end derivatives (k7 re-evaluated after a projection), and the method's
      // continuous extension adds its terms of higher order (passage_location.hpp).
      if constexpr (passage_checked_in_v<Real, Inst>) {
        if (rp.passage.per_step) {
          constexpr int terms = Method::dense_terms > 0 ? Method::dense_terms : 1;
          const auto ends = [&](const System& s, StepInterpolant<System, terms>& it, Real hs) {
            for (int c = 0; c < State::size; ++c) {
              it.hf0[c] = hs * k1[c];
              it.hf1[c] = hs * k7[c];
            }
            if constexpr (Method::dense_terms > 0) {
              method.dense_correction(s, in.z, k1, hs, it.correction);
              it.terms = Method::dense_terms;
            }
          };
          note_step_crossings<terms>(sys, rp.passage, in.z, zn, h, static_cast<double>(t_before),
                                     clamped ? rp.reference_time(k) : static_cast<double>(in.t), in.energy0, in.integrals0,
                                     in.passage, ends);
        }
      }
      in.z = zn;
      k1 = k7;
      in.h = (clamped && in.h > hn) ? in.h : hn;
    } else {
      in.c.rejected_steps += 1;
      if (err == err && all_finite(zn)) {
        in.h = method.next_step(in.ctl, err, h, false);
      } else {
        in.ctl.last_rejected = true;
        in.h = h * Real(0.1);
      }
    }
  }
  in.step = 0;
}

// Advance one instance to sample time k (k = 1..rp.samples).
template <class System, class Method, class Inst>
CHENS_HD void advance_to_sample(const System& sys, const Method& method, const RunParams<typename System::Real>& rp,
                                Inst& in, index_t k, const StepLimit& limit = StepLimit{}) {
  if constexpr (Method::adaptive) {
    advance_adaptive_to_sample(sys, method, rp, in, k, limit);
  } else {
    advance_fixed_to_sample<1>(sys, method, rp, &in, k, limit);
  }
}

// Whether the instance's integration is at sample time k (or lost).
template <class Method, class Inst, class Real>
CHENS_HD bool integration_at_sample(const RunParams<Real>& rp, const Inst& in, index_t k) {
  if (in.lost != int(LostReason::none)) return true;
  if constexpr (Method::adaptive) {
    return !(in.t < rp.sample_time(k));
  } else {
    return in.step >= rp.sample_step(k);
  }
}

// Brings an instance's numerical reference (if it has one) to sample time k.
template <class System, class Inst>
CHENS_HD void advance_reference_to_sample(const System& sys, const RunParams<typename System::Real>& rp, Inst& in, index_t k,
                                          index_t attempts = INT64_MAX) {
  if constexpr (decltype(in.ref)::advancing) {
    if (in.lost != int(LostReason::none) || !in.ref.enabled()) return;
    in.ref.advance(sys.model, rp, k, attempts);
    in.c.reference_steps = in.ref.run.c.steps;
    in.c.reference_rhs_evaluations = in.ref.run.c.rhs_evaluations;
    if (in.ref.failed()) in.lost = int(LostReason::reference_failed);
  }
}

// The reference's part of a pass, once the instance's integration is at sample k (or lost).
template <class System, class Inst>
CHENS_HD bool reference_toward_sample(const System& sys, const RunParams<typename System::Real>& rp, Inst& in, index_t k,
                                      const StepLimit& limit) {
  if constexpr (decltype(in.ref)::advancing) {
    if (in.lost != int(LostReason::none) || !in.ref.enabled()) return true;
    advance_reference_to_sample(sys, rp, in, k, limit.attempts);
    return in.lost != int(LostReason::none) || in.ref.at_sample(rp, k);
  }
  return true;
}

// A pass between stop points (issue 17): the instance toward sample k within `limit`, then
// its numerical reference, in the order advance_to_sample and measure_instance take them
// (the reference moves only once the instance is at the sample and not lost), so that
// where an instance is lost, and every counter, do not depend on the stop points. True
// when both are at sample k; measuring it then finishes the sample as without stops.
template <class System, class Method, class Inst>
CHENS_HD bool advance_toward_sample(const System& sys, const Method& method, const RunParams<typename System::Real>& rp,
                                    Inst& in, index_t k, const StepLimit& limit) {
  if (!integration_at_sample<Method>(rp, in, k)) {
    advance_to_sample(sys, method, rp, in, k, limit);
    if (!integration_at_sample<Method>(rp, in, k)) return false;
  }
  return reference_toward_sample(sys, rp, in, k, limit);
}


// RunParams::lost_diverged's rule: errors beyond `bound` (the energy error beyond bound times
// max(1, |H0|), so that heavy chains are judged relative to their own energy).
CHENS_HD inline bool diverged(const Metrics<double>& m, double energy0, double bound) {
  const double e_scale = energy0 > 1.0 ? energy0 : (energy0 < -1.0 ? -energy0 : 1.0);
  if (m.v[int(MetricId::energy_error)] > bound * e_scale) return true;
  const MetricId ids[5] = {MetricId::integration_error, MetricId::phi, MetricId::psi, MetricId::linear_momentum_error,
                           MetricId::angular_momentum_error};
  bool over = false;
  for (int c = 0; c < 5; ++c) over = over || m.v[int(ids[c])] > bound;
  return over;
}

// The loss rules at a sample, from what measure() returned (finite: every reported value
// finite): the LostReason the instance gets, LostReason::none when it stays live. Not
// finite, so that statistics stay finite; a constraint residual beyond
// RunParams::lost_residual; errors beyond RunParams::lost_diverged (diverged()). One rule
// for measure_instance and for a thread group's measurement (ensemble/group_segment.hpp).
template <class Real>
CHENS_HD int sample_verdict(const RunParams<Real>& rp, bool finite, const Metrics<double>& m, double energy0) {
  if (!finite) return int(LostReason::non_finite);
  if (rp.lost_residual > 0.0 && (m.v[int(MetricId::phi)] > rp.lost_residual || m.v[int(MetricId::psi)] > rp.lost_residual))
    return int(LostReason::residual_bound);
  if (rp.lost_diverged > 0.0 && diverged(m, energy0, rp.lost_diverged)) return int(LostReason::diverged);
  return int(LostReason::none);
}

// Diagnostics of one instance at sample k; marks the instance lost (and returns false)
// by sample_verdict's rules.
// With output's [first_passage], the sample's crossings (every metric, passage.hpp) are
// noted, and the loss at the first sample that finds the instance lost (on the CPU backend:
// passage_checked_in_v).
template <class System, class Inst>
CHENS_HD bool measure_instance(const System& sys, const RunParams<typename System::Real>& rp, Inst& in, index_t k,
                               Metrics<double>& out) {
  constexpr bool checked = passage_checked_in_v<typename System::Real, Inst>;
  advance_reference_to_sample(sys, rp, in, k);
  const double t = rp.reference_time(k);
  if (in.lost != int(LostReason::none)) {
    if constexpr (checked) {
      if (rp.passage.any()) note_lost(t, in.passage);
    }
    return false;
  }
  const bool finite = measure(sys, in.z, in.energy0, in.integrals0, in.ref, t, out);
  in.lost = sample_verdict(rp, finite, out, in.energy0);
  if constexpr (checked) {
    if (rp.passage.any()) {
      note_crossings(rp.passage, out, t, false, in.passage);
      if (in.lost != int(LostReason::none)) note_lost(t, in.passage);
    }
  }
  return in.lost == int(LostReason::none);
}

}  // namespace chens
