// What one step reports. Every field is counted by the ensemble driver, never dropped.
#pragma once

#include <chens/config.hpp>

namespace chens {

struct StepStatus {
  bool finite = true;     // every component of the new state is finite
  bool converged = true;  // implicit methods: the fixed-point iteration met its tolerance
  int iterations = 0;     // implicit methods: fixed-point sweeps
  int rhs_evals = 0;      // right-hand-side evaluations spent
};

}  // namespace chens
