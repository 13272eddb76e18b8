// Tangent vectors carried with every instance by the discrete variational equations of its
// integrator and projections, for two diagnostics:
//  - the wedge product (symplecticity) of 004 §3.2 (output.wedge): with two tangents dz^1, dz^2,
//      omega_n = dq^1_n . dp^2_n - dp^1_n . dq^2_n
//    is reported as the metric wedge_error = |omega_n - omega_0|;
//  - the finite-time maximal Lyapunov exponent (output.lyapunov, issue 43; the pieces in
//    geometry/lyapunov.hpp): lambda(t) = (1/t) log(|P dz^1(t)| / |P dz^1(0)|), P the projection
//    into the tangent space of the constraint manifold, the norm Euclidean in physical (q, p).
//
// How the variational equations are obtained: the step (stages, fixed-point or Newton
// iterations, RATTLE's SHAKE solve, stage and endpoint projections) is evaluated over
// Dual2 numbers (linalg/dual.hpp), i.e. the derivative of the very map the plain run
// applies; for a Runge-Kutta method these are 004's dW_i = dw_n + h sum_j a_ij h'(W_j) dW_j,
// dw_n+1 = dw_n + h sum_j b_j h'(W_j) dW_j, and for a projection 004 §4's differentiated
// projection equations. Values follow the plain run's arithmetic, so an instance's state
// is bitwise that of the run without the diagnostic.
//
// Initial tangents. The pendulum and the penalty pendulum (S = 4; 004's four consistency
// conditions at (q0, p0), for the pendulum's one constraint phi = (|q|^2 - l^2)/2, with
// t = (-y, x) tangent to the circle):
//   dz^1 = (t, -(p.t / |q|^2) q),   dz^2 = (0, t / |t|^2),
// so G dq = 0 and G_q(p, dq) + G dp = q.dp + p.dq = 0 for both, and omega_0 = t.t/|t|^2 = 1
// (to rounding; wedge_error reports |omega_n - 1|). Every other model (the exponent only):
// two fixed generic vectors put into T_z M by lyapunov.hpp's tangent_projection. The
// formulation's own variables are used, i.e. (q, p*) for the impetus formulations.
//
// Renormalisation (Benettin et al. 1980): every RunParams::lyapunov_every steps both tangents
// are scaled by 2^-e, e = ilogb(max_c |dz^1_c|), and e is added to the state's slot E. The
// variational map is linear in the tangents and a scaling by a power of two is exact in
// floating point (short of underflow), so the renormalised tangents are the unrenormalised
// ones times 2^-E bit for bit: the exponent, (log|P dz^1| + E log 2 - log|P dz^1(0)|) / t with
// the binary exponents summed as integers (log_tangent_norm), is the same number whatever the
// interval, and the wedge product is omega(scaled) 2^(2E) exactly. The interval
// only keeps the tangents' growth (e^(lambda t) for chaotic systems) from overflowing.
//
// A tangent system stores (z, dz^1, dz^2, E, log|P dz^1(0)|) as one plain state of 3S + 2
// numbers, so the backends, checkpoints and the GPU's structure-of-arrays layout need nothing
// new.
#pragma once

#include <cmath>
#include <type_traits>
#include <utility>

#include <chens/config.hpp>
#include <chens/ensemble/counters.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/geometry/lyapunov.hpp>
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
  static constexpr int scale_slot = 3 * S;          // E: the tangents are the true ones times 2^-E
  static constexpr int log_norm0_slot = 3 * S + 1;  // log|P dz^1(0)|
  using State = Vec<Real, 3 * S + 2>;
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
  // The state of d, with the slots E and log|P dz^1(0)| zero (a derivative's: pack_into keeps them).
  CHENS_HD static State pack(const Vec<Dual, S>& d) {
    State Z;
    Z[scale_slot] = Real(0);
    Z[log_norm0_slot] = Real(0);
    pack_into(d, Z);
    return Z;
  }
  CHENS_HD static void pack_into(const Vec<Dual, S>& d, State& Z) {
    for (int c = 0; c < S; ++c) {
      Z[c] = d[c].v;
      Z[S + c] = d[c].d0;
      Z[2 * S + c] = d[c].d1;
    }
  }
  // The formulation over dual numbers (parameters kept: formulation.hpp, dual_system).
  CHENS_HD auto dual() const { return dual_system<Dual>(inner); }

  // log |P dz^1| of the unrenormalised first tangent (Z's times 2^E) in physical (q, p), P the
  // projection into T_z M (geometry/lyapunov.hpp) for the formulations on a constraint
  // manifold; the penalty pendulum's phase space is all of R^4. The squared norm's binary
  // exponent is summed with 2E as an integer and only its mantissa goes through log, so the
  // value does not depend on how the tangents were scaled, bit for bit.
  CHENS_HD double log_tangent_norm(const State& Z) const {
    using std::frexp;
    using std::log;
    using std::lround;
    const auto phys = dual().physical(unpack(Z));
    using ModelD = std::decay_t<decltype(model.template rebound<double>())>;
    typename ModelD::State z, dz;
    for (int c = 0; c < S; ++c) {
      z[c] = static_cast<double>(phys[c].v);
      dz[c] = static_cast<double>(phys[c].d0);
    }
    if constexpr (id != FormulationId::penalty) dz = tangent_projection(model.template rebound<double>(), z, dz);
    double n2 = 0.0;
    for (int c = 0; c < S; ++c) n2 += dz[c] * dz[c];
    int k = 0;
    const double m = frexp(n2, &k);  // n2 = m 2^k, m in [1/2, 1)
    const long two_e = static_cast<long>(k) + 2 * static_cast<long>(lround(Z[scale_slot]));
    constexpr double ln2 = 0.693147180559945309417232121458176568;
    return 0.5 * (log(m) + static_cast<double>(two_e) * ln2);
  }

  // The finite-time exponent at time t > 0 (0 at t = 0: no growth yet).
  CHENS_HD double lyapunov_exponent(const State& Z, double t) const {
    if (!(t > 0.0)) return 0.0;
    return (log_tangent_norm(Z) - static_cast<double>(Z[log_norm0_slot])) / t;
  }

  // Benettin's renormalisation by a power of two (above): exact, so it changes no number
  // the run reports.
  CHENS_HD static void renormalise(State& Z) {
    using std::fabs;
    using std::ilogb;
    using std::ldexp;
    Real m = Real(0);
    for (int c = S; c < 2 * S; ++c) m = fabs(Z[c]) > m ? fabs(Z[c]) : m;
    if (!(m > Real(0)) || !(m < INFINITY)) return;
    const int e = ilogb(m);
    if (e == 0) return;
    for (int c = S; c < 3 * S; ++c) Z[c] = ldexp(Z[c], -e);
    Z[scale_slot] = Z[scale_slot] + Real(e);
  }

  // (z, dz^1, dz^2, E = 0, log|P dz^1(0)|) with the initial tangents above.
  CHENS_HD State with_initial_tangents(const typename Sys::State& z) const {
    State Z = State::zero();
    for (int c = 0; c < S; ++c) Z[c] = z[c];
    if constexpr (S == 4) {
      const int n = S / 2;
      const Real x = z[0], y = z[1], px = z[2], py = z[3];
      const Real tx = -y, ty = x;
      const Real r2 = x * x + y * y;
      const Real pt = (px * tx + py * ty) / r2;
      const Real t2 = tx * tx + ty * ty;
      Z[S + 0] = tx;
      Z[S + 1] = ty;
      Z[S + n + 0] = -pt * x;
      Z[S + n + 1] = -pt * y;
      Z[2 * S + n + 0] = tx / t2;
      Z[2 * S + n + 1] = ty / t2;
    } else {
      // Fixed generic directions (no symmetry of the models' coordinates singles them out),
      // projected into T_z M.
      typename Sys::State u1, u2;
      for (int c = 0; c < S; ++c) {
        u1[c] = Real(1) / Real(c + 1);
        u2[c] = Real((c % 2 == 0) ? 1 : -1) / Real(c + 2);
      }
      u1 = tangent_projection(model, z, u1);
      u2 = tangent_projection(model, z, u2);
      for (int c = 0; c < S; ++c) {
        Z[S + c] = u1[c];
        Z[2 * S + c] = u2[c];
      }
    }
    Z[log_norm0_slot] = static_cast<Real>(log_tangent_norm(Z));
    return Z;
  }
  // omega(dz^1, dz^2) = dq^1 . dp^2 - dp^1 . dq^2 of the unrenormalised tangents.
  CHENS_HD static Real wedge(const State& Z) {
    using std::ldexp;
    using std::lround;
    constexpr int n = S / 2;
    Real w = Real(0);
    for (int i = 0; i < n; ++i) w = w + (Z[S + i] * Z[2 * S + n + i] - Z[S + n + i] * Z[2 * S + i]);
    return ldexp(w, 2 * static_cast<int>(lround(Z[scale_slot])));
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
  static_assert(!Method::adaptive, "tangents are propagated through fixed-step maps (output.wedge, output.lyapunov)");
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
    Z_new[TangentSystem<Sys>::scale_slot] = Z[TangentSystem<Sys>::scale_slot];
    Z_new[TangentSystem<Sys>::log_norm0_slot] = Z[TangentSystem<Sys>::log_norm0_slot];
    TangentSystem<Sys>::pack_into(zn, Z_new);
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
  if (changed) TangentSystem<Sys>::pack_into(zd, Z);
  return changed;
}

}  // namespace chens
