// The pendulum's rotation that the high-order pairs' and interpolants' tests integrate:
// m = l = g = 1, Hamilton-Dirac equations, from z0 = (0.6, -0.8, 1.2, 0.9) (on the circle,
// q.p = 0), and its flow by RK4 with 2^16 steps per unit time, whose rounding (about 2.5e-14 at
// t = 2 and 1e-13 at t = 10) bounds what can be compared with it.
#pragma once

#include <cmath>

#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/pendulum.hpp>

namespace chens::test {

using RotationSystem = HamiltonDirac<Pendulum<double>>;
inline const RotationSystem rotation_system{Pendulum<double>{1.0, 1.0, 1.0}};
inline const RotationSystem::State rotation_start{{0.6, -0.8, 1.2, 0.9}};

inline RotationSystem::State rotation_flow(double t) {
  const int n = static_cast<int>(std::lround(t * 65536));
  RotationSystem::State z = rotation_start, zn;
  const ExplicitRk<Rk4Tableau> rk4{};
  for (int i = 0; i < n; ++i) {
    rk4.step(rotation_system, z, t / n, zn);
    z = zn;
  }
  return z;
}

}  // namespace chens::test
