// chens' fixed-size vectors to and from Eigen's dynamic ones, for comparisons with the dense
// oracles (tests/support/dense_dirac_oracle.hpp).
#pragma once

#include <Eigen/Dense>

#include <chens/linalg/vec.hpp>

namespace chens::test {

template <int M>
Eigen::VectorXd to_eigen(const Vec<double, M>& v) {
  Eigen::VectorXd r(M);
  for (int i = 0; i < M; ++i) r[i] = v[i];
  return r;
}

template <int M>
Vec<double, M> from_eigen(const Eigen::VectorXd& v) {
  Vec<double, M> r;
  for (int i = 0; i < M; ++i) r[i] = v[i];
  return r;
}

}  // namespace chens::test
