// The rigid planar pendulum in Cartesian coordinates (001 §3, 002 §6;
// include/chens/models/pendulum.hpp) as the study layer sees it.
#include <cmath>

#include <chens/models/pendulum.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "models/model_description.hpp"
#include "study/study_values.hpp"

namespace chens {

std::vector<std::string> pendulum_state_names(const Study&) { return {"x", "y", "px", "py"}; }

std::vector<double> pendulum_default_initial(const Study&) { return {1.0, 0.0, 0.0, -2.0}; }

void validate_pendulum_initial(const Study& s) {
  const std::vector<double> z = initial_state(s);
  if (z.size() != 4)
    throw StudyError("model.initial has " + std::to_string(z.size()) +
                     " numbers: the pendulum needs an array of 4 numbers [x, y, px, py]");
  const double r2 = z[0] * z[0] + z[1] * z[1];
  const double p2 = z[2] * z[2] + z[3] * z[3];
  // The initial position is projected onto the circle of radius l, and the energy is
  // p^2 / 2m + m g y: both must be finite numbers, which a huge entry (1e200) overflows.
  if (!std::isfinite(r2) || !std::isfinite(p2))
    throw StudyError("model.initial = [" + shortest(z[0]) + ", " + shortest(z[1]) + ", " + shortest(z[2]) + ", " +
                     shortest(z[3]) + "]: " + (std::isfinite(r2) ? "px^2 + py^2" : "x^2 + y^2") +
                     " overflows a double; give a state of ordinary size (the position is projected onto the "
                     "circle of radius model.length)");
  if (!(r2 > 0))
    throw StudyError("model.initial: the position (x, y) = (0, 0) has no constraint gradient; the pendulum needs "
                     "x^2 + y^2 > 0");
}

namespace {

// output.phase_error's T: the exact period of the nominal instance after projection onto the
// manifold.
double period_of_nominal_instance(const Study& s) {
  const std::vector<double> z = initial_state(s);
  const auto exact =
      PendulumExact<double>::make(Pendulum<double>{s.mass, s.length, s.gravity}, Vec<double, 4>{{z[0], z[1], z[2], z[3]}});
  const double T = exact.period();
  if (!std::isfinite(T) || !(T > 0))
    throw StudyError("output.phase_error: the nominal initial data [" + shortest(z[0]) + ", " + shortest(z[1]) + ", " +
                     shortest(z[2]) + ", " + shortest(z[3]) +
                     "] have no finite period (the pendulum rests or sits on the separatrix)");
  return T;
}

// Spelt in full, as the compiler names the systems list's type (Unit = false: the run-time
// parameters).
std::string cpp_type(const Study& s) {
  return s.precision == Precision::single_precision ? "Pendulum<float, false>" : "Pendulum<double, false>";
}

}  // namespace

const ModelDescription& pendulum_description() {
  static const ModelDescription d{
      .kind = ModelKind::pendulum,
      .name = "pendulum",
      .keys = {"model.mass", "model.length", "model.gravity", "parameters.mass", "parameters.length", "parameters.gravity"},
      .formulations = [](const Study&) { return formulations_without_penalty(); },
      .closed_form_reference = true,
      .wedge = true,
      .lyapunov = true,
      .single_precision = true,
      .cpp_type = cpp_type,
      .state_names = pendulum_state_names,
      .default_initial = pendulum_default_initial,
      .validate = validate_pendulum_initial,
      .conserves_angular_momentum = no_angular_momentum,
      .nominal_period = period_of_nominal_instance,
      .constraints = [](const Study&) { return std::int64_t{1}; },  // the rod
  };
  return d;
}

}  // namespace chens
