// Closed-form solution of the pendulum in Jacobi elliptic functions, mapped back to
// Cartesian (x, y, px, py). The state-space form is theta'' = -(g/l) sin(theta) with
// x = l sin(theta), y = -l cos(theta) (gravity along -y, 001 §3, 002 §6), and
// p = m l theta' (cos theta, sin theta). With w^2 = g/l and the energy per m l^2
// E = theta'^2/2 - w^2 cos(theta), kappa^2 = (E + w^2) / (2 w^2) (Lawden, Elliptic
// Functions and Applications, §5.2):
//   libration (kappa < 1): sin(theta/2) = kappa sn(w t + u0 | kappa^2),
//                          cos(theta/2) = dn(.), theta' = 2 kappa w cn(.);
//   rotation  (kappa > 1): theta/2 = am(s w t / k + u0 | k^2), k = 1/kappa, s = sign(theta'),
//                          theta' = 2 s (w/k) dn(.);
//   separatrix (kappa = 1): sin(theta/2) = tanh(s w t + u0), theta' = 2 s w sech(.);
//   no gravity (g = 0):     theta = theta0 + theta' t.
// Evaluating it costs nothing per integration step: the reference is computed only at
// sample times. Initial data off the constraint manifold are first projected onto it
// (radially for q, mass-orthogonally for p) and the projection is reported.
#pragma once

#include <cmath>

#include <limits>

#include <chens/config.hpp>
#include <chens/models/pendulum.hpp>
#include <chens/reference/elliptic.hpp>

namespace chens {

template <class Real>
struct PendulumExact {
  static constexpr bool available = true;
  static constexpr bool advancing = false;
  enum Regime : int { rest = 0, libration = 1, rotation = 2, separatrix = 3, free_rotation = 4 };
  Real l, m;                // length and mass (to map back to Cartesian momenta)
  Real w;                   // sqrt(g / l)
  Real param;               // elliptic parameter: kappa^2 (libration) or k^2 = 1/kappa^2 (rotation)
  Real kk;                  // K(param)
  Real scale;               // kappa (libration), 1/k (rotation), 1 (separatrix)
  Real u0;                  // argument at t = 0
  Real sign;                // direction of rotation (rotation, separatrix)
  Real theta0;              // rest angle (rest)
  JacobiTheta<Real> theta;  // fast sn, cn, dn for this instance's parameter (when usable)
  int regime;
  bool projected;  // initial data were moved onto the constraint manifold
  bool on = true;  // false: the run asked for no reference (RunParams::reference)
  CHENS_HD bool enabled() const { return on; }

  // sn, cn, dn of (u | param): reduce u modulo 2K, then theta functions or the AGM.
  CHENS_HD JacobiSnCnDn<Real> sncndn(Real u) const {
    using std::floor;
    const Real n = floor(u / (Real(2) * kk) + Real(0.5));
    const Real ur = u - Real(2) * kk * n;
    JacobiSnCnDn<Real> j = theta.usable ? theta.eval(ur) : jacobi(ur, param, kk);
    if (static_cast<long long>(n) & 1) {  // |n| < 2^53: exact
      j.sn = -j.sn;
      j.cn = -j.cn;
    }
    return j;
  }

  // Period of the motion in theta (libration: full swing, rotation: one revolution).
  CHENS_HD Real period() const {
    if (regime == libration) return Real(4) * kk / w;
    if (regime == rotation) return Real(2) * kk * std::sqrt(param) / w;
    if (regime == free_rotation && u0 != Real(0))
      return Real(2) * Real(3.141592653589793238462643383279502884L) / std::fabs(u0);
    return std::numeric_limits<Real>::quiet_NaN();  // rest: undefined; separatrix: infinite
  }

  // The reference of one ensemble instance, or a disabled one when the run asks for none.
  template <bool Unit, class RP>
  CHENS_HD static PendulumExact make(const Pendulum<Real, Unit>& model, const Vec<Real, 4>& z_in, const RP& rp) {
    if (rp.reference) return make(model, z_in);
    PendulumExact r{};
    r.on = false;
    r.projected = false;
    return r;
  }

  template <bool Unit>
  CHENS_HD static PendulumExact make(const Pendulum<Real, Unit>& model, const Vec<Real, 4>& z_in) {
    using std::atan2;
    using std::fabs;
    using std::log;
    using std::sqrt;
    PendulumExact r;
    r.l = model.l;
    r.m = model.m;
    r.w = sqrt(model.g / model.l);
    r.kk = Real(0);
    r.param = Real(0);
    r.scale = Real(1);
    r.u0 = Real(0);
    r.sign = Real(1);
    r.theta0 = Real(0);
    r.theta = JacobiTheta<Real>{};
    r.theta.usable = false;
    // Onto the manifold: q radially to length l, then the mass-orthogonal momentum
    // projection (002 eq. 68).
    Real x = z_in[0], y = z_in[1], px = z_in[2], py = z_in[3];
    const Real rr = sqrt(x * x + y * y);
    const Real qp = x * px + y * py;
    const Real tol = Real(64) * Real(2.220446049250313e-16);
    r.projected = fabs(rr - model.l) > tol * model.l ||
                  fabs(qp) > tol * model.l * (fabs(px) + fabs(py) + model.m * r.w * model.l);
    x = x * model.l / rr;
    y = y * model.l / rr;
    const Real lam = (x * px + y * py) / (model.l * model.l);
    px = px - lam * x;
    py = py - lam * y;
    const Real th = atan2(x, -y);
    const Real thd = (x * py - y * px) / (model.m * model.l * model.l);
    const Real w2 = r.w * r.w;
    if (w2 == Real(0)) {  // no gravity: uniform rotation theta = theta0 + theta' t
      r.regime = free_rotation;
      r.theta0 = th;
      r.u0 = thd;
      return r;
    }
    // kappa^2 = (E + w^2)/(2 w^2) = sin^2(th/2) + (thd / (2w))^2, written without cancellation.
    const Real s_half = std::sin(th / Real(2));
    const Real kap2 = s_half * s_half + (thd * thd) / (Real(4) * w2);
    if (kap2 == Real(0)) {
      r.regime = rest;
      r.theta0 = th;
      r.u0 = Real(0);
      return r;
    }
    const Real sep_tol = Real(1e-15);
    if (fabs(kap2 - Real(1)) <= sep_tol) {
      r.regime = separatrix;
      r.sign = thd >= Real(0) ? Real(1) : Real(-1);
      // sin(th/2) = tanh(u0)  ->  u0 = atanh(sin(th/2)).
      const Real s = s_half;
      r.u0 = Real(0.5) * log((Real(1) + s) / (Real(1) - s));
      return r;
    }
    if (kap2 < Real(1)) {
      r.regime = libration;
      r.param = kap2;
      r.kk = ellint_k(kap2);
      r.scale = sqrt(kap2);
      // sn(u0) = sin(th/2)/kappa, cn(u0) = thd/(2 kappa w): amplitude alpha0 = am(u0).
      const Real alpha0 = atan2(s_half / r.scale, thd / (Real(2) * r.scale * r.w));
      r.u0 = ellint_f(alpha0, kap2);
      r.theta = JacobiTheta<Real>::make(kap2, r.kk);
      return r;
    }
    r.regime = rotation;
    r.param = Real(1) / kap2;
    r.kk = ellint_k(r.param);
    r.scale = sqrt(kap2);  // 1/k
    r.sign = thd >= Real(0) ? Real(1) : Real(-1);
    // cppcheck-suppress redundantAssignment ; every field is first set to a default above
    r.u0 = ellint_f(th / Real(2), r.param);
    r.theta = JacobiTheta<Real>::make(r.param, r.kk);
    return r;
  }

  // Exact (x, y, px, py) at time t.
  CHENS_HD Vec<Real, 4> eval(Real t) const {
    using std::cosh;
    using std::cos;
    using std::sin;
    using std::tanh;
    Real s, c, thd;  // sin(theta/2), cos(theta/2), theta'
    if (regime == rest || regime == free_rotation) {
      const Real half = (theta0 + u0 * t) / Real(2);  // u0 = theta' (0 at rest)
      s = sin(half);
      c = cos(half);
      thd = u0;
    } else if (regime == libration) {
      const auto j = sncndn(w * t + u0);
      s = scale * j.sn;
      c = j.dn;
      thd = Real(2) * scale * w * j.cn;
    } else if (regime == rotation) {
      const auto j = sncndn(sign * w * scale * t + u0);
      s = j.sn;
      c = j.cn;
      thd = Real(2) * sign * w * scale * j.dn;
    } else {
      const Real u = sign * w * t + u0;
      s = tanh(u);
      c = Real(1) / cosh(u);
      thd = Real(2) * sign * w * c;
    }
    const Real sin_th = Real(2) * s * c;
    const Real cos_th = c * c - s * s;
    const Real pm = m * l * thd;
    return Vec<Real, 4>{{l * sin_th, -l * cos_th, pm * cos_th, pm * sin_th}};
  }
};

}  // namespace chens
