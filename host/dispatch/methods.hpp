// Runtime names -> compile-time types. Each visitor calls f with the one object that
// the run needs (a method, a formulation bound to its model); the caller's template is
// instantiated once per alternative.
#pragma once

#include <chens/formulations/extended_hamiltonian.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/impetus_modified.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/formulations/total_hamiltonian.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>

#include <chens/models/pendulum.hpp>

#include "study/study.hpp"

namespace chens {

template <class Real, class F>
decltype(auto) with_method(MethodId id, const RunParams<Real>& rp, F&& f) {
  switch (id) {
    case MethodId::euler: return f(ExplicitRk<EulerTableau>{});
    case MethodId::rk2: return f(ExplicitRk<Rk2Tableau>{});
    case MethodId::rk4: return f(ExplicitRk<Rk4Tableau>{});
    case MethodId::dopri5: return f(Dopri5<Real>{rp.rtol, rp.atol});
    case MethodId::midpoint: return f(ImplicitRk<Gauss1Tableau, Real>{rp.iteration_tol, rp.max_iterations});
    case MethodId::gauss2: return f(ImplicitRk<Gauss2Tableau, Real>{rp.iteration_tol, rp.max_iterations});
  }
  throw StudyError("unknown integrator.method");
}

template <class Real, class F>
decltype(auto) with_pendulum_formulation(FormulationId id, const Pendulum<Real>& model, F&& f) {
  using M = Pendulum<Real>;
  switch (id) {
    case FormulationId::naive: return f(Naive<M>{model});
    case FormulationId::total: return f(TotalHamiltonian<M>{model});
    case FormulationId::extended: return f(ExtendedHamiltonian<M>{model});
    case FormulationId::dirac: return f(HamiltonDirac<M>{model});
    case FormulationId::impetus: return f(ImpetusStriction<M>{model});
    case FormulationId::impetus_modified: return f(ImpetusModified<M>{model});
  }
  throw StudyError("unknown integrator.formulation");
}

}  // namespace chens
