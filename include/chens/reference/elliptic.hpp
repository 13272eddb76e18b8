// Elliptic integrals and Jacobi elliptic functions for the closed-form pendulum
// reference, host/device, no tables. Parameter convention: m = k^2 (A&S 16.1).
//   carlson_rf: Carlson's symmetric integral R_F (Carlson 1995, Numer. Algorithms 10),
//               duplication to ERRTOL = 1e-3, remainder series to fifth order
//               (truncation error about ERRTOL^6 / 4 < 1e-18).
//   ellint_f:   incomplete F(phi | m) = sin(phi) R_F(cos^2 phi, 1 - m sin^2 phi, 1), any phi.
//   jacobi:     sn, cn by the arithmetic-geometric mean (A&S 16.4.3) after reducing u
//               modulo 2K so the AGM never sees a large argument; dn from sqrt((1-m) + m cn^2).
//   JacobiTheta: sn, cn, dn as quotients of theta functions (DLMF 22.2.4-22.2.6) with the
//               nome q = exp(-pi K'/K) fixed per parameter: one sine and cosine plus a few
//               products per evaluation, about ten times cheaper than the AGM's chain of
//               arcsines. Used for 1e-8 <= m with q <= 1/4 (m up to about 0.993), where at
//               most seven terms reach 1e-18; elsewhere the AGM is used.
#pragma once

#include <cmath>

#include <chens/config.hpp>

namespace chens {

template <class Real>
CHENS_HD Real carlson_rf(Real x, Real y, Real z) {
  using std::fabs;
  using std::fmax;
  using std::sqrt;
  const Real errtol = Real(1e-3);
  Real xt = x, yt = y, zt = z, a, dx, dy, dz;
  for (int it = 0; it < 200; ++it) {
    const Real sx = sqrt(xt), sy = sqrt(yt), sz = sqrt(zt);
    const Real lam = sx * (sy + sz) + sy * sz;
    xt = Real(0.25) * (xt + lam);
    yt = Real(0.25) * (yt + lam);
    zt = Real(0.25) * (zt + lam);
    a = (xt + yt + zt) / Real(3);
    dx = (a - xt) / a;
    dy = (a - yt) / a;
    dz = (a - zt) / a;
    const Real dev = fmax(fabs(dx), fmax(fabs(dy), fabs(dz)));
    if (dev < errtol) break;
  }
  const Real e2 = dx * dy - dz * dz;
  const Real e3 = dx * dy * dz;
  return (Real(1) + (Real(1) / Real(24) * e2 - Real(0.1) - Real(3) / Real(44) * e3) * e2 + Real(1) / Real(14) * e3) /
         sqrt(a);
}

// Complete integral of the first kind K(m), 0 <= m < 1.
template <class Real>
CHENS_HD Real ellint_k(Real m) {
  return carlson_rf(Real(0), Real(1) - m, Real(1));
}

// Incomplete integral of the first kind F(phi | m) for any real phi (quasi-periodic:
// F(phi + n pi) = F(phi) + 2 n K).
template <class Real>
CHENS_HD Real ellint_f(Real phi, Real m) {
  using std::cos;
  using std::floor;
  using std::sin;
  const Real pi = Real(3.141592653589793238462643383279502884L);
  const Real n = floor(phi / pi + Real(0.5));
  const Real r = phi - n * pi;  // |r| <= pi/2
  const Real s = sin(r), c = cos(r);
  Real f = s * carlson_rf(c * c, Real(1) - m * s * s, Real(1));
  if (n != Real(0)) f = f + Real(2) * n * ellint_k(m);
  return f;
}

template <class Real>
struct JacobiSnCnDn {
  Real sn, cn, dn;
};

// sn, cn, dn of (u | m) for 0 <= m < 1; kk = K(m) is passed in so callers reuse it.
template <class Real>
CHENS_HD JacobiSnCnDn<Real> jacobi(Real u, Real m, Real kk) {
  using std::asin;
  using std::cos;
  using std::fabs;
  using std::floor;
  using std::fmod;
  using std::sin;
  using std::sqrt;
  // u = u_r + 2 K n with |u_r| <= K: sn, cn change sign with n odd, dn does not.
  const Real n = floor(u / (Real(2) * kk) + Real(0.5));
  const Real ur = u - Real(2) * kk * n;
  const bool flip = fabs(fmod(n, Real(2))) == Real(1);
  constexpr int max_levels = 24;
  Real a[max_levels + 1], c[max_levels + 1];
  a[0] = Real(1);
  Real b = sqrt(Real(1) - m);
  c[0] = sqrt(m);
  int levels = 0;
  Real two_n = Real(1);
  while (levels < max_levels && fabs(c[levels]) > Real(4e-17) * a[levels]) {
    const Real an = a[levels];
    a[levels + 1] = Real(0.5) * (an + b);
    c[levels + 1] = Real(0.5) * (an - b);
    b = sqrt(an * b);
    ++levels;
    two_n = two_n * Real(2);
  }
  Real phi = two_n * a[levels] * ur;
  for (int lv = levels; lv >= 1; --lv) phi = Real(0.5) * (phi + asin(c[lv] * sin(phi) / a[lv]));
  JacobiSnCnDn<Real> r;
  r.sn = sin(phi);
  r.cn = cos(phi);
  // dn^2 = 1 - m sn^2 = (1 - m) + m cn^2: a sum of non-negative terms, accurate also at
  // the quarter period, where A&S's cos(phi_0)/cos(phi_1 - phi_0) is 0/0.
  r.dn = sqrt((Real(1) - m) + m * r.cn * r.cn);
  if (flip) {
    r.sn = -r.sn;
    r.cn = -r.cn;
  }
  return r;
}

// Jacobi elliptic functions through theta functions of nome q (DLMF 20.2.1-20.2.4):
//   theta1 = 2 q^(1/4) S1, S1 = sum_n (-1)^n q^(n(n+1)) sin((2n+1)z),
//   theta2 = 2 q^(1/4) S2, S2 = sum_n q^(n(n+1)) cos((2n+1)z),
//   theta3 = 1 + 2 sum_n q^(n^2) cos(2nz),  theta4 = 1 + 2 sum_n (-1)^n q^(n^2) cos(2nz),
// z = pi u / (2K); sn = (theta3(0)/theta2(0)) theta1/theta4 = c_sn S1/theta4,
// cn = (theta4(0)/theta2(0)) theta2/theta4 = c_cn S2/theta4, dn = (theta4(0)/theta3(0))
// theta3/theta4 (DLMF 22.2.4-22.2.6). The common factor 2 q^(1/4) cancels.
template <class Real>
struct JacobiTheta {
  static constexpr int max_terms = 8;
  Real q;        // nome
  Real z_per_u;  // pi / (2K)
  Real c_sn, c_cn, c_dn;
  bool usable;  // false: use jacobi() (the AGM) instead

  struct Sums {
    Real s1, s2, t3, t4;
  };
  CHENS_HD Sums sums(Real z) const {
    using std::cos;
    using std::sin;
    const Real s = sin(z), c = cos(z);
    const Real c2 = c * c - s * s, s2 = Real(2) * s * c;  // e^{2iz}
    Real co = c, so = s;                                  // e^{i(2n+1)z}
    Real ce = c2, se = s2;                                // e^{i 2n z}
    Real a = Real(1), b = q;                              // q^(n(n+1)) from n = 0, q^(n^2) from n = 1
    Real q2n = q * q;                                     // q^(2n) for n = 1
    Sums r{so, co, Real(1), Real(1)};
    Real sign = Real(-1);
    for (int n = 1; n < max_terms; ++n) {
      r.t3 = r.t3 + Real(2) * b * ce;
      r.t4 = r.t4 + Real(2) * sign * b * ce;
      a = a * q2n;  // q^(n(n+1))
      const Real co_n = co * c2 - so * s2, so_n = so * c2 + co * s2;
      co = co_n;
      so = so_n;
      r.s1 = r.s1 + sign * a * so;
      r.s2 = r.s2 + a * co;
      const Real ce_n = ce * c2 - se * s2, se_n = se * c2 + ce * s2;
      ce = ce_n;
      se = se_n;
      b = b * q2n * q;  // q^((n+1)^2) = q^(n^2) q^(2n+1)
      q2n = q2n * q * q;
      sign = -sign;
      if (b < Real(1e-18)) break;
    }
    return r;
  }

  CHENS_HD static JacobiTheta make(Real m, Real kk) {
    using std::exp;
    JacobiTheta t;
    const Real pi = Real(3.141592653589793238462643383279502884L);
    t.q = Real(0);
    t.z_per_u = pi / (Real(2) * kk);
    t.c_sn = t.c_cn = t.c_dn = Real(0);
    t.usable = false;
    if (!(m >= Real(1e-8)) || !(m < Real(1))) return t;
    t.q = exp(-pi * ellint_k(Real(1) - m) / kk);
    if (!(t.q <= Real(0.25))) return t;
    const Sums zero = t.sums(Real(0));  // S2(0), theta3(0), theta4(0)
    t.c_sn = zero.t3 / zero.s2;
    t.c_cn = zero.t4 / zero.s2;
    t.c_dn = zero.t4 / zero.t3;
    t.usable = true;
    return t;
  }

  CHENS_HD JacobiSnCnDn<Real> eval(Real u) const {
    const Sums r = sums(z_per_u * u);
    const Real inv4 = Real(1) / r.t4;
    return JacobiSnCnDn<Real>{c_sn * r.s1 * inv4, c_cn * r.s2 * inv4, c_dn * r.t3 * inv4};
  }
};

}  // namespace chens
