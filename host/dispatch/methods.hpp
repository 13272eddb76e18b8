// Runtime names -> compile-time types. Each visitor calls f with the one object that
// the run needs (a method, a formulation bound to its model); the caller's template is
// instantiated once per alternative.
#pragma once

#include <chens/formulations/constrained.hpp>
#include <chens/formulations/extended_hamiltonian.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/impetus_modified.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/formulations/total_hamiltonian.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/rattle.hpp>
#include <chens/integrators/tableaus.hpp>

#include <string>
#include <type_traits>

#include <chens/models/pendulum.hpp>

#include "study/study.hpp"

namespace chens {

// Calls f with the integrator of `id` for System. RATTLE pairs with the constrained
// equations only, every other method with an underlying ODE only (resolve() has already
// told the user; reaching a mismatch here is a bug).
template <class System, class Real, class F>
decltype(auto) with_method(MethodId id, const RunParams<Real>& rp, F&& f) {
  if constexpr (System::id == FormulationId::constrained) {
    if (id == MethodId::rattle) return f(Rattle<Real>{rp.iteration_tol, rp.max_iterations});
    throw StudyError(std::string("integrator.method = \"") + method_name(id) +
                     "\" cannot integrate the constrained equations; use \"rattle\"");
  } else {
    switch (id) {
      case MethodId::euler: return f(ExplicitRk<EulerTableau>{});
      case MethodId::rk2: return f(ExplicitRk<Rk2Tableau>{});
      case MethodId::rk4: return f(ExplicitRk<Rk4Tableau>{});
      case MethodId::dopri5: return f(Dopri5<Real>{rp.rtol, rp.atol});
      case MethodId::midpoint: return f(ImplicitRk<Gauss1Tableau, Real>{rp.iteration_tol, rp.max_iterations});
      case MethodId::gauss2: return f(ImplicitRk<Gauss2Tableau, Real>{rp.iteration_tol, rp.max_iterations});
      case MethodId::rattle: break;
    }
    throw StudyError(std::string("integrator.method = \"") + method_name(id) +
                     "\" does not integrate the formulation \"" + formulation_name(System::id) + "\"");
  }
}

// The formulation template of each FormulationId.
template <FormulationId F>
struct FormulationOf;
template <> struct FormulationOf<FormulationId::naive> { template <class M> using type = Naive<M>; };
template <> struct FormulationOf<FormulationId::total> { template <class M> using type = TotalHamiltonian<M>; };
template <> struct FormulationOf<FormulationId::extended> { template <class M> using type = ExtendedHamiltonian<M>; };
template <> struct FormulationOf<FormulationId::dirac> { template <class M> using type = HamiltonDirac<M>; };
template <> struct FormulationOf<FormulationId::impetus> { template <class M> using type = ImpetusStriction<M>; };
template <> struct FormulationOf<FormulationId::impetus_modified> { template <class M> using type = ImpetusModified<M>; };
template <> struct FormulationOf<FormulationId::constrained> { template <class M> using type = Constrained<M>; };

// Calls f(std::integral_constant<FormulationId, id>{}): the one switch from a runtime
// formulation to a compile-time one.
template <class F>
decltype(auto) with_formulation_id(FormulationId id, F&& f) {
  using I = FormulationId;
  switch (id) {
    case I::naive: return f(std::integral_constant<I, I::naive>{});
    case I::total: return f(std::integral_constant<I, I::total>{});
    case I::extended: return f(std::integral_constant<I, I::extended>{});
    case I::dirac: return f(std::integral_constant<I, I::dirac>{});
    case I::impetus: return f(std::integral_constant<I, I::impetus>{});
    case I::impetus_modified: return f(std::integral_constant<I, I::impetus_modified>{});
    case I::constrained: return f(std::integral_constant<I, I::constrained>{});
  }
  throw StudyError("unknown integrator.formulation");
}

// Calls f with the formulation of `id` bound to `model`.
template <class Real, class F>
decltype(auto) with_pendulum_formulation(FormulationId id, const Pendulum<Real>& model, F&& f) {
  return with_formulation_id(id, [&](auto fid) -> decltype(auto) {
    return f(typename FormulationOf<decltype(fid)::value>::template type<Pendulum<Real>>{model});
  });
}

}  // namespace chens
