// First passages located inside the step (issue 43, item 4; docs/first_passage.md): when a
// metric checked after every step is over its level at the end of a step and was not at its
// start, its crossing time is the first root of  m(z(theta)) = level  on the step, z(theta)
// the cubic Hermite interpolant of the step from its end states and their derivatives
// (Hairer, Norsett & Wanner, Solving ODEs I, §II.6):
//   z(theta) = h00 z0 + h10 h f0 + h01 z1 + h11 h f1,
//   h00 = (1 + 2 theta)(1 - theta)^2, h10 = theta (1 - theta)^2,
//   h01 = theta^2 (3 - 2 theta),      h11 = theta^2 (theta - 1),
// whose error is O(h^4) over the step. A crossing time is so located to O(h^min(p, 4)) for a
// fixed-step method of order p (RK4: its own order; RATTLE's compositions of order 6 and 8:
// 4), where the end of the step was O(h) off. DOPRI5 adds the quartic term of its continuous
// extension of order 4 (Dopri5Tableau::d), DOP853 the four terms of its extension of order 7
// (Dop853Tableau's dense stages), Vern9 the six of its interpolant of order 9 (10 more stages,
// integrators/vern9_interpolant.hpp), so their located times are as accurate as their steps.
// tests/test_first_passage.cpp and tests/test_high_order_pairs.cpp
// check the orders against crossings and solutions known in closed form.
//
// The derivative f is the vector field whose flow the method approximates
// (flow_derivative): the formulation's right-hand side; for the constrained system, which has
// none (RATTLE), the Hamilton-Dirac field (002 eq. 17), which on the manifold RATTLE keeps
// (phi = psi = 0) is the constrained flow itself; for a tangent system (output.wedge), that
// field over dual numbers, i.e. the variational equations that carry the tangents.
//
// The search: the interpolant's metric at theta = j/8 (j = 1..8; theta = 1 is z1 exactly)
// brackets the first crossing among them, then bisection halves the bracket to the last bit
// of theta, and the crossing time is the bracket's upper end (a point whose value is over the
// level, as a crossing is defined; > t0, <= t1). A value that is NaN is not over the level, as
// in note_crossings. The work (two right-hand sides, about 60 evaluations of the metrics) is
// spent once per instance and level, and counted in no counter: it is the diagnostic's, not
// the integration's. Nothing of the state is changed, so every other number of a run is the
// same with and without it.
#pragma once

#include <type_traits>
#include <utility>

#include <chens/config.hpp>
#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/passage.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/geometry/tangent_system.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

template <class System, class = void>
struct has_rhs : std::false_type {};
template <class System>
struct has_rhs<System, std::void_t<decltype(std::declval<const System&>().rhs(std::declval<const typename System::State&>(),
                                                                              std::declval<typename System::State&>()))>>
    : std::true_type {};

// The vector field the method's solution follows at z (see above).
template <class System>
CHENS_HD void flow_derivative(const System& sys, const typename System::State& z, typename System::State& dz) {
  if constexpr (has_tangents_v<System>) {
    const auto dsys = sys.dual();
    const auto zd = System::unpack(z);
    auto dzd = zd;
    flow_derivative(dsys, zd, dzd);
    dz = System::pack(dzd);
  } else if constexpr (has_rhs<System>::value) {
    eval_rhs(sys, z, dz);
  } else {
    hamilton_dirac_rhs(sys.model, z, dz);  // the constrained system (formulations/constrained.hpp)
  }
}

// One step's interpolant: the cubic Hermite of its ends, plus theta^2 (1 - theta)^2 p(theta)
// where the method has a continuous extension of higher order, in the nested form of
// Hairer's codes (CONTD5, CONTD8):
//   p(theta) = c0                                              (DOPRI5: Terms = 1, order 4)
//   p(theta) = c0 + theta (c1 + (1 - theta) (c2 + theta c3))   (DOP853: Terms = 4, order 7)
//   p(theta) = c0 + theta (c1 + theta (c2 + ... + theta c5))   (Vern9: Terms = 6, order 9;
//                                                               integrators/vern9_interpolant.hpp)
// c_i = correction[i], `terms` of them filled (0: the cubic Hermite alone). Rodas5P's dense
// output (Terms = 3, order 4; integrators/rodas5p.hpp, Rodas5P::interpolate) interpolates no
// derivative, which in a stiff problem h f would make large: it replaces the Hermite,
//   z(theta) = (1 - theta) z0 + theta (z1 + (1 - theta) (c0 + theta (c1 + theta c2))).
template <class System, int Terms = 1>
struct StepInterpolant {
  static_assert(Terms == 1 || Terms == 3 || Terms == 4 || Terms == 6,
                "the continuous extensions of DOPRI5 (1 term), Rodas5P (3), DOP853 (4) and Vern9 (6)");
  using Real = typename System::Real;
  using State = typename System::State;
  const State& z0;
  const State& z1;
  State hf0;  // h f(z0)
  State hf1;  // h f(z1)
  State correction[Terms];
  int terms = 0;

  CHENS_HD State at(double theta_d) const {
    const Real theta = static_cast<Real>(theta_d);
    const Real u = Real(1) - theta;
    const Real h00 = (Real(1) + Real(2) * theta) * u * u;
    const Real h10 = theta * u * u;
    const Real h01 = theta * theta * (Real(3) - Real(2) * theta);
    const Real h11 = -(theta * theta * u);
    const Real h4 = theta * theta * u * u;
    State z;
    for (int c = 0; c < State::size; ++c) {
      if constexpr (Terms == 3) {
        if (terms == 3) {
          const Real p = correction[0][c] + theta * (correction[1][c] + theta * correction[2][c]);
          z[c] = u * z0[c] + theta * (z1[c] + u * p);
          continue;
        }
      }
      z[c] = h00 * z0[c] + h10 * hf0[c] + h01 * z1[c] + h11 * hf1[c];
      if (terms == 1) {
        z[c] = z[c] + h4 * correction[0][c];
      } else if constexpr (Terms == 4) {
        if (terms == 4) {
          const Real p = correction[0][c] + theta * (correction[1][c] + u * (correction[2][c] + theta * correction[3][c]));
          z[c] = z[c] + h4 * p;
        }
      } else if constexpr (Terms == 6) {
        if (terms == 6) {
          Real p = correction[5][c];
          for (int r = 4; r >= 0; --r) p = correction[r][c] + theta * p;
          z[c] = z[c] + h4 * p;
        }
      }
    }
    return z;
  }
};

// The derivatives at a fixed-step method's ends, evaluated (on a crossing only); no term of
// higher order.
struct EvaluatedEnds {
  template <class System>
  CHENS_HD void operator()(const System& sys, StepInterpolant<System, 1>& it, typename System::Real h) const {
    typename System::State f;
    flow_derivative(sys, it.z0, f);
    for (int c = 0; c < System::State::size; ++c) it.hf0[c] = h * f[c];
    flow_derivative(sys, it.z1, f);
    for (int c = 0; c < System::State::size; ++c) it.hf1[c] = h * f[c];
  }
};

// The fraction theta in (0, 1] of the step at which metric m first exceeds `level` on the
// interpolant; the caller knows it does at theta = 1 (z1).
template <class System, int Terms>
CHENS_HD double first_crossing_in_step(const System& sys, const StepInterpolant<System, Terms>& it, int m, double level,
                                       double energy0, const Vec<double, 3>& integrals0) {
  const auto over = [&](double theta) {
    Metrics<double> v;
    measure_state(sys, it.at(theta), energy0, integrals0, v);
    return v.v[m] > level;
  };
  constexpr int coarse = 8;
  double lo = 0.0, hi = 1.0;
  for (int j = 1; j < coarse; ++j) {
    const double theta = double(j) / double(coarse);
    if (over(theta)) {
      hi = theta;
      break;
    }
    lo = theta;
  }
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (!(mid > lo && mid < hi)) break;
    if (over(mid)) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return hi;
}

// After an accepted step from (t0, z0) to (t1, z1), h = the step's size: the per-step
// metrics of z1 (measure_state, the very values measure() reports at a sample), and for each
// that newly exceeds its level, its crossing located on the step. `ends` fills the
// interpolant's end derivatives (and the terms of a continuous extension, Terms of them at
// most), on a crossing only: EvaluatedEnds for fixed-step methods, an adaptive pair's stages
// for it. The caller checks levels.per_step first.
template <int Terms = 1, class System, class Ends = EvaluatedEnds>
CHENS_HD void note_step_crossings(const System& sys, const PassageLevels& levels, const typename System::State& z0,
                                  const typename System::State& z1, typename System::Real h, double t0, double t1,
                                  double energy0, const Vec<double, 3>& integrals0, Passage& p, const Ends& ends = Ends{}) {
  Metrics<double> m;
  measure_state(sys, z1, energy0, integrals0, m);
  unsigned crossed = 0;
  for (int c = 0; c < metric_count; ++c)
    if (levels.on(c) && passage_per_step(c) && p.first[c] == INFINITY && m.v[c] > levels.level[c]) crossed |= 1u << c;
  if (crossed == 0u) return;
  StepInterpolant<System, Terms> it{z0, z1, {}, {}, {}, 0};
  ends(sys, it, h);
  for (int c = 0; c < metric_count; ++c) {
    if (((crossed >> c) & 1u) == 0u) continue;
    const double theta = first_crossing_in_step(sys, it, c, levels.level[c], energy0, integrals0);
    p.first[c] = theta == 1.0 ? t1 : t0 + (t1 - t0) * theta;
  }
}

}  // namespace chens
