// Runtime names -> compile-time types. Each visitor calls f with the one object that
// the run needs (a method, a formulation bound to its model); the caller's template is
// instantiated once per alternative. resolve() refuses every combination a visitor cannot
// serve, with the message a user reads (StudyError, exit 2); reaching a refusal here is a
// bug, so they throw std::logic_error. Nothing of host/study: system units include this.
#pragma once

#include <chens/formulations/baumgarte.hpp>
#include <chens/formulations/constrained.hpp>
#include <chens/formulations/extended_hamiltonian.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/impetus_modified.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/formulations/penalty.hpp>
#include <chens/formulations/total_hamiltonian.hpp>
#include <chens/integrators/dop853.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/lobatto_iiia_iiib.hpp>
#include <chens/integrators/midpoint_projection.hpp>
#include <chens/integrators/rattle.hpp>
#include <chens/integrators/rattle_composition.hpp>
#include <chens/integrators/rodas5p.hpp>
#include <chens/integrators/stormer_verlet.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/integrators/vern9.hpp>
#include <chens/reference/numerical.hpp>
#include <chens/geometry/tangent_system.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "backends/engine.hpp"
#include "dispatch/method_id.hpp"
#include "dispatch/system_args.hpp"
#if defined(__CUDACC__)
#include <chens/ensemble/group_segment.hpp>  // the CUDA engine's (kernels/cuda_engine.cuh) chains on thread groups
#endif

namespace chens {

// Whether the engine steps System a lane's slice at a time (the CUDA engine's chains on thread
// groups, ensemble/group_segment.hpp): Rodas5P, whose W couples every component, is not made
// for that (its states are Vec<Real, N>).
template <class System>
#if defined(__CUDACC__)
inline constexpr bool rodas5p_on_slices = chain_group_system_v<System>;
#else
inline constexpr bool rodas5p_on_slices = false;
#endif

// Calls f with the explicit fixed-step method of id, if Methods (dispatch/method_id.hpp)
// holds it: the methods of float runs, and three of double runs.
template <MethodMask Methods = all_methods, class F>
std::unique_ptr<Engine> with_explicit_method(MethodId id, F&& f) {
  switch (id) {
    case MethodId::euler:
      if constexpr (has_method(Methods, MethodId::euler)) return f(ExplicitRk<EulerTableau>{});
      break;
    case MethodId::rk2:
      if constexpr (has_method(Methods, MethodId::rk2)) return f(ExplicitRk<Rk2Tableau>{});
      break;
    case MethodId::rk4:
      if constexpr (has_method(Methods, MethodId::rk4)) return f(ExplicitRk<Rk4Tableau>{});
      break;
    default: break;
  }
  throw std::logic_error(std::string("integrator.method = \"") + method_name(id) + "\" is not instantiated here");
}

// Calls f with the integrator of `id` for System, if Methods holds it (the systems list's
// units hold every method, a unit compiled on first use its run's, a user model's unit
// chens_add_model's METHODS). RATTLE, its compositions and the Lobatto IIIA-IIIB pair go with
// the constrained equations only (the four compositions are one type, their scheme a value),
// every other method with an underlying ODE only; float runs have the explicit fixed-step
// methods (float's resolution is above the implicit methods' and the adaptive pairs'
// tolerances). The adaptive pairs of high order (dop853, vern9), Rodas5P and lobatto3 are in no
// unit of the list (first_use_methods): a run of one compiles its system on first use for it
// alone. resolve()
// has already told the user; reaching a mismatch here is a bug.
template <class System, MethodMask Methods = all_methods, class Real, class F>
std::unique_ptr<Engine> with_method(MethodId id, const RunParams<Real>& rp, F&& f) {
  if constexpr (System::id == FormulationId::constrained) {
    [[maybe_unused]] const Rattle<Real> rattle{rp.iteration_tol, rp.max_iterations};  // none in a unit without it
    if constexpr (has_method(Methods, MethodId::rattle))
      if (id == MethodId::rattle) return f(rattle);
    if constexpr (has_method(Methods, MethodId::lobatto3))
      if (id == MethodId::lobatto3) return f(LobattoIIIAB3<Real>{rp.iteration_tol, rp.max_iterations});
    if constexpr ((Methods & constrained_methods & ~method_bit(MethodId::rattle) & ~method_bit(MethodId::lobatto3)) != 0) {
      const CompositionScheme* scheme = id == MethodId::rattle4          ? &yoshida3_order4
                                        : id == MethodId::rattle4_suzuki ? &suzuki5_order4
                                        : id == MethodId::rattle6        ? &kahan_li9_order6
                                        : id == MethodId::rattle8        ? &kahan_li17_order8
                                                                         : nullptr;
      if (scheme != nullptr && has_method(Methods, id)) return f(RattleComposition<Real>{rattle, *scheme});
    }
    throw std::logic_error(std::string("integrator.method = \"") + method_name(id) +
                           "\" cannot integrate the constrained equations here; use \"rattle\", a composition of it or "
                           "\"lobatto3\"");
  } else if constexpr (std::is_same_v<Real, float>) {
    return with_explicit_method<Methods>(id, f);
  } else {
    switch (id) {
      case MethodId::euler:
      case MethodId::rk2:
      case MethodId::rk4: return with_explicit_method<Methods>(id, f);
      case MethodId::dopri5:
        if constexpr (has_method(Methods, MethodId::dopri5)) return f(Dopri5<Real>{rp.rtol, rp.atol});
        break;
      case MethodId::dop853:
        if constexpr (has_method(Methods, MethodId::dop853)) return f(Dop853<Real>{rp.rtol, rp.atol});
        break;
      case MethodId::vern9:
        if constexpr (has_method(Methods, MethodId::vern9)) return f(Vern9<Real>{rp.rtol, rp.atol});
        break;
      case MethodId::rodas5p:
        // One thread per instance on either backend, its Jacobian, W and LU in the thread's own
        // (local) memory; resolve() refuses states above rodas5p_max_state, the GPU (cuda_
        // unsupported_reason) those above 32 components and the chains on thread groups
        // (Rodas5P steps whole states, not a lane's slice of one).
        if constexpr (has_method(Methods, MethodId::rodas5p) && System::State::size <= rodas5p_max_state &&
                      !rodas5p_on_slices<System>)
          return f(Rodas5P<Real>{rp.rtol, rp.atol});
        break;
      case MethodId::midpoint:
        if constexpr (has_method(Methods, MethodId::midpoint)) {
          if (rp.stage_projection)  // projection.scheme = "midpoint" (004 §4)
            return f(MidpointProjection<Real>{rp.iteration_tol, rp.max_iterations, rp.project_position, rp.project_momentum,
                                              rp.projection_tol, rp.projection_max_iterations});
          return f(ImplicitRk<Gauss1Tableau, Real>{rp.iteration_tol, rp.max_iterations});
        }
        break;
      case MethodId::gauss2:
        if constexpr (has_method(Methods, MethodId::gauss2))
          return f(ImplicitRk<Gauss2Tableau, Real>{rp.iteration_tol, rp.max_iterations});
        break;
      case MethodId::verlet:
        if constexpr (separable_v<System> && has_method(Methods, MethodId::verlet)) return f(StormerVerlet{});
        break;
      case MethodId::rattle:
      case MethodId::rattle4:
      case MethodId::rattle4_suzuki:
      case MethodId::rattle6:
      case MethodId::rattle8:
      case MethodId::lobatto3: break;
    }
    throw std::logic_error(std::string("integrator.method = \"") + method_name(id) +
                           "\" does not integrate the formulation \"" + formulation_name(System::id) + "\" here");
  }
}

// The formulation template of each FormulationId.
template <FormulationId F>
struct FormulationOf;
// clang-format off
template <> struct FormulationOf<FormulationId::naive> { template <class M> using type = Naive<M>; };
template <> struct FormulationOf<FormulationId::total> { template <class M> using type = TotalHamiltonian<M>; };
template <> struct FormulationOf<FormulationId::extended> { template <class M> using type = ExtendedHamiltonian<M>; };
template <> struct FormulationOf<FormulationId::dirac> { template <class M> using type = HamiltonDirac<M>; };
template <> struct FormulationOf<FormulationId::impetus> { template <class M> using type = ImpetusStriction<M>; };
template <> struct FormulationOf<FormulationId::impetus_modified> { template <class M> using type = ImpetusModified<M>; };
template <> struct FormulationOf<FormulationId::constrained> { template <class M> using type = Constrained<M>; };
template <> struct FormulationOf<FormulationId::baumgarte> { template <class M> using type = Baumgarte<M>; };
template <> struct FormulationOf<FormulationId::penalty> { template <class M> using type = PenaltyOde<M>; };
// clang-format on

// The formulation F over `model` with the study's parameters (Baumgarte's alpha, beta).
template <FormulationId F, class Model>
typename FormulationOf<F>::template type<Model> make_formulation(const Model& model, const SystemArgs& a) {
  typename FormulationOf<F>::template type<Model> sys{model};
  if constexpr (F == FormulationId::baumgarte) {
    sys.alpha = typename Model::Real(a.baumgarte_alpha);
    sys.beta = typename Model::Real(a.baumgarte_beta);
  }
  return sys;
}

// Calls f(system, method) with the system and method themselves (Tangents = false) or with
// their tangent-carrying versions (geometry/tangent_system.hpp; fixed-step methods only,
// resolve() has refused the others): the pair of output.wedge and output.lyapunov, or with
// Spectrum the 2(n - m) tangents of output.lyapunov_spectrum (compiled on first use only; no
// impetus formulation).
template <bool Tangents, bool Spectrum = false, class System, class Method, class F>
std::unique_ptr<Engine> with_tangents_if(const System& sys, const Method& method, F&& f) {
  static_assert(Tangents || !Spectrum, "the spectrum is carried by tangents");
  if constexpr (!Tangents) {
    return f(sys, method);
  } else if constexpr (Spectrum && System::has_impetus) {
    throw std::logic_error(
        "output.lyapunov_spectrum puts its tangents into T_z M in (q, p); the impetus formulations carry (q, p*)");
  } else if constexpr (!Method::adaptive) {
    using Run = TangentSystem<System, Spectrum ? spectrum_dimension_v<System> : 0>;
    return f(Run::of(sys), TangentStepper<Method>{method});
  } else {
    throw std::logic_error(
        "output.wedge and output.lyapunov propagate tangents through fixed-step maps; an adaptive method chooses its "
        "steps from the state");
  }
}

// The numerical reference's pair of output.reference_method (reference/numerical.hpp): Reference
// with DOPRI5 (its default), DOP853 or Vern9 in place of its pair; a closed form or none as it is.
template <class Reference, MethodId ReferenceMethod>
using ReferenceBy =
    typename std::conditional_t<ReferenceMethod == MethodId::dop853, WithReferencePair<Reference, Dop853>,
                                std::conditional_t<ReferenceMethod == MethodId::vern9, WithReferencePair<Reference, Vern9>,
                                                   WithReferencePair<Reference, Dopri5>>>::type;

}  // namespace chens
