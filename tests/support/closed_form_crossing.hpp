// A first passage known in closed form, which the located crossings of fixed-step and adaptive
// methods are measured against (tests/test_first_passage.cpp, tests/test_jit_systems.cpp). The
// naive index reduction keeps d^2 phi / dt^2 = 0 (002 eq. 38), so phi(t) = phi(0) + psi(0) t
// along the exact flow (the pendulum's phi' = q.p / m = psi). An inconsistent ensemble (000 §8)
// with psi_offset = s starts every instance but the nominal one at phi = 0 (to rounding) and
// psi = +-s: |phi| crosses a level L at t* = L / s.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include <gtest/gtest.h>

#include "dispatch/run_study.hpp"

namespace chens::test {

inline constexpr double crossing_offset = 0.05;                            // s
inline constexpr double crossing_time = 13.0 / 3.0;                        // t*: on no step grid the tests use
inline constexpr double crossing_level = crossing_offset * crossing_time;  // L

// The worst |t - t*| over the 15 instances that cross (each is expected to, and none lost),
// for `method` at step size (adaptive: first trial step) h; the run's mean step through
// mean_step when given.
inline double worst_crossing_error(MethodId method, double h, double* mean_step = nullptr) {
  Study s;
  s.formulation = FormulationId::naive;
  s.method = method;
  s.size = 16;
  s.seed = 5;
  s.perturbation = 1e-3;
  s.kind = "inconsistent";
  s.psi_offset = crossing_offset;
  s.h = h;
  s.rtol = 1e-9;
  s.atol = 1e-12;
  s.t_end = 6.0;
  s.sample_dt = 1.0;
  s.passage_phi = crossing_level;
  s.states = true;
  const EnsembleResult r = run_study_cpu(s, resolve(s), ensemble_spec(s, 2));
  EXPECT_EQ(r.lost_total(), 0u);
  double worst = 0;
  for (std::size_t i = 1; i < static_cast<std::size_t>(s.size); ++i) {
    const double t = r.kept.first_passage[i * passage_slots + int(MetricId::phi)];
    EXPECT_LT(t, INFINITY) << method_name(method) << ", instance " << i << ", h = " << h;
    worst = std::max(worst, std::fabs(t - crossing_time));
  }
  if (mean_step) *mean_step = s.t_end * static_cast<double>(s.size) / static_cast<double>(r.totals.steps);
  return worst;
}

}  // namespace chens::test
