// The pendulum held by a penalty potential, H = T + V + mu C^2 (003;
// include/chens/models/penalty_pendulum.hpp), as the study layer sees it: its equations are
// an ODE of its own, so it has no formulation to choose, nothing to project and nothing for
// RATTLE; its reference is the rigid pendulum's closed form (the limit mu -> infinity).
#include <algorithm>
#include <cmath>

#include <chens/models/penalty_pendulum.hpp>

#include "models/model_description.hpp"
#include "study/study_values.hpp"

namespace chens {

namespace {

PenaltyPendulum<double> penalty_model(const Study& s) {
  return PenaltyPendulum<double>::make(s.mass, s.length, s.gravity, s.penalty,
                                       s.penalty_constraint == "G1" ? PenaltyConstraint::g1 : PenaltyConstraint::g);
}

// integrator.steps_per_oscillation (docs/study-format.md): h = 2 pi / (omega_fast * it),
// lowered to divide output.sample_dt where that is given (samples fall on the step grid).
double step_from_fast_frequency(const Study& s) {
  const PenaltyPendulum<double> m = penalty_model(s);
  const double omega = PenaltyPendulum<double>::fast_frequency(m.m, m.l, m.mu, m.constraint);
  const double h_max = 2.0 * 3.14159265358979323846 / omega / static_cast<double>(s.steps_per_oscillation);
  double h = h_max;
  if (s.sample_dt) h = *s.sample_dt / std::max(1.0, std::ceil(*s.sample_dt / h_max * (1.0 - 1e-12)));
  if (!(h > 0) || !std::isfinite(h))
    throw StudyError("integrator.steps_per_oscillation = " + std::to_string(s.steps_per_oscillation) +
                     " with model.penalty = " + shortest(s.penalty) + " gives the step h = " + shortest(h) +
                     ": not a usable step; choose a smaller penalty or give integrator.h");
  return h;
}

void constraint_function(const Study& s, SystemArgs& a) { a.penalty_g1 = s.penalty_constraint == "G1"; }

}  // namespace

const ModelDescription& penalty_pendulum_description() {
  static const ModelDescription d{
      .kind = ModelKind::penalty_pendulum,
      .name = "penalty-pendulum",
      .keys = {"model.mass", "model.length", "model.gravity", "model.penalty", "model.constraint",
               "integrator.steps_per_oscillation", "parameters.mass", "parameters.length", "parameters.gravity",
               "parameters.penalty"},
      .formulations = [](const Study&) { return std::vector<FormulationId>{FormulationId::penalty}; },
      .default_formulation = FormulationId::penalty,
      .constrained = false,
      .separable = true,
      .closed_form_reference = true,
      .wedge = true,
      .cpp_type = [](const Study&) { return std::string("PenaltyPendulum<double>"); },
      .state_names = pendulum_state_names,
      .default_initial = pendulum_default_initial,
      .validate = validate_pendulum_initial,
      .system_args = constraint_function,
      .conserves_angular_momentum = no_angular_momentum,
      .default_step = step_from_fast_frequency,
  };
  return d;
}

}  // namespace chens
