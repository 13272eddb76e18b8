// The double pendulum in angle coordinates, written apart from chens (not its models, formulations
// or integrators): Lagrange's equations, RK4, forward-mode numbers of its own, and the maps
// between angles and chens's Cartesian (q, p). The independent side of the Lyapunov tests
// (tests/test_lyapunov.cpp, tests/test_lyapunov_runs.cpp).
#pragma once

#include <cmath>

#include <chens/models/double_pendulum.hpp>

namespace chens::test::angles {

// Forward-mode numbers of its own (value, derivative along one direction).
struct Fwd {
  double v = 0, d = 0;
  Fwd() = default;
  Fwd(double value, double derivative = 0) : v(value), d(derivative) {}  // NOLINT: constants mix in
};
inline Fwd operator+(Fwd a, Fwd b) { return {a.v + b.v, a.d + b.d}; }
inline Fwd operator-(Fwd a, Fwd b) { return {a.v - b.v, a.d - b.d}; }
inline Fwd operator-(Fwd a) { return {-a.v, -a.d}; }
inline Fwd operator*(Fwd a, Fwd b) { return {a.v * b.v, a.d * b.v + a.v * b.d}; }
inline Fwd operator*(double s, Fwd a) { return {s * a.v, s * a.d}; }
inline Fwd operator/(Fwd a, Fwd b) { return {a.v / b.v, (a.d * b.v - a.v * b.d) / (b.v * b.v)}; }
inline Fwd sin(Fwd a) { return {std::sin(a.v), std::cos(a.v) * a.d}; }
inline Fwd cos(Fwd a) { return {std::cos(a.v), -std::sin(a.v) * a.d}; }

struct Params {
  double m1 = 1, m2 = 1, l1 = 1, l2 = 1, g = 1;
};

// y = (theta1, theta2, omega1, omega2), angles from the downward vertical; Lagrange's
// equations of the planar double pendulum (e.g. Goldstein; myphysicslab's form).
template <class T>
inline void angle_rhs(const Params& P, const T (&y)[4], T (&dy)[4]) {
  const T d = y[0] - y[1];
  const T den = (2 * P.m1 + P.m2) - P.m2 * cos(2.0 * d);
  const T w1s = y[2] * y[2], w2s = y[3] * y[3];
  dy[0] = y[2];
  dy[1] = y[3];
  dy[2] = (-(P.g * (2 * P.m1 + P.m2)) * sin(y[0]) - (P.m2 * P.g) * sin(y[0] - 2.0 * y[1]) -
           (2 * P.m2) * sin(d) * (P.l2 * w2s + P.l1 * w1s * cos(d))) /
          (P.l1 * den);
  dy[3] =
      (2.0 * sin(d) * ((P.l1 * (P.m1 + P.m2)) * w1s + (P.g * (P.m1 + P.m2)) * cos(y[0]) + (P.l2 * P.m2) * w2s * cos(d))) /
      (P.l2 * den);
}

template <class T>
inline void angle_rk4(const Params& P, T (&y)[4], double h) {
  T k[4][4], s[4];
  angle_rhs(P, y, k[0]);
  for (int c = 0; c < 4; ++c) s[c] = y[c] + (0.5 * h) * k[0][c];
  angle_rhs(P, s, k[1]);
  for (int c = 0; c < 4; ++c) s[c] = y[c] + (0.5 * h) * k[1][c];
  angle_rhs(P, s, k[2]);
  for (int c = 0; c < 4; ++c) s[c] = y[c] + h * k[2][c];
  angle_rhs(P, s, k[3]);
  for (int c = 0; c < 4; ++c) y[c] = y[c] + (h / 6.0) * (k[0][c] + 2.0 * k[1][c] + 2.0 * k[2][c] + k[3][c]);
}

// (q, p) of the angles and the rates: q1 = l1 (sin, -cos)(theta1), q2 = q1 + l2 (sin, -cos)(theta2), p = M q'.
template <class T>
inline void cartesian(const Params& P, const T (&y)[4], T (&z)[8]) {
  const T s1 = sin(y[0]), c1 = cos(y[0]), s2 = sin(y[1]), c2 = cos(y[1]);
  z[0] = P.l1 * s1;
  z[1] = -(P.l1 * c1);
  z[2] = z[0] + P.l2 * s2;
  z[3] = z[1] - P.l2 * c2;
  const T vx1 = P.l1 * y[2] * c1, vy1 = P.l1 * y[2] * s1;
  z[4] = P.m1 * vx1;
  z[5] = P.m1 * vy1;
  z[6] = P.m2 * (vx1 + P.l2 * y[3] * c2);
  z[7] = P.m2 * (vy1 + P.l2 * y[3] * s2);
}

// The state and the tangent at (y, dy), in (q, p).
inline void cartesian_with_tangent(const Params& P, const double (&y)[4], const double (&dy)[4],
                                   DoublePendulum<double>::State& z, DoublePendulum<double>::State& dz) {
  Fwd a[4], out[8];
  for (int c = 0; c < 4; ++c) a[c] = {y[c], dy[c]};
  cartesian(P, a, out);
  for (int c = 0; c < 8; ++c) {
    z[c] = out[c].v;
    dz[c] = out[c].d;
  }
}

inline Fwd atan2(Fwd a, Fwd b) { return {std::atan2(a.v, b.v), (b.v * a.d - a.v * b.d) / (a.v * a.v + b.v * b.v)}; }

// The inverse of cartesian: the angles and rates of a state on the constraint manifold,
// theta_i = atan2 of link i's direction (sin, -cos), omega_i from link i's relative velocity
// along (cos, sin)(theta_i).
template <class T>
inline void angles_of(const Params& P, const T (&z)[8], T (&y)[4]) {
  const T dx2 = z[2] - z[0], dy2 = z[3] - z[1];
  y[0] = atan2(z[0], -z[1]);
  y[1] = atan2(dx2, -dy2);
  const T c1 = cos(y[0]), s1 = sin(y[0]), c2 = cos(y[1]), s2 = sin(y[1]);
  const T vx1 = (1.0 / P.m1) * z[4], vy1 = (1.0 / P.m1) * z[5];
  const T vx2 = (1.0 / P.m2) * z[6], vy2 = (1.0 / P.m2) * z[7];
  y[2] = (1.0 / P.l1) * (vx1 * c1 + vy1 * s1);
  y[3] = (1.0 / P.l2) * ((vx2 - vx1) * c2 + (vy2 - vy1) * s2);
}

// The angles and their tangent at (z, dz) in (q, p), dz tangent to the manifold.
inline void angles_with_tangent(const Params& P, const DoublePendulum<double>::State& z,
                                const DoublePendulum<double>::State& dz, double (&y)[4], double (&dy)[4]) {
  Fwd a[8], out[4];
  for (int c = 0; c < 8; ++c) a[c] = {z[c], dz[c]};
  angles_of(P, a, out);
  for (int c = 0; c < 4; ++c) {
    y[c] = out[c].v;
    dy[c] = out[c].d;
  }
}

}  // namespace chens::test::angles
