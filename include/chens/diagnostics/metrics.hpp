// Per-instance diagnostics at a sample time (001 §6, 002 §6-7): integration error
// |z(t) - z_ref(t)|_2 over (q, p) of the physical state, energy error |H - H(0)|, the
// largest constraint residuals max_a |phi_a|, max_a |psi_a|, and for models without
// external fields (chains, 002 §7 last paragraph) the errors of the other first
// integrals: |P(t) - P(0)|_2 of the total linear momentum and |L(t) - L(0)| of the
// angular momentum; with output.wedge, the change of the wedge product (004 §3.2); with
// output.lyapunov, the finite-time maximal Lyapunov exponent (geometry/tangent_system.hpp).
#pragma once

#include <cmath>
#include <type_traits>

#include <chens/config.hpp>
#include <chens/ensemble/slice_vec_fwd.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

enum class MetricId : int {
  integration_error = 0,
  energy_error = 1,
  phi = 2,
  psi = 3,
  linear_momentum_error = 4,
  angular_momentum_error = 5,
  wedge_error = 6,  // |omega(t) - omega(0)| of the tangents of geometry/tangent_system.hpp (output.wedge)
  lyapunov = 7,     // the finite-time maximal Lyapunov exponent (output.lyapunov): signed, not an error
};
inline constexpr int metric_count = 8;
inline constexpr const char* metric_name(int i) {
  switch (i) {
    case 0: return "integration_error";
    case 1: return "energy_error";
    case 2: return "phi";
    case 3: return "psi";
    case 4: return "linear_momentum_error";
    case 5: return "angular_momentum_error";
    case 6: return "wedge_error";
    case 7: return "lyapunov";
  }
  return "?";
}
// Whether a metric takes negative values (its quantiles use SignedLogBins, quantiles.hpp);
// the others are errors and residuals, >= 0.
inline constexpr bool metric_signed(int i) { return i == int(MetricId::lyapunov); }

template <class Real>
struct Metrics {
  Real v[metric_count];
};

// A model without a reference solution: integration error is not reported.
template <class Real, int S>
struct NoReference {
  static constexpr bool available = false;
  static constexpr bool advancing = false;
  bool projected = false;
  template <class Model, class V>
  CHENS_HD static NoReference make(const Model&, const V&) {
    return NoReference{};
  }
  template <class Model, class V, class RP>
  CHENS_HD static NoReference make(const Model&, const V&, const RP&) {
    return NoReference{};
  }
  CHENS_HD bool enabled() const { return false; }
  CHENS_HD Vec<Real, S> eval(Real) const { return Vec<Real, S>::zero(); }
};

// Whether a model's linear momenta are first integrals too (chains): models whose one
// conserved quantity besides H is an angular momentum (a user model's, models/auto_model.hpp)
// say reports_linear_momentum = false, and only angular_momentum_error is reported.
template <class Model, class = void>
struct reports_linear_momentum : std::bool_constant<Model::has_momentum_integrals> {};
template <class Model>
struct reports_linear_momentum<Model, std::void_t<decltype(Model::reports_linear_momentum)>>
    : std::bool_constant<Model::reports_linear_momentum> {};
template <class Model>
inline constexpr bool reports_linear_momentum_v = reports_linear_momentum<Model>::value;

// The first integrals besides H that a model conserves (P_x, P_y, L_z), or zeros.
template <class Model>
CHENS_HD Vec<typename Model::Real, 3> momentum_integrals_of(const Model& model, const typename Model::State& z) {
  if constexpr (Model::has_momentum_integrals) {
    return model.momentum_integrals(z);
  } else {
    return Vec<typename Model::Real, 3>::zero();
  }
}

// Physical-state diagnostics, evaluated in double whatever precision the instance is
// integrated in: a float run's metrics are those of its float states, not of float
// rounding in the diagnostics. (For double runs the conversions are exact copies.)
// energy0 and integrals0 are H and momentum_integrals_of of the physical initial state,
// also in double. measure_state gives every metric that is a function of the state alone
// (all but the integration error, which it sets to 0): the first-passage checks after each
// step (ensemble/passage.hpp) take these very values. Returns false when any reported value
// is not finite. measure_physical is its work on the model and the physical state already
// in double (`model`, `phys`), which measure() also needs for the integration error: they
// are computed once for both.
template <class System, class ModelD, class PhysD>
CHENS_HD bool measure_physical(const System& sys, const typename System::State& z, const ModelD& model, const PhysD& phys,
                               double energy0, const Vec<double, 3>& integrals0, Metrics<double>& out) {
  (void)sys;
  (void)z;
  using Model = decltype(sys.model);
  using std::fabs;
  using std::sqrt;
  out.v[1] = fabs(model.energy(phys) - energy0);
  out.v[2] = max_abs(model.phi(ModelD::q_of(phys)));
  out.v[3] = max_abs(model.psi(phys));
  bool ok = all_finite(Vec<double, 3>{{out.v[1], out.v[2], out.v[3]}});
  if constexpr (Model::has_momentum_integrals) {
    const auto d = model.momentum_integrals(phys) - integrals0;
    out.v[4] = sqrt(d[0] * d[0] + d[1] * d[1]);
    out.v[5] = fabs(d[2]);
    ok = ok && all_finite(Vec<double, 2>{{out.v[4], out.v[5]}});
  } else {
    out.v[4] = out.v[5] = 0.0;
  }
  out.v[6] = 0.0;
  out.v[7] = 0.0;  // set by measure(), which knows the time
  if constexpr (has_tangents_v<System>) {
    if constexpr (System::has_wedge) {
      // omega(0) = 1 by the choice of initial tangents (geometry/tangent_system.hpp).
      out.v[6] = fabs(static_cast<double>(System::wedge(z)) - 1.0);
      ok = ok && all_finite(Vec<double, 1>{{out.v[6]}});
    }
  }
  out.v[0] = 0.0;
  return ok;
}

template <class System>
CHENS_HD bool measure_state(const System& sys, const typename System::State& z, double energy0,
                            const Vec<double, 3>& integrals0, Metrics<double>& out) {
  const auto model = sys.model.template rebound<double>();
  const auto phys = vec_cast<double>(sys.physical(z));
  return measure_physical(sys, z, model, phys, energy0, integrals0, out);
}

// Every metric at time t (RunParams::reference_time): measure_state's, and the integration
// error against the reference where there is one.
template <class System, class Reference>
CHENS_HD bool measure(const System& sys, const typename System::State& z, double energy0, const Vec<double, 3>& integrals0,
                      const Reference& ref, double t, Metrics<double>& out) {
  using std::sqrt;
  const auto model = sys.model.template rebound<double>();
  const auto phys = vec_cast<double>(sys.physical(z));
  bool ok = measure_physical(sys, z, model, phys, energy0, integrals0, out);
  if constexpr (has_tangents_v<System>) {
    out.v[7] = sys.lyapunov_exponent(z, t);
    ok = ok && all_finite(Vec<double, 1>{{out.v[7]}});
  }
  if constexpr (Reference::available) {
    if (ref.enabled()) {
      const auto d = phys - vec_cast<double>(ref.eval(t));
      if constexpr (is_slice_vec_v<std::decay_t<decltype(d)>>) {
        // A thread group's instance (ensemble/group_segment.hpp): the squares summed over the
        // lanes in the whole state's order, as dot() sums them, so every lane has the
        // one-thread value.
        out.v[0] = sqrt(decltype(model)::ordered_state_dot(d, d));
      } else {
        out.v[0] = sqrt(dot(d, d));
      }
      ok = ok && all_finite(Vec<double, 1>{{out.v[0]}});
    }
  }
  return ok;
}

}  // namespace chens
