// Seeded random pendulum states for tests. Every test that draws from these prints its
// seed on failure (SCOPED_TRACE), so a failing case can be replayed.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <random>

#include <chens/models/pendulum.hpp>

namespace chens::test {

inline constexpr std::uint64_t default_seed = 20261125;

// A state on the constraint manifold: |q| = l, q.p = 0, angle and angular velocity random.
inline Pendulum<double>::State consistent_state(const Pendulum<double>& m, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> angle(-3.14159, 3.14159), rate(-3.0, 3.0);
  const double th = angle(rng), w = rate(rng);
  const double x = m.l * std::sin(th), y = -m.l * std::cos(th);
  const double pm = m.m * m.l * w;
  return {{x, y, pm * std::cos(th), pm * std::sin(th)}};
}

// A state off the manifold: |q| in [0.6 l, 1.4 l], arbitrary momentum.
inline Pendulum<double>::State inconsistent_state(const Pendulum<double>& m, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> angle(-3.14159, 3.14159), radius(0.6, 1.4), mom(-2.5, 2.5);
  const double th = angle(rng), r = radius(rng) * m.l;
  return {{r * std::sin(th), -r * std::cos(th), m.m * mom(rng), m.m * mom(rng)}};
}

}  // namespace chens::test
