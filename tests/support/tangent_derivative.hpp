// The dual-number derivative of one step (geometry/tangent_system.hpp's TangentStepper: what
// output.wedge and output.lyapunov propagate) against the central difference of the step
// map, the finite-difference oracle of test_geometry.cpp, test_rattle_composition.cpp and
// test_lobatto.cpp.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <chens/geometry/tangent_system.hpp>

#include "support/integrate.hpp"

namespace chens::test {

// The step's derivative along v1 and v2 from z by dual numbers, against fd_step_derivative
// (eps = 1e-6); the tangent step's values are the plain step's bit for bit (asserted).
// Returns the largest deviation relative to 1 + |finite difference|.
template <class System, class Method>
double tangent_vs_fd(const System& sys, const Method& m, const typename System::State& z, const typename System::State& v1,
                     const typename System::State& v2, double h) {
  using T = TangentSystem<System>;
  using State = typename System::State;
  constexpr int S = State::size;
  const T ts = T::of(sys);
  typename T::State Z = T::State::zero(), Zn;
  for (int c = 0; c < S; ++c) {
    Z[c] = z[c];
    Z[S + c] = v1[c];
    Z[2 * S + c] = v2[c];
  }
  const StepStatus st = TangentStepper<Method>{m}.step(ts, Z, h, Zn);
  EXPECT_TRUE(st.finite);
  State zn;
  m.step(sys, z, h, zn);
  for (int c = 0; c < S; ++c) EXPECT_EQ(Zn[c], zn[c]) << "component " << c;
  double worst = 0.0;
  for (int which = 0; which < 2; ++which) {
    const State fd = fd_step_derivative(sys, m, z, which == 0 ? v1 : v2, h, 1e-6);
    for (int c = 0; c < S; ++c) {
      const double ad = Zn[S * (which + 1) + c];
      worst = std::max(worst, std::fabs(ad - fd[c]) / (1.0 + std::fabs(fd[c])));
    }
  }
  return worst;
}

}  // namespace chens::test
