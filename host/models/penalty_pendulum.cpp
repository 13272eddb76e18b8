// The pendulum held by a penalty potential, H = T + V + mu C^2 (003;
// include/chens/models/penalty_pendulum.hpp), as the study layer sees it: its equations are
// an ODE of its own, so it has no formulation to choose, nothing to project and nothing for
// RATTLE; its reference is the rigid pendulum's closed form (the limit mu -> infinity).
#include <algorithm>
#include <cmath>

#include <chens/models/penalty_pendulum.hpp>

#include "models/model_description.hpp"
#include "study/study_key_table.hpp"
#include "study/study_values.hpp"

namespace chens {

namespace {

// Its own keys (ModelDescription::own_keys), with their defaults: mu of H = T + V + mu C^2
// (003), the constraint function C, and the steps per fastest oscillation that set h.
constexpr OwnKey<double> penalty_key{"model.penalty", 1000.0};
constexpr OwnKey<const char*> constraint_key{"model.constraint", "G"};
constexpr OwnKey<std::int64_t> steps_per_oscillation_key{"integrator.steps_per_oscillation", 50};

bool g1(const Study& s) { return model_value(s, constraint_key) == "G1"; }

PenaltyPendulum<double> penalty_model(const Study& s) {
  return PenaltyPendulum<double>::make(s.mass, s.length, s.gravity, model_value(s, penalty_key),
                                       g1(s) ? PenaltyConstraint::g1 : PenaltyConstraint::g);
}

// integrator.steps_per_oscillation (docs/study-format.md): h = 2 pi / (omega_fast * it),
// lowered to divide output.sample_dt where that is given (samples fall on the step grid).
double step_from_fast_frequency(const Study& s) {
  const PenaltyPendulum<double> m = penalty_model(s);
  const double omega = PenaltyPendulum<double>::fast_frequency(m.m, m.l, m.mu, m.constraint);
  const std::int64_t steps = model_value(s, steps_per_oscillation_key);
  const double h_max = 2.0 * 3.14159265358979323846 / omega / static_cast<double>(steps);
  double h = h_max;
  if (s.sample_dt) h = *s.sample_dt / std::max(1.0, std::ceil(*s.sample_dt / h_max * (1.0 - 1e-12)));
  if (!(h > 0) || !std::isfinite(h))
    throw StudyError("integrator.steps_per_oscillation = " + std::to_string(steps) + " with model.penalty = " +
                     shortest(model_value(s, penalty_key)) + " gives the step h = " + shortest(h) +
                     ": not a usable step; choose a smaller penalty or give integrator.h");
  return h;
}

void validate(const Study& s) {
  validate_pendulum_initial(s);
  if (s.has(steps_per_oscillation_key.path) && s.has("integrator.h"))
    throw StudyError("integrator.h and integrator.steps_per_oscillation are both given: use one (steps_per_oscillation "
                     "sets h = 2 pi / (omega_fast * steps_per_oscillation))");
}

void system_args(const Study& s, SystemArgs& a) {
  a.parameter[static_cast<std::size_t>(ParameterId::penalty)] = model_value(s, penalty_key);
  a.penalty_g1 = g1(s);
}

}  // namespace

const ModelDescription& penalty_pendulum_description() {
  static const ModelDescription d{
      .kind = ModelKind::penalty_pendulum,
      .name = "penalty-pendulum",
      .keys = {"model.mass", "model.length", "model.gravity", "parameters.mass", "parameters.length", "parameters.gravity"},
      // clang-format off
      .own_keys = {
          {.section = "model", .name = "penalty", .type = own_real(penalty_key, rules::positive),
           .meaning = "μ"},
          {.section = "model", .name = "constraint", .type = own_choice(constraint_key, {"G", "G1"}),
           .meaning = "C = G = x² + y² − l², or C = G1 = e^(x/l) G (003 §5: the same zero set)"},
          {.section = "integrator", .name = "steps_per_oscillation",
           .type = own_integer(steps_per_oscillation_key, 4, 1000000),
           .scope_note = "it sets h from the penalty's fast frequency",
           // The h it gives is printed instead (integrator.h), so that the printed study reads
           // back to the same run without it.
           .printed = [](const Study&, const RunParams<double>&, Printout) { return std::optional<KeyValue>(); },
           .doc_allowed = "not together with `h`",
           .meaning = "fixed-step methods: h is the largest step ≤ (2π/ω)/`steps_per_oscillation` that divides "
                      "`output.sample_dt` (when given), ω = l √(8μ/m) · (e for G1) the fastest normal oscillation on "
                      "the circle; so a μ sweep keeps Störmer–Verlet stable and equally resolved"},
          {.section = "parameters", .name = "penalty", .type = parameter_law_key(ParameterId::penalty),
           .printed = printed_law<ParameterId::penalty>, .doc_default = "not varied",
           .meaning = "vary `model.penalty` (μ); the step size stays the study's (from the nominal μ unless "
                      "`integrator.h` or `parameters.h` is given)"}},
      // clang-format on
      .formulations = [](const Study&) { return std::vector<FormulationId>{FormulationId::penalty}; },
      .default_formulation = FormulationId::penalty,
      .constrained = false,
      .separable = true,
      .closed_form_reference = true,
      .wedge = true,
      .lyapunov = true,
      .cpp_type = [](const Study&) { return std::string("PenaltyPendulum<double>"); },
      .state_names = pendulum_state_names,
      .default_initial = pendulum_default_initial,
      .validate = validate,
      .system_args = system_args,
      .conserves_angular_momentum = no_angular_momentum,
      .default_step = step_from_fast_frequency,
      .constraints = [](const Study&) { return std::int64_t{0}; },  // the rod is a spring (003)
  };
  return d;
}

}  // namespace chens
