// The penalty pendulum of a study (model.kind = "penalty-pendulum"), shared by the CPU
// and CUDA dispatch.
#pragma once

#include <chens/models/penalty_pendulum.hpp>

#include "study/study.hpp"

namespace chens {

inline PenaltyPendulum<double> penalty_model(const Study& s) {
  return PenaltyPendulum<double>::make(s.mass, s.length, s.gravity, s.penalty,
                                       s.penalty_constraint == "G1" ? PenaltyConstraint::g1 : PenaltyConstraint::g);
}

// What integration_error measures for the penalty model: the distance to the rigid
// pendulum, which is the mu -> infinity limit for tangential initial velocities (003 §3).
inline constexpr const char* penalty_reference_kind =
    "constrained pendulum (closed form in Jacobi elliptic functions) from the initial data projected onto the "
    "constraint manifold";

}  // namespace chens
