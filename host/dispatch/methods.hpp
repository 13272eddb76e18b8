// Runtime names -> compile-time types. Each visitor calls f with the one object that
// the run needs; the caller's template is instantiated once per alternative.
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

}  // namespace chens
