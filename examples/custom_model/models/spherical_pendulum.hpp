// The spherical pendulum in 3D Cartesian coordinates (issue 19; docs/models/spherical-pendulum.md):
// a bob of mass m on a rod of length l about the origin, gravity g along -z,
//   H = |p|^2 / (2 m) + m g z,   phi = (|q|^2 - l^2) / 2.
// Gravity and the pivot leave the rotations about the vertical axis a symmetry, so the
// angular momentum L_z = x p_y - y p_x is a first integral (Noether); chens reports its
// drift as angular_momentum_error. RATTLE conserves it exactly up to round-off (it is a
// quadratic invariant of a symmetry of H and phi: Leimkuhler & Reich, Simulating
// Hamiltonian Dynamics, §7.4).
#pragma once

#include <cmath>

#include <chens/models/auto_model.hpp>

struct SphericalPendulum {
  static constexpr const char* name = "spherical-pendulum";
  static constexpr int dof = 3;
  static constexpr int constraints = 1;
  static constexpr chens::ModelParameter parameters[] = {
      {"mass", 1.0, "mass of the bob"}, {"length", 1.0, "length of the rod"}, {"gravity", 1.0, "gravity along -z"}};
  static constexpr const char* coordinates[] = {"x", "y", "z"};

  template <class K>
  CHENS_HD static auto mass(const K& k, int) {
    return k[0];
  }
  template <class T, class K>
  CHENS_HD static T potential(const K& k, const chens::Vec<T, 3>& q) {
    return (k[0] * k[2]) * q[2];
  }
  template <class T, class K>
  CHENS_HD static chens::Vec<T, 1> constraint(const K& k, const chens::Vec<T, 3>& q) {
    return chens::Vec<T, 1>{{(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] - k[1] * k[1]) / 2}};
  }
  template <class K>
  CHENS_HD static auto constraint_scale(const K& k) {
    return k[1] * k[1];
  }
  template <class T, class K>
  CHENS_HD static T angular_momentum(const K&, const chens::Vec<T, 3>& q, const chens::Vec<T, 3>& p) {
    return q[0] * p[1] - q[1] * p[0];
  }
  // Polar angle theta0 = 1 from the downward vertical, azimuth 0, angular velocities
  // (theta', varphi') = (0.3, 1.2): q = l (sin t, 0, -cos t), v = l (t' cos t, varphi' sin t, t' sin t),
  // tangent to the sphere (q . v = 0), p = m v.
  static void initial(const double* k, double* z);
};

inline void SphericalPendulum::initial(const double* k, double* z) {
  const double m = k[0], l = k[1], t = 1.0, dt = 0.3, dphi = 1.2;
  const double s = std::sin(t), c = std::cos(t);
  z[0] = l * s;
  z[1] = 0.0;
  z[2] = -l * c;
  z[3] = m * l * dt * c;
  z[4] = m * l * dphi * s;
  z[5] = m * l * dt * s;
}
