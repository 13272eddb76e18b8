// The pendulum on which RATTLE's compositions and the Lobatto IIIA-IIIB pair are tested
// (test_rattle_composition.cpp, test_lobatto.cpp): m = 1.3, l = 0.8, g = 2, released with a wide
// swing, 1 rad from the bottom at 0.5 rad/s (a consistent state: on the circle, q.p = 0).
#pragma once

#include <cmath>

#include <chens/models/pendulum.hpp>

namespace chens::test {

inline const Pendulum<double> wide_swing_pendulum{1.3, 0.8, 2.0};

inline Pendulum<double>::State wide_swing_start() {
  const double th = 1.0, w = 0.5, l = wide_swing_pendulum.l, pm = wide_swing_pendulum.m * l * w;
  return {{l * std::sin(th), -l * std::cos(th), pm * std::cos(th), pm * std::sin(th)}};
}

}  // namespace chens::test
