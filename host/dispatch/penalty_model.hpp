// What the CPU and CUDA dispatch of the penalty pendulum (model.kind = "penalty-pendulum")
// share besides its model (penalty_model, study/study.hpp).
#pragma once

#include "study/study.hpp"

namespace chens {

// What integration_error measures for the penalty model: the distance to the rigid
// pendulum, which is the mu -> infinity limit for tangential initial velocities (003 §3).
inline constexpr const char* penalty_reference_kind =
    "constrained pendulum (closed form in Jacobi elliptic functions) from the initial data projected onto the "
    "constraint manifold";

}  // namespace chens
