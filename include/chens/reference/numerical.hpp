// Numerical reference solution for models without a closed form (chains): the same
// instance's physical initial data integrated alongside it by DOPRI5 with
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
#include <chens/integrators/dopri5.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

template <class Model>
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
    r.run.ref = NoReference<Real, State::size>{};
    r.run.step = 0;
    r.run.lost = int(LostReason::none);
    r.run.c = Counters{};
    return r;
  }

  // Brings the reference to sample time k of rp (a no-op when it is there already).
  CHENS_HD void advance(const Model& model, const RunParams<Real>& rp, index_t k, index_t attempts = INT64_MAX) {
    if (!on || run.lost != int(LostReason::none)) return;
    RunParams<Real> rr = rp;
    rr.rtol = rr.atol = rp.reference_tol;
    rr.project_momentum = rr.project_position = false;
    rr.impetus_reset = Real(0);
    const HamiltonDirac<Model> sys{model};
    advance_adaptive_to_sample(sys, Dopri5<Real>{rr.rtol, rr.atol}, rr, run, k, StepLimit{INT64_MAX, attempts});
  }
  // Whether advance has brought it to sample time k (a failed reference counts as there).
  CHENS_HD bool at_sample(const RunParams<Real>& rp, index_t k) const {
    return !on || run.lost != int(LostReason::none) || !(run.t < rp.sample_time(k));
  }
  CHENS_HD bool failed() const { return on && run.lost != int(LostReason::none); }

  // The reference state at the sample time it was last advanced to.
  CHENS_HD State eval(Real) const { return run.z; }
};

}  // namespace chens
