// The wedge-product (symplecticity) diagnostic of 004 §3.2: two tangent vectors dz^1,
// dz^2 are carried along with every instance by the discrete variational equations of
// its integrator and projections, and
//   omega_n = dq^1_n . dp^2_n - dp^1_n . dq^2_n
// is reported as the metric wedge_error = |omega_n - omega_0| (output.wedge).
//
// How the variational equations are obtained: the step (stages, fixed-point or Newton
// iterations, RATTLE's SHAKE solve, stage and endpoint projections) is evaluated over
// Dual2 numbers (linalg/dual.hpp), i.e. the derivative of the very map the plain run
// applies; for a Runge-Kutta method these are 004's dW_i = dw_n + h sum_j a_ij h'(W_j) dW_j,
// dw_n+1 = dw_n + h sum_j b_j h'(W_j) dW_j, and for a projection 004 §4's differentiated
// projection equations. Values follow the plain run's arithmetic, so an instance's state
// is bitwise that of the run without the diagnostic.
//
// Initial tangents (004's four consistency conditions at (q0, p0), for the pendulum's one
// constraint phi = (|q|^2 - l^2)/2, with t = (-y, x) tangent to the circle):
//   dz^1 = (t, -(p.t / |q|^2) q),   dz^2 = (0, t / |t|^2),
// so G dq = 0 and G_q(p, dq) + G dp = q.dp + p.dq = 0 for both, and omega_0 = t.t/|t|^2 = 1
// (to rounding; wedge_error reports |omega_n - 1|). The formulation's own variables are
// used, i.e. (q, p*) for the impetus formulations.
//
// A tangent system stores (z, dz^1, dz^2) as one plain state of 3S numbers, so the
// backends, checkpoints and the GPU's structure-of-arrays layout need nothing new.
#pragma once

#include <type_traits>
#include <utility>

#include <chens/config.hpp>
#include <chens/ensemble/counters.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/integrators/status.hpp>
#include <chens/linalg/dual.hpp>
#include <chens/linalg/vec.hpp>
#include <chens/projections/policy.hpp>

namespace chens {

template <class Sys>
struct TangentSystem {
  using Inner = Sys;
  using Real = typename Sys::Real;
  using Model = decltype(Sys::model);
  static constexpr int S = Sys::State::size;
  using State = Vec<Real, 3 * S>;
  using Dual = Dual2<Real>;
  static constexpr FormulationId id = Sys::id;
  static constexpr bool has_impetus = Sys::has_impetus;
  static constexpr bool has_tangents = true;
  Sys inner;
  Model model;  // = inner.model: what make_instance, the projections and metrics read

  CHENS_HD static TangentSystem of(const Sys& s) { return TangentSystem{s, s.model}; }

  CHENS_HD static typename Sys::State head(const State& Z) {
    typename Sys::State z;
    for (int c = 0; c < S; ++c) z[c] = Z[c];
    return z;
  }
  CHENS_HD typename Sys::State physical(const State& Z) const { return inner.physical(head(Z)); }

  CHENS_HD static Vec<Dual, S> unpack(const State& Z) {
    Vec<Dual, S> d;
    for (int c = 0; c < S; ++c) d[c] = Dual(Z[c], Z[S + c], Z[2 * S + c]);
    return d;
  }
  CHENS_HD static State pack(const Vec<Dual, S>& d) {
    State Z;
    for (int c = 0; c < S; ++c) {
      Z[c] = d[c].v;
      Z[S + c] = d[c].d0;
      Z[2 * S + c] = d[c].d1;
    }
    return Z;
  }
  // The formulation over dual numbers (parameters kept: formulation.hpp, rebound_system).
  CHENS_HD auto dual() const { return rebound_system<Dual>(inner); }

  // (z, dz^1, dz^2) with the consistent tangents above.
  CHENS_HD State with_initial_tangents(const typename Sys::State& z) const {
    State Z = State::zero();
    const int n = S / 2;
    static_assert(S == 4, "the wedge diagnostic's initial tangents are written for the pendulum");
    const Real x = z[0], y = z[1], px = z[2], py = z[3];
    const Real tx = -y, ty = x;
    const Real r2 = x * x + y * y;
    const Real pt = (px * tx + py * ty) / r2;
    const Real t2 = tx * tx + ty * ty;
    for (int c = 0; c < S; ++c) Z[c] = z[c];
    Z[S + 0] = tx;
    Z[S + 1] = ty;
    Z[S + n + 0] = -pt * x;
    Z[S + n + 1] = -pt * y;
    Z[2 * S + n + 0] = tx / t2;
    Z[2 * S + n + 1] = ty / t2;
    return Z;
  }
  // omega(dz^1, dz^2) = dq^1 . dp^2 - dp^1 . dq^2.
  CHENS_HD static Real wedge(const State& Z) {
    constexpr int n = S / 2;
    Real w = Real(0);
    for (int i = 0; i < n; ++i) w = w + (Z[S + i] * Z[2 * S + n + i] - Z[S + n + i] * Z[2 * S + i]);
    return w;
  }
};

// The state an instance starts from: z itself, or z with its initial tangents.
template <class System>
CHENS_HD CHENS_FORCEINLINE typename System::State initial_augmented_state(const System&, const typename System::State& z) {
  return z;
}
template <class Sys>
CHENS_HD CHENS_FORCEINLINE typename TangentSystem<Sys>::State initial_augmented_state(const TangentSystem<Sys>& sys,
                                                                                      const typename Sys::State& z) {
  return sys.with_initial_tangents(z);
}

// A method over dual numbers: methods with tolerances provide rebound<R>(); the others
// (explicit Runge-Kutta, Stormer-Verlet) are used as they are.
template <class R, class Method, class = void>
struct has_rebound_method : std::false_type {};
template <class R, class Method>
struct has_rebound_method<R, Method, std::void_t<decltype(std::declval<const Method&>().template rebound<R>())>>
    : std::true_type {};

template <class R, class Method>
CHENS_HD auto rebound_method(const Method& m) {
  if constexpr (has_rebound_method<R, Method>::value) {
    return m.template rebound<R>();
  } else {
    return m;
  }
}

// Steps a tangent system: the inner method over dual numbers.
template <class Method>
struct TangentStepper {
  static constexpr bool adaptive = false;
  static constexpr bool has_lanes = false;
  static constexpr int order = Method::order;
  static_assert(!Method::adaptive, "the wedge diagnostic propagates tangents through fixed-step maps");
  Method inner;

  template <class Sys>
  CHENS_HD StepStatus step(const TangentSystem<Sys>& sys, const typename TangentSystem<Sys>::State& Z, typename Sys::Real h,
                           typename TangentSystem<Sys>::State& Z_new) const {
    using Dual = typename TangentSystem<Sys>::Dual;
    const auto dsys = sys.dual();
    const auto m = rebound_method<Dual>(inner);
    auto zd = TangentSystem<Sys>::unpack(Z);
    decltype(zd) zn;
    StepStatus st = m.step(dsys, zd, Dual(h), zn);
    Z_new = TangentSystem<Sys>::pack(zn);
    st.finite = all_finite(Z_new);
    return st;
  }
};

// Projections of a tangent system: the projection policy over dual numbers (004 §4's
// differentiated projection equations); it alone decides what projects.
template <class Sys, class RP>
CHENS_HD CHENS_FORCEINLINE bool apply_projections(const TangentSystem<Sys>& sys, const RP& rp,
                                                  typename TangentSystem<Sys>::State& Z, Counters& c) {
  const auto dsys = sys.dual();
  auto zd = TangentSystem<Sys>::unpack(Z);
  const bool changed = apply_projections(dsys, rp, zd, c);
  if (changed) Z = TangentSystem<Sys>::pack(zd);
  return changed;
}

}  // namespace chens
