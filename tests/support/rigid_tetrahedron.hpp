// A user model at the sizes issue 19 asks the GPU to hold in registers: four atoms in 3D
// (n = 12) held rigid by all six distances (m = 6), a regular tetrahedron of edge `edge` in
// a uniform field along -z. Test-only (tests/test_auto_model.cpp against the dense oracle;
// tests/gpu: its CUDA units compiled with ptxas's spill report, docs/custom-models.md).
#pragma once

#include <cmath>

#include <chens/models/auto_model.hpp>

struct RigidTetrahedron {
  static constexpr const char* name = "rigid-tetrahedron";
  static constexpr int dof = 12;
  static constexpr int constraints = 6;
  static constexpr chens::ModelParameter parameters[] = {{"edge", 1.0, "edge length"},  {"gravity", 1.0, "field along -z"},
                                                         {"m1", 1.0, "mass of atom 1"}, {"m2", 2.0, "mass of atom 2"},
                                                         {"m3", 3.0, "mass of atom 3"}, {"m4", 4.0, "mass of atom 4"}};
  static constexpr const char* coordinates[] = {"x1", "y1", "z1", "x2", "y2", "z2", "x3", "y3", "z3", "x4", "y4", "z4"};
  template <class K>
  CHENS_HD static auto mass(const K& k, int i) {
    return k[2 + i / 3];
  }
  template <class T, class K>
  CHENS_HD static T potential(const K& k, const chens::Vec<T, 12>& q) {
    T v = T(0);
    for (int a = 0; a < 4; ++a) v = v + k[2 + a] * q[3 * a + 2];
    return k[1] * v;
  }
  template <class T, class K>
  CHENS_HD static chens::Vec<T, 6> constraint(const K& k, const chens::Vec<T, 12>& q) {
    chens::Vec<T, 6> f;
    int c = 0;
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b) {
        const T dx = q[3 * a] - q[3 * b], dy = q[3 * a + 1] - q[3 * b + 1], dz = q[3 * a + 2] - q[3 * b + 2];
        f[c++] = (dx * dx + dy * dy + dz * dz - k[0] * k[0]) / 2;
      }
    return f;
  }
  // A regular tetrahedron turning rigidly about an axis through its centre.
  static void initial(const double* k, double* z) {
    const double e = k[0] / std::sqrt(8.0);
    const double r[4][3] = {{e, e, e}, {e, -e, -e}, {-e, e, -e}, {-e, -e, e}};
    const double w[3] = {0.3, -0.5, 0.7};
    for (int a = 0; a < 4; ++a) {
      const double* d = r[a];
      const double v[3] = {w[1] * d[2] - w[2] * d[1], w[2] * d[0] - w[0] * d[2], w[0] * d[1] - w[1] * d[0]};
      for (int j = 0; j < 3; ++j) {
        z[3 * a + j] = d[j];
        z[12 + 3 * a + j] = k[2 + a] * v[j];
      }
    }
  }
};
