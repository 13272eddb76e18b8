// Names of the underlying equations chens integrates. Each formulation is a small
// struct over a model with
//   rhs(z, dz)       the right-hand side of the underlying ODE in its own variables,
//   physical(z)      the physical (q, p) of a state (identity except for impetus
//                    variables, where p = p* - J^T lambda, 000 eq. 26),
// and the flag has_impetus telling whether a state carries impetuses p* (000 §5).
#pragma once

#include <type_traits>
#include <utility>

#include <chens/config.hpp>

namespace chens {

enum class FormulationId : int {
  naive = 0,             // index-reduced equations, 002 eq. 38 = 001 eq. 13 = 004 eq. 1.6
  total = 1,             // total Hamiltonian H + mu phi, 001 eq. 14
  extended = 2,          // extended Hamiltonian H - lambda phi + mu psi, 002 eq. 37
  dirac = 3,             // Hamilton-Dirac equations, 002 eqs. 35-36 (general form 31)
  impetus = 4,           // impetus-striction formalism, 000 eq. 50 (general form 30)
  impetus_modified = 5,  // impetus-striction with the modified Hamiltonian, 000 eqs. 52-53
  constrained = 6,       // no underlying ODE: the constrained equations themselves (RATTLE)
  baumgarte = 7,         // naive equations with Baumgarte stabilisation (004 §4, 002 §12)
  penalty = 8,           // augmented-potential model: no constraint, a stiff potential (003)
};

inline constexpr int formulation_count = 9;

inline constexpr const char* formulation_name(FormulationId f) {
  switch (f) {
    case FormulationId::naive: return "naive";
    case FormulationId::total: return "total";
    case FormulationId::extended: return "extended";
    case FormulationId::dirac: return "dirac";
    case FormulationId::impetus: return "impetus";
    case FormulationId::impetus_modified: return "impetus-modified";
    case FormulationId::constrained: return "constrained";
    case FormulationId::baumgarte: return "baumgarte";
    case FormulationId::penalty: return "penalty";
  }
  return "?";
}

// Evaluates sys.rhs(z, dz). Small systems (the pendulum) have it inlined into every
// stage, where the scheduler interleaves stages and instances; large ones (chains) call
// one out-of-line copy, which keeps kernels and host instantiations small (inlining an
// O(N^2) right-hand side into every stage of every method multiplied build times) at a
// call's cost, negligible beside the work of the right-hand side itself.
inline constexpr int inline_rhs_max_state = 16;

template <class System>
CHENS_HD CHENS_NOINLINE void rhs_out_of_line(const System& sys, const typename System::State& z,
                                             typename System::State& dz) {
  sys.rhs(z, dz);
}

// Inline = true inlines any size: the GPU's lean step kernels (ensemble/lean_steps.hpp),
// where a call would pass the state through the stack at every stage.
template <bool Inline = false, class System>
CHENS_HD CHENS_FORCEINLINE void eval_rhs(const System& sys, const typename System::State& z, typename System::State& dz) {
  if constexpr (Inline || System::State::size <= inline_rhs_max_state) {
    sys.rhs(z, dz);
  } else {
    rhs_out_of_line(sys, z, dz);
  }
}

// Traits of systems (C++17: the CUDA translation units are compiled as C++17, so no
// requires-expressions in code nvcc sees).
template <class T, class = void>
struct has_tangents_trait : std::false_type {};
template <class T>
struct has_tangents_trait<T, std::void_t<decltype(T::has_tangents)>> : std::true_type {};
// Systems carrying tangent vectors (geometry/tangent_system.hpp).
template <class T>
inline constexpr bool has_tangents_v = has_tangents_trait<T>::value;

template <class T, class = void>
struct separable_trait : std::false_type {};
template <class T>
struct separable_trait<T, std::void_t<decltype(T::separable)>> : std::bool_constant<T::separable> {};
// Separable Hamiltonians H = T(p) + V(q) (Stormer-Verlet applies).
template <class T>
inline constexpr bool separable_v = separable_trait<T>::value;

// The model's state: what initial data are given as (the system's own state, except for
// tangent systems, which add tangents to it).
template <class System>
using ModelStateOf = typename decltype(System::model)::State;

// Components of a system's physical state (the state itself, except for tangent systems,
// geometry/tangent_system.hpp, whose states also carry two tangent vectors).
template <class System>
inline constexpr int physical_state_size_v =
    decltype(static_cast<const System*>(nullptr)->physical(typename System::State{}))::size;

// A formulation F<Model> over another arithmetic type R: F<Model::rebind<R>>, when the
// model can be rebound. Used by the CPU lanes to evaluate two instances per SSE2 register.
template <class R, template <class> class F, class Model>
CHENS_HD auto rebound_system(const F<Model>& f) -> F<typename Model::template rebind<R>> {
  return F<typename Model::template rebind<R>>{f.model.template rebound<R>()};
}

// Whether rebound_system<R> takes f (its model has `rebind`; Baumgarte's overload included).
template <class R, class F, class = void>
struct has_rebound_system : std::false_type {};
template <class R, class F>
struct has_rebound_system<R, F, std::void_t<decltype(rebound_system<R>(std::declval<const F&>()))>> : std::true_type {};

// A formulation over dual numbers (geometry/tangent_system.hpp): rebound_system where the model
// rebinds (Baumgarte's parameters kept by its overload); a model without `rebind` (chains, which
// leave it out so that no CPU lane path takes them) through its rebound<R>() alone.
template <class R, template <class> class F, class Model>
CHENS_HD auto dual_system(const F<Model>& f) {
  if constexpr (has_rebound_system<R, F<Model>>::value) {
    return rebound_system<R>(f);
  } else {
    using M = std::decay_t<decltype(f.model.template rebound<R>())>;
    return F<M>{f.model.template rebound<R>()};
  }
}

}  // namespace chens
