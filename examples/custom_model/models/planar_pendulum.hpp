// The planar pendulum of 001 §3 / 002 §6 written as a user model (issue 19): the same
// physics as chens's hand-written models/pendulum.hpp, from V and phi alone. chens's tests
// compare the two (tests/test_auto_model.cpp: right-hand sides to 1e-14, ensembles) and its
// benchmarks time them side by side (docs/custom-models.md, "Throughput").
#pragma once

#include <chens/models/auto_model.hpp>

struct PlanarPendulum {
  static constexpr const char* name = "planar-pendulum";
  static constexpr int dof = 2;          // q = (x, y)
  static constexpr int constraints = 1;  // |q| = l
  static constexpr chens::ModelParameter parameters[] = {
      {"mass", 1.0, "mass of the bob"}, {"length", 1.0, "length of the rod"}, {"gravity", 1.0, "gravity along -y"}};
  static constexpr const char* coordinates[] = {"x", "y"};

  template <class K>
  CHENS_HD static auto mass(const K& k, int) {
    return k[0];
  }
  // V = m g y
  template <class T, class K>
  CHENS_HD static T potential(const K& k, const chens::Vec<T, 2>& q) {
    return (k[0] * k[2]) * q[1];
  }
  // phi = (x^2 + y^2 - l^2) / 2, the papers' convention (001 eq. 2)
  template <class T, class K>
  CHENS_HD static chens::Vec<T, 1> constraint(const K& k, const chens::Vec<T, 2>& q) {
    return chens::Vec<T, 1>{{(q[0] * q[0] + q[1] * q[1] - k[1] * k[1]) / 2}};
  }
  template <class K>
  CHENS_HD static auto constraint_scale(const K& k) {
    return k[1] * k[1];
  }
  // The hand-written pendulum's default: (x, y, px, py) = (l, 0, 0, -2).
  static void initial(const double* k, double* z) {
    z[0] = k[1];
    z[1] = 0.0;
    z[2] = 0.0;
    z[3] = -2.0;
  }
};
