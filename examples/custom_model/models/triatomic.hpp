// A rigid triatomic molecule in 3D (issue 19; docs/models/triatomic.md): three atoms of masses
// m1, m2, m3 at r1, r2, r3 (q = 9 numbers), held rigid by three distance constraints
//   phi_12 = (|r1 - r2|^2 - b12^2) / 2,  phi_23 = (|r2 - r3|^2 - b23^2) / 2,
//   phi_13 = (|r1 - r3|^2 - b13^2) / 2,
// (the chain's bond convention, 002 eq. 40, closed into a triangle), in an anisotropic
// harmonic trap V = sum_a (kx x_a^2 + ky y_a^2 + kz z_a^2) / 2. The trap breaks every
// rotational symmetry (kx, ky, kz differ), so H is the only first integral; with
// kx = ky the rotations about z survive and L_z = sum_a (x_a p_ya - y_a p_xa) is conserved,
// which the tests use. J has full rank (Q is SPD) unless the three atoms are collinear.
#pragma once

#include <cmath>

#include <chens/models/auto_model.hpp>

struct Triatomic {
  static constexpr const char* name = "triatomic";
  static constexpr int dof = 9;
  static constexpr int constraints = 3;
  static constexpr chens::ModelParameter parameters[] = {
      {"m1", 1.0, "mass of atom 1"},         {"m2", 16.0, "mass of atom 2"},
      {"m3", 1.0, "mass of atom 3"},         {"b12", 1.0, "bond length |r1 - r2|"},
      {"b23", 1.0, "bond length |r2 - r3|"}, {"b13", 1.6, "distance |r1 - r3| (rigid angle)"},
      {"kx", 1.0, "trap stiffness along x"}, {"ky", 1.5, "trap stiffness along y"},
      {"kz", 2.0, "trap stiffness along z"}};
  static constexpr const char* coordinates[] = {"x1", "y1", "z1", "x2", "y2", "z2", "x3", "y3", "z3"};

  template <class K>
  CHENS_HD static auto mass(const K& k, int i) {
    return k[i / 3];
  }
  template <class T, class K>
  CHENS_HD static T potential(const K& k, const chens::Vec<T, 9>& q) {
    T v = T(0);
    for (int a = 0; a < 3; ++a)
      v = v + (k[6] * (q[3 * a] * q[3 * a]) + k[7] * (q[3 * a + 1] * q[3 * a + 1]) + k[8] * (q[3 * a + 2] * q[3 * a + 2]));
    return v / 2;
  }
  template <class T>
  CHENS_HD static T distance2(const chens::Vec<T, 9>& q, int a, int b) {
    const T dx = q[3 * a] - q[3 * b], dy = q[3 * a + 1] - q[3 * b + 1], dz = q[3 * a + 2] - q[3 * b + 2];
    return dx * dx + dy * dy + dz * dz;
  }
  template <class T, class K>
  CHENS_HD static chens::Vec<T, 3> constraint(const K& k, const chens::Vec<T, 9>& q) {
    return chens::Vec<T, 3>{{(distance2(q, 0, 1) - k[3] * k[3]) / 2, (distance2(q, 1, 2) - k[4] * k[4]) / 2,
                             (distance2(q, 0, 2) - k[5] * k[5]) / 2}};
  }
  template <class K>
  CHENS_HD static auto constraint_scale(const K& k) {
    return k[3] * k[3] + k[4] * k[4] + k[5] * k[5];
  }
  template <class T, class K>
  CHENS_HD static T angular_momentum(const K&, const chens::Vec<T, 9>& q, const chens::Vec<T, 9>& p) {
    T l = T(0);
    for (int a = 0; a < 3; ++a) l = l + (q[3 * a] * p[3 * a + 1] - q[3 * a + 1] * p[3 * a]);
    return l;
  }
  // The triangle of the three bond lengths in the plane z = 0 (r1 at the origin, r3 on the
  // x axis), shifted by c = (0.3, -0.2, 0.5), moving rigidly: v_a = V + w x (r_a - c) with
  // V = (0.2, 0.1, -0.3), w = (0.4, -0.7, 1.1), so that psi = 0 exactly in exact arithmetic.
  static void initial(const double* k, double* z) {
    const double b12 = k[3], b23 = k[4], b13 = k[5];
    const double x2 = (b12 * b12 - b23 * b23 + b13 * b13) / (2.0 * b13);
    const double y2 = std::sqrt(b12 * b12 - x2 * x2);  // NaN for an impossible triangle: refused
    const double r[3][3] = {{0.0, 0.0, 0.0}, {x2, y2, 0.0}, {b13, 0.0, 0.0}};
    const double c[3] = {0.3, -0.2, 0.5}, V[3] = {0.2, 0.1, -0.3}, w[3] = {0.4, -0.7, 1.1};
    for (int a = 0; a < 3; ++a) {
      const double* d = r[a];
      const double v[3] = {V[0] + w[1] * d[2] - w[2] * d[1], V[1] + w[2] * d[0] - w[0] * d[2],
                           V[2] + w[0] * d[1] - w[1] * d[0]};
      for (int j = 0; j < 3; ++j) {
        z[3 * a + j] = d[j] + c[j];
        z[9 + 3 * a + j] = k[a] * v[j];
      }
    }
  }
};
