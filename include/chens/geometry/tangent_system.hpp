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
// dual numbers (linalg/dual.hpp), i.e. the derivative of the very map the plain run
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
// The spectrum (output.lyapunov_spectrum; TangentSystem<Sys, K>, K > 0): K = 2(n - m) tangents,
// the dimension of M (2n for the penalty formulation's ODE on R^2n), carried by DualN numbers
// with K parts. Every RunParams::lyapunov_every steps they are put into T_z M (P above) and
// re-orthonormalised (Benettin et al. 1980; modified Gram-Schmidt, lyapunov.hpp). The
// projection is needed: the flow does not contract a tangent's part off T_z M (the
// constraints' drift is the papers' subject, not the dynamics), so, kept, it would grow
// against the contracting directions like e^(|lambda_K| t) and feed into them
// (tests/test_lyapunov.cpp measured lambda_4 = -0.135 for -0.482 that way). P acts in physical
// (q, p), so the impetus formulations, whose (q, p*) maps onto (q, p) by a projection, are
// refused. The logs of the Gram-Schmidt factors r_kk are summed in K slots, and
//   lambda_k(t) = (sum of log r_kk + log r_kk(t)) / t,
// r_kk(t) from the Gram-Schmidt of the current tangents, projected; the initial tangents are
// K fixed generic vectors put into T_z M and orthonormalised, so r(0) = I. Unlike the pair's
// scaling, the re-orthonormalisation rounds: the exponents depend on the interval by rounding
// and by O(1/t), and every other number of the run (the values part) does not.
//
// A tangent system stores (z, dz^1, dz^2, E, log|P dz^1(0)|) as one plain state of 3S + 2
// numbers, or (z, dz^1 .. dz^K, log r_11 .. log r_KK) as (K + 1) S + K, so the backends,
// checkpoints and the GPU's structure-of-arrays layout need nothing new.
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

// The number of the spectrum's tangents for system Sys: the dimension of the phase space the
// exponents live on, 2(n - m) on the constraint manifold, 2n for the penalty formulation.
template <class Sys>
struct SpectrumDimension {
  using Model = decltype(Sys::model);
  static constexpr int value = Sys::id == FormulationId::penalty ? Model::State::size
                                                                 : Model::State::size - 2 * Model::constraints;
};
template <class Sys>
inline constexpr int spectrum_dimension_v = SpectrumDimension<Sys>::value;

// K = 0: the pair of output.wedge and output.lyapunov; K > 0: the spectrum's K tangents.
template <class Sys, int K = 0>
struct TangentSystem {
  using Inner = Sys;
  using Real = typename Sys::Real;
  using Model = decltype(Sys::model);
  static constexpr int S = Sys::State::size;
  static constexpr bool spectrum = K > 0;
  static constexpr int tangents = spectrum ? K : 2;
  static constexpr bool has_wedge = !spectrum;
  static constexpr int tangent_end = (tangents + 1) * S;  // z, then the tangents
  static constexpr int scale_slot = 3 * S;                // the pair: E, the tangents are the true ones times 2^-E
  static constexpr int log_norm0_slot = 3 * S + 1;        // the pair: log|P dz^1(0)|
  static constexpr int log_r_slot = tangent_end;          // the spectrum: log r_kk summed, k = 0 .. K - 1
  using State = Vec<Real, tangent_end + (spectrum ? K : 2)>;
  using Dual = DualN<Real, tangents>;
  static constexpr FormulationId id = Sys::id;
  static constexpr bool has_impetus = Sys::has_impetus;
  static constexpr bool has_tangents = true;
  static_assert(!(spectrum && Sys::has_impetus),
                "the spectrum's tangents are put into T_z M in (q, p); the impetus formulations carry (q, p*)");
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
    for (int c = 0; c < S; ++c) {
      d[c].v = Z[c];
      for (int k = 0; k < tangents; ++k) d[c].d[k] = Z[(k + 1) * S + c];
    }
    return d;
  }
  // The state of d, with the slots after the tangents zero (a derivative's: pack_into keeps them).
  CHENS_HD static State pack(const Vec<Dual, S>& d) {
    State Z;
    for (int e = tangent_end; e < State::size; ++e) Z[e] = Real(0);
    pack_into(d, Z);
    return Z;
  }
  CHENS_HD static void pack_into(const Vec<Dual, S>& d, State& Z) {
    for (int c = 0; c < S; ++c) {
      Z[c] = d[c].v;
      for (int k = 0; k < tangents; ++k) Z[(k + 1) * S + c] = d[c].d[k];
    }
  }
  // The formulation over dual numbers (parameters kept: formulation.hpp, dual_system).
  CHENS_HD auto dual() const { return dual_system<Dual>(inner); }

  using ModelD = std::decay_t<decltype(std::declval<const Model&>().template rebound<double>())>;
  using StateD = typename ModelD::State;

  // The tangents' physical images in double, P J dz^k, P the projection into T_z M
  // (geometry/lyapunov.hpp) for the formulations on a constraint manifold (the penalty
  // pendulum's phase space is all of R^4), and z's physical state. `count` of them.
  template <int Count>
  CHENS_HD void projected_images(const State& Z, StateD& z, StateD (&u)[Count]) const {
    static_assert(Count <= tangents, "images of carried tangents");
    const auto phys = dual().physical(unpack(Z));
    for (int c = 0; c < S; ++c) z[c] = static_cast<double>(phys[c].v);
    for (int k = 0; k < Count; ++k) {
      for (int c = 0; c < S; ++c) u[k][c] = static_cast<double>(phys[c].d[k]);
      if constexpr (id != FormulationId::penalty) u[k] = tangent_projection(model.template rebound<double>(), z, u[k]);
    }
  }

  // The pair: log |P dz^1| of the unrenormalised first tangent (Z's times 2^E) in physical
  // (q, p). The squared norm's binary exponent is summed with 2E as an integer and only its
  // mantissa goes through log, so the value does not depend on how the tangents were
  // scaled, bit for bit.
  CHENS_HD double log_tangent_norm(const State& Z) const {
    static_assert(!spectrum, "the spectrum's exponents are spectrum_exponents'");
    using std::frexp;
    using std::log;
    using std::lround;
    StateD z, dz[1];
    projected_images(Z, z, dz);
    double n2 = 0.0;
    for (int c = 0; c < S; ++c) n2 += dz[0][c] * dz[0][c];
    int k = 0;
    const double m = frexp(n2, &k);  // n2 = m 2^k, m in [1/2, 1)
    const long two_e = static_cast<long>(k) + 2 * static_cast<long>(lround(Z[scale_slot]));
    constexpr double ln2 = 0.693147180559945309417232121458176568;
    return 0.5 * (log(m) + static_cast<double>(two_e) * ln2);
  }

  // The spectrum: lambda_k(t), k = 0 .. K - 1, in the Gram-Schmidt order (the largest first
  // once t is long enough for the directions to settle); 0 at t = 0.
  CHENS_HD void spectrum_exponents(const State& Z, double t, double (&lambda)[tangents]) const {
    static_assert(spectrum, "the pair has the largest exponent alone (lyapunov_exponent)");
    StateD z, u[tangents];
    projected_images(Z, z, u);
    double log_r[tangents];
    for (int k = 0; k < tangents; ++k) log_r[k] = 0.0;
    orthonormalise(u, log_r);
    for (int k = 0; k < tangents; ++k) lambda[k] = t > 0.0 ? (static_cast<double>(Z[log_r_slot + k]) + log_r[k]) / t : 0.0;
  }

  // The finite-time largest exponent at time t > 0 (0 at t = 0: no growth yet).
  CHENS_HD double lyapunov_exponent(const State& Z, double t) const {
    if (!(t > 0.0)) return 0.0;
    if constexpr (spectrum) {
      double lambda[tangents];
      spectrum_exponents(Z, t, lambda);
      return lambda[0];
    } else {
      return (log_tangent_norm(Z) - static_cast<double>(Z[log_norm0_slot])) / t;
    }
  }

  // The pair: Benettin's renormalisation by a power of two (above), exact, so it changes no
  // number the run reports. The spectrum: the re-orthonormalisation (above).
  CHENS_HD void renormalise(State& Z) const {
    using std::fabs;
    using std::ilogb;
    using std::ldexp;
    if constexpr (spectrum) {
      // The physical map is the identity (no impetus formulation: static_assert above), so the
      // images are the tangents put into T_z M, which replace them before Gram-Schmidt.
      StateD z, u[tangents];
      projected_images(Z, z, u);
      double log_r[tangents];
      for (int k = 0; k < tangents; ++k) log_r[k] = 0.0;
      orthonormalise(u, log_r);
      for (int k = 0; k < tangents; ++k) {
        Z[log_r_slot + k] = Z[log_r_slot + k] + static_cast<Real>(log_r[k]);
        for (int c = 0; c < S; ++c) Z[(k + 1) * S + c] = static_cast<Real>(u[k][c]);
      }
    } else {
      Real m = Real(0);
      for (int c = S; c < 2 * S; ++c) m = fabs(Z[c]) > m ? fabs(Z[c]) : m;
      if (!(m > Real(0)) || !(m < INFINITY)) return;
      const int e = ilogb(m);
      if (e == 0) return;
      for (int c = S; c < 3 * S; ++c) Z[c] = ldexp(Z[c], -e);
      Z[scale_slot] = Z[scale_slot] + Real(e);
    }
  }

  // z with its initial tangents: the pair's (above), (z, dz^1, dz^2, E = 0, log|P dz^1(0)|);
  // the spectrum's K generic vectors in T_z M, orthonormalised (their images), sums 0.
  CHENS_HD State with_initial_tangents(const typename Sys::State& z) const {
    using std::sin;
    State Z = State::zero();
    for (int c = 0; c < S; ++c) Z[c] = z[c];
    if constexpr (spectrum) {
      for (int k = 0; k < tangents; ++k) {
        // Fixed values with no structure the models' coordinates could share: a frequency of
        // its own for each k (sin(a c + b k) would span two vectors only).
        typename Sys::State u;
        for (int c = 0; c < S; ++c) u[c] = sin(Real(0.7548776662) * Real((c + 1) * (k + 2)) + Real(0.5) * Real(k));
        if constexpr (id != FormulationId::penalty) u = tangent_projection(model, z, u);
        for (int c = 0; c < S; ++c) Z[(k + 1) * S + c] = u[c];
      }
      renormalise(Z);
      for (int k = 0; k < tangents; ++k) Z[log_r_slot + k] = Real(0);
    } else if constexpr (S == 4) {
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
    if constexpr (!spectrum) Z[log_norm0_slot] = static_cast<Real>(log_tangent_norm(Z));
    return Z;
  }
  // The pair: omega(dz^1, dz^2) = dq^1 . dp^2 - dp^1 . dq^2 of the unrenormalised tangents.
  CHENS_HD static Real wedge(const State& Z) {
    static_assert(!spectrum, "the spectrum's tangents are re-orthonormalised: no wedge product");
    using std::ldexp;
    using std::lround;
    constexpr int n = S / 2;
    Real w = Real(0);
    for (int i = 0; i < n; ++i) w = w + (Z[S + i] * Z[2 * S + n + i] - Z[S + n + i] * Z[2 * S + i]);
    return ldexp(w, 2 * static_cast<int>(lround(Z[scale_slot])));
  }
};

// The number of Lyapunov exponents a system's run reports (output.lyapunov_spectrum): its
// spectrum tangents, 0 for any other system.
template <class System>
constexpr int spectrum_size() {
  if constexpr (has_tangents_v<System>) {
    return System::spectrum ? System::tangents : 0;
  } else {
    return 0;
  }
}
template <class System>
inline constexpr int spectrum_size_v = spectrum_size<System>();

// The state an instance starts from: z itself, or z with its initial tangents.
template <class System>
CHENS_HD CHENS_FORCEINLINE typename System::State initial_augmented_state(const System&, const typename System::State& z) {
  return z;
}
template <class Sys, int K>
CHENS_HD CHENS_FORCEINLINE typename TangentSystem<Sys, K>::State initial_augmented_state(const TangentSystem<Sys, K>& sys,
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

  template <class Sys, int K>
  CHENS_HD StepStatus step(const TangentSystem<Sys, K>& sys, const typename TangentSystem<Sys, K>::State& Z,
                           typename Sys::Real h, typename TangentSystem<Sys, K>::State& Z_new) const {
    using TS = TangentSystem<Sys, K>;
    using Dual = typename TS::Dual;
    const auto dsys = sys.dual();
    const auto m = rebound_method<Dual>(inner);
    auto zd = TS::unpack(Z);
    decltype(zd) zn;
    StepStatus st = m.step(dsys, zd, Dual(h), zn);
    for (int e = TS::tangent_end; e < TS::State::size; ++e) Z_new[e] = Z[e];
    TS::pack_into(zn, Z_new);
    st.finite = all_finite(Z_new);
    return st;
  }
};

// Projections of a tangent system: the projection policy over dual numbers (004 §4's
// differentiated projection equations); it alone decides what projects.
template <class Sys, int K, class RP>
CHENS_HD CHENS_FORCEINLINE bool apply_projections(const TangentSystem<Sys, K>& sys, const RP& rp,
                                                  typename TangentSystem<Sys, K>::State& Z, Counters& c) {
  const auto dsys = sys.dual();
  auto zd = TangentSystem<Sys, K>::unpack(Z);
  const bool changed = apply_projections(dsys, rp, zd, c);
  if (changed) TangentSystem<Sys, K>::pack_into(zd, Z);
  return changed;
}

}  // namespace chens
