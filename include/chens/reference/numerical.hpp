// Numerical reference solution for models without a closed form (chains): the same
// instance's physical initial data integrated alongside it by an embedded pair, DOPRI5 by
// default (Pair: output.reference_method, issue 44: DOP853 or Verner's 9(8) reach the same
// tolerance with a fifth of DOPRI5's right-hand sides at 1e-12, docs/numerics.md), with
// rtol = atol = RunParams::reference_tol (1e-12 by default) on the Hamilton-Dirac
// equations, which keep phi and psi as strong invariants (002 eq. 47), without
// projections. It is advanced to each sample time before the instance is measured, by
// the same adaptive driver that integrates instances (ensemble/instance.hpp), so its
// cost is that of one more tight-tolerance instance. Its work is counted in
// Counters::reference_steps / reference_rhs_evaluations; a reference that fails (non-
// finite, step-size underflow, max_steps) marks the instance lost with
// LostReason::reference_failed rather than reporting a meaningless error.
#pragma once

#include <chens/config.hpp>
#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/instance.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/integrators/dop853.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/vern9.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

template <class Model, template <class> class Pair = Dopri5>
struct NumericalReference {
  using Real = typename Model::Real;
  using State = typename Model::State;
  using Run = Instance<Real, State::size, NoReference<Real, State::size>>;
  static constexpr bool available = true;
  static constexpr bool advancing = true;
  bool projected = false;  // starts from the instance's own initial data, never moved
  bool on = false;
  Run run;  // the reference integration: state, time, step size, controller, counters

  CHENS_HD bool enabled() const { return on; }

  template <class RP>
  CHENS_HD static NumericalReference make(const Model&, const State& phys, const RP& rp) {
    NumericalReference r;
    r.on = rp.reference;
    r.run.z = phys;
    r.run.t = Real(0);
    r.run.h = rp.h;
    r.run.ctl = Dopri5Controller<Real>{};
    r.run.energy0 = Real(0);
    r.run.integrals0 = Vec<Real, 3>::zero();
    r.run.passage = Passage::none();
    r.run.ref = NoReference<Real, State::size>{};
    r.run.step = 0;
    r.run.lost = int(LostReason::none);
    r.run.c = Counters{};
    return r;
  }

  // The reference's own run parameters: the pair at rtol = atol = reference_tol, nothing
  // projected or reset.
  CHENS_HD static RunParams<Real> params(const RunParams<Real>& rp) {
    RunParams<Real> rr = rp;
    rr.rtol = rr.atol = rp.reference_tol;
    rr.project_momentum = rr.project_position = false;
    rr.impetus_reset = Real(0);
    rr.passage = PassageLevels{};  // the reference is the yardstick, not a subject of first passage
    return rr;
  }
  // Brings a reference run to sample time k of rp within `attempts` trial steps: this
  // reference's own (advance), or a thread group's slice of it (ensemble/group_segment.hpp,
  // with a ChainSlice for the model and the lane's slice of the run's state).
  template <class RunModel, class RunFields>
  CHENS_HD static void advance_run(const RunModel& model, const RunParams<Real>& rp, RunFields& r, index_t k,
                                   index_t attempts) {
    const RunParams<Real> rr = params(rp);
    const HamiltonDirac<RunModel> sys{model};
    advance_adaptive_to_sample(sys, Pair<Real>{rr.rtol, rr.atol}, rr, r, k, StepLimit{INT64_MAX, attempts});
  }

  // Brings the reference to sample time k of rp (a no-op when it is there already).
  CHENS_HD void advance(const Model& model, const RunParams<Real>& rp, index_t k, index_t attempts = INT64_MAX) {
    if (!on || run.lost != int(LostReason::none)) return;
    advance_run(model, rp, run, k, attempts);
  }
  // Whether a reference (on, with the run's loss and time) is at sample time k of rp (a
  // failed reference counts as there).
  CHENS_HD static bool run_at_sample(bool on, int lost, Real t, const RunParams<Real>& rp, index_t k) {
    return !on || lost != int(LostReason::none) || !(t < rp.sample_time(k));
  }
  // Whether advance has brought it to sample time k.
  CHENS_HD bool at_sample(const RunParams<Real>& rp, index_t k) const { return run_at_sample(on, run.lost, run.t, rp, k); }
  CHENS_HD bool failed() const { return on && run.lost != int(LostReason::none); }

  // The reference state at the sample time it was last advanced to.
  CHENS_HD State eval(Real) const { return run.z; }
};

// The reference Reference with its pair replaced by Pair (output.reference_method): a
// NumericalReference's; a closed form's (PendulumExact) or none (NoReference) as it is.
template <class Reference, template <class> class Pair>
struct WithReferencePair {
  using type = Reference;
};
template <class Model, template <class> class Old, template <class> class Pair>
struct WithReferencePair<NumericalReference<Model, Old>, Pair> {
  using type = NumericalReference<Model, Pair>;
};

}  // namespace chens
