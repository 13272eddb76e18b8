// Checking a study as a whole (the rules between keys; each key's own rule is in its
// declaration, study_keys.cpp) and resolving it into the run's parameters and time grid.
#include <algorithm>
#include <cmath>
#include <iterator>

#include <chens/diagnostics/metrics.hpp>

#include "models/model_description.hpp"
#include "study/study_key_table.hpp"
#include "study/study_parameters.hpp"

namespace chens {

namespace {

// "model.kind = \"pendulum\" and \"chain\"": the built-in models with a property.
std::string models_with(bool ModelDescription::*property) {
  std::vector<std::string> names;
  for (const ModelDescription* m : model_descriptions())
    if (m->kind != ModelKind::custom && m->*property) names.push_back(quoted(m->name));
  return "model.kind = " + and_list(names);
}

// The study's model as a refusal names it: its label (e.g. "chain N = 17"), else its kind.
std::string model_in_words(const Study& s, const ModelDescription& model) {
  return model.label ? model.label(s) : "model.kind = \"" + model_name(s) + "\"";
}

// Model-specific keys and values: which keys apply to which model, and whether the
// initial data make sense for it.
void validate_model(const Study& s) {
  refuse_keys_out_of_scope(s, "model");
  const ModelDescription& model = model_of(s);
  const std::vector<FormulationId> formulations = model.formulations(s);
  if (std::find(formulations.begin(), formulations.end(), s.formulation) == formulations.end()) {
    if (!model.constrained)
      throw StudyError(std::string("model.kind = \"") + model_name(s) +
                       "\" has no constraint to formulate: its "
                       "equations are an ODE of their own; remove integrator.formulation (it was \"" +
                       formulation_name(s.formulation) + "\")");
    std::vector<std::string> has;
    for (FormulationId f : formulations) has.push_back(quoted(formulation_name(f)));
    const std::string names = and_list(has);
    const char* note = model.formulations_note ? model.formulations_note(s) : nullptr;
    std::string elsewhere;  // the built-in models that have it
    for (const ModelDescription* m : model_descriptions()) {
      if (m->kind == ModelKind::custom) continue;
      const std::vector<FormulationId> theirs = m->formulations(s);
      if (std::find(theirs.begin(), theirs.end(), s.formulation) != theirs.end())
        elsewhere += (elsewhere.empty() ? "" : ", ") + quoted(m->name);
    }
    throw StudyError(std::string("integrator.formulation = \"") + formulation_name(s.formulation) + "\": model.kind = \"" +
                     model_name(s) + "\" has " + names + " (\"constrained\" is method \"rattle\"" +
                     (note ? std::string("; ") + note : std::string()) + ")" +
                     (elsewhere.empty() ? std::string() : "; it is a formulation of model.kind = " + elsewhere));
  }
  if (!model.constrained) {
    if (is_constrained_method(s.method))
      throw StudyError(std::string("integrator.method = \"") + method_name(s.method) +
                       "\" integrates constrained equations; model.kind = \"" + model_name(s) +
                       "\" has none: use \"verlet\" (Stormer-Verlet) or another ODE method");
    if (s.momentum || s.position)
      throw StudyError(std::string("projection.") + (s.position ? "position" : "momentum") + " = true: model.kind = \"" +
                       model_name(s) + "\" has no constraint to project onto; set it to false");
  }
  if (s.method == MethodId::verlet && !model.separable)
    throw StudyError("integrator.method = \"verlet\" (Stormer-Verlet) needs a separable Hamiltonian without "
                     "constraints: " +
                     models_with(&ModelDescription::separable) + " (this study's model.kind is \"" + model_name(s) +
                     "\"); for constrained models \"rattle\" is Stormer-Verlet with the constraints");
  refuse_keys_out_of_scope(s, "integrator");
  if (s.projection_scheme == "midpoint") {
    if (s.method != MethodId::midpoint)
      throw StudyError(std::string("projection.scheme = \"midpoint\" projects the stage of the implicit midpoint rule "
                                   "(004 §4): it needs integrator.method = \"midpoint\" (method was \"") +
                       method_name(s.method) + "\")");
    if (!s.position && !s.momentum)
      throw StudyError("projection.scheme = \"midpoint\" projects the stage onto the manifold: set projection.position "
                       "and/or projection.momentum = true");
    if (s.projection_every != 1)
      throw StudyError("projection.every = " + std::to_string(s.projection_every) +
                       " thins out the projections after "
                       "steps; with projection.scheme = \"midpoint\" every step projects its stage (use every = 1)");
  }
  if (s.projection_every != 1 && !s.position && !s.momentum && s.impetus_reset == 0)
    throw StudyError("projection.every = " + std::to_string(s.projection_every) +
                     " but no projection is enabled: set "
                     "projection.position and/or projection.momentum = true");
  // The tangent diagnostics' shared rules: the variational equations of a fixed-step map (an
  // adaptive method's step depends on its own step-size choice), in double precision.
  const auto tangent_rules = [&](const std::string& key, const char* carries) {
    if (is_adaptive_method(s.method))
      throw StudyError(key + " " + carries + "; integrator.method = \"" + method_name(s.method) +
                       "\" chooses its steps from the state: use a fixed-step method");
    if (s.precision == Precision::single_precision)
      throw StudyError(key + " runs in double precision only (integrator.precision = \"float\")");
  };
  if (s.wedge) {
    if (!model.wedge)
      throw StudyError("output.wedge is written for " + models_with(&ModelDescription::wedge) +
                       " (their consistent "
                       "initial tangents, 004 §3.2); model.kind is \"" +
                       model_name(s) + "\"");
    tangent_rules("output.wedge", "propagates tangents through fixed-step maps (004 §3.2)");
  }
  if (s.exponents()) {
    const std::string key = s.exponents_key();
    if (!model.lyapunov)
      throw StudyError(key + " is built for " + models_with(&ModelDescription::lyapunov) +
                       " (their tangent systems over dual numbers, geometry/tangent_system.hpp); model.kind is \"" +
                       model_name(s) + "\"");
    tangent_rules(key, s.lyapunov_spectrum ? "carries tangent vectors through the method's own fixed-step map (its "
                                             "variational equations)"
                                           : "carries a tangent vector through the method's own fixed-step map (its "
                                             "variational equations)");
  } else if (s.lyapunov_interval) {
    throw StudyError("output.lyapunov_interval = " + shortest(*s.lyapunov_interval) +
                     " renormalises the tangents of output.lyapunov, which is off: set output.lyapunov = true or drop it");
  }
  if (s.lyapunov_spectrum) {
    // geometry/tangent_system.hpp: the tangents are put into T_z M in (q, p) at every
    // re-orthonormalisation; each one multiplies the step's cost.
    if (s.wedge)
      throw StudyError(
          "output.lyapunov_spectrum re-orthonormalises its tangents, which changes their wedge product: ask for "
          "output.wedge in a run of its own");
    if (s.formulation == FormulationId::impetus || s.formulation == FormulationId::impetus_modified)
      throw StudyError(std::string("output.lyapunov_spectrum puts its tangents into the constraint manifold's tangent "
                                   "space in (q, p); integrator.formulation = \"") +
                       formulation_name(s.formulation) +
                       "\" carries (q, p*), which maps onto (q, p) by a projection: use another formulation");
    const std::int64_t exponents = model.spectrum_exponents(s);
    const std::int64_t m = model.constraints ? model.constraints(s) : 0;
    const std::int64_t n2 = exponents + 2 * m;
    if (exponents > max_spectrum_exponents)
      throw StudyError("output.lyapunov_spectrum has 2(n - m) = " + std::to_string(exponents) + " exponents for " +
                       model_in_words(s, model) + " (n = " + std::to_string(n2 / 2) + " coordinates, m = " +
                       std::to_string(m) + " constraints); at most " + std::to_string(max_spectrum_exponents) +
                       " tangents are carried, each a further derivative of every step: use output.lyapunov for the "
                       "largest exponent");
  }
  if (s.reference_method != MethodId::dopri5) {
    // reference/numerical.hpp: the pair integrates a numerical reference; a closed form has none.
    const std::string key = std::string("output.reference_method = \"") + method_name(s.reference_method) + "\"";
    if (model.closed_form_reference)
      throw StudyError(key + ": model.kind = \"" + model_name(s) +
                       "\" is measured against its closed-form solution, which no method integrates; remove the key");
    if (!reference_on(s))
      throw StudyError(key + " chooses the numerical reference's method, but this run computes no reference "
                             "(output.reference = \"none\", the default for chains and the double pendulum): set "
                             "output.reference = \"auto\" or remove the key");
  }
  if (is_constrained_method(s.method) && s.formulation != FormulationId::constrained)
    throw StudyError(std::string("integrator.method = \"") + method_name(s.method) +
                     "\" integrates the constrained equations themselves, not an "
                     "underlying ODE: remove integrator.formulation (or set it to \"constrained\"); it was \"" +
                     formulation_name(s.formulation) + "\"");
  if (s.formulation == FormulationId::constrained && !is_constrained_method(s.method))
    throw StudyError(std::string("integrator.formulation = \"constrained\" has no right-hand side to integrate; only "
                                 "RATTLE, its compositions and the Lobatto IIIA-IIIB pair (integrator.method = \"rattle\", "
                                 "\"rattle4\", \"rattle4-suzuki\", \"rattle6\", \"rattle8\", \"lobatto3\") integrate it "
                                 "(method was \"") +
                     method_name(s.method) + "\")");
  // Rodas5P (integrators/rodas5p.hpp): each instance holds its N x N Jacobian and LU on the
  // stack, and the Jacobian's forward-mode right-hand side carries N derivatives per component.
  if (s.method == MethodId::rodas5p) {
    const std::size_t n = physical_state_names(s).size();
    if (n > static_cast<std::size_t>(rodas5p_max_state))
      throw StudyError("integrator.method = \"rodas5p\" factors an N x N matrix per instance and step, for states of at "
                       "most " +
                       std::to_string(rodas5p_max_state) + " components (a chain of 16 atoms); " + model_in_words(s, model) +
                       " has " + std::to_string(n) + ": use an explicit or a symplectic method");
  }
  // Float runs (docs/numerics.md, "Float runs"): the explicit fixed-step methods, whose
  // steps have no tolerance that float rounding could make unreachable; the naive and
  // Dirac equations (the throughput studies'; every float instantiation costs build time);
  // the models with float units (the rest of their rule is theirs: a chain's size).
  if (s.precision == Precision::single_precision) {
    if (s.method != MethodId::euler && s.method != MethodId::rk2 && s.method != MethodId::rk4)
      throw StudyError(std::string("integrator.precision = \"float\" runs the explicit fixed-step methods \"euler\", "
                                   "\"rk2\" and \"rk4\" only (method was \"") +
                       method_name(s.method) + "\": its tolerances assume double); use precision = \"double\"");
    if (s.formulation != FormulationId::naive && s.formulation != FormulationId::dirac)
      throw StudyError(std::string("integrator.precision = \"float\" is built for the formulations \"naive\" and "
                                   "\"dirac\" only (formulation was \"") +
                       formulation_name(s.formulation) + "\"); use precision = \"double\"");
    if (!model.single_precision)
      throw StudyError("integrator.precision = \"float\" is built for " + models_with(&ModelDescription::single_precision) +
                       " only (model.kind = \"" + model_name(s) + "\"); use precision = \"double\"");
  }
  model.validate(s);
}

// The [output] keys that depend on the time grid: recorded instances, states.h5, the phase
// error table and the periodogram (docs/study-format.md, [output]).
void validate_output(const Study& s, const RunParams<double>& rp) {
  constexpr std::size_t max_recorded = 4096;
  // cppcheck-suppress knownConditionTrueFalse ; a build-time constant
  if ((s.states || !s.record.empty()) && !hdf5_available())
    throw StudyError(std::string(s.states ? "output.states = true" : "output.record") +
                     " writes states.h5, but this build of chens has no HDF5: install libhdf5-dev "
                     "(scripts/bootstrap.sh does) and configure again");
  if (s.record.size() > max_recorded)
    throw StudyError("output.record lists " + std::to_string(s.record.size()) + " instances; at most " +
                     std::to_string(max_recorded) +
                     " trajectories are recorded (use output.states for final states of all)");
  for (std::int64_t i : s.record)
    if (i >= s.size)
      throw StudyError("output.record: instance " + std::to_string(i) + " is not in the ensemble (ensemble.size = " +
                       std::to_string(s.size) + ", indices 0 to " + std::to_string(s.size - 1) + ")");
  // ensemble.only: the listed instances of the ensemble, integrated alone.
  for (std::int64_t i : s.only)
    if (i >= s.size)
      throw StudyError("ensemble.only: instance " + std::to_string(i) + " is not in the ensemble (ensemble.size = " +
                       std::to_string(s.size) + ", indices 0 to " + std::to_string(s.size - 1) + ")");
  if (!s.only.empty()) {
    for (std::int64_t i : s.record)
      if (!std::binary_search(s.only.begin(), s.only.end(), i))
        throw StudyError("output.record: instance " + std::to_string(i) + " is not among ensemble.only's instances");
    if ((s.trajectory || !s.phase_error.empty() || !s.periodogram.empty()) && s.only.front() != 0)
      throw StudyError(std::string(s.trajectory             ? "output.trajectory"
                                   : !s.phase_error.empty() ? "output.phase_error"
                                                            : "output.periodogram") +
                       " is about instance 0, which ensemble.only leaves out; add 0 to ensemble.only or drop it");
  }
  const double S = static_cast<double>(physical_state_names(s).size());
  const std::size_t recorded = recorded_instances(s).size();
  const double rec_bytes =
      static_cast<double>(recorded) * static_cast<double>(rp.samples + 1) * (2 * S + metric_count + 1) * 8;
  if (rec_bytes > 8e9)
    throw StudyError("output.record / output.trajectory: recording " + std::to_string(recorded) + " instances at " +
                     std::to_string(rp.samples + 1) + " sample times needs " + shortest(rec_bytes / 1e9) +
                     " GB of host memory (at most 8); record fewer instances or raise "
                     "output.sample_dt");
  if (!s.phase_error.empty()) {
    const double T = nominal_period(s);
    if (!rp.reference)
      throw StudyError(
          "output.phase_error compares y(kT) with the closed-form solution; it needs output.reference = \"auto\"");
    for (std::int64_t k : s.phase_error) {
      const double t = static_cast<double>(k) * T;
      const double m = t / rp.sample_dt;
      if (t > rp.t_end * (1 + 1e-9))
        throw StudyError("output.phase_error: " + std::to_string(k) + " T = " + shortest(t) +
                         " is after integrator.t_end = " + shortest(rp.t_end) + " (T = " + shortest(T) + ")");
      if (std::fabs(m - std::round(m)) > 1e-9 * std::max(1.0, m))
        throw StudyError("output.phase_error: " + std::to_string(k) + " T = " + shortest(t) +
                         " is not a sample time (output.sample_dt = " + shortest(rp.sample_dt) +
                         "); the period of the "
                         "nominal initial data is T = " +
                         shortest(T) +
                         ": choose sample_dt = T / m and, for fixed-step "
                         "methods, integrator.h = T / n (e.g. h = " +
                         shortest(T / 33) + ", sample_dt = " + shortest(T) + ")");
    }
  }
  if (!s.periodogram.empty()) {
    const std::vector<std::string> names = physical_state_names(s);
    if (std::find(names.begin(), names.end(), s.periodogram) == names.end()) {
      std::string allowed;
      for (std::size_t c = 0; c < names.size() && c < 8; ++c) allowed += (c ? ", \"" : "\"") + names[c] + "\"";
      throw StudyError("output.periodogram = \"" + s.periodogram + "\" is not a component of the physical state; allowed: " +
                       allowed + (names.size() > 8 ? ", ..." : ""));
    }
    if (rp.samples + 1 > periodogram_max_samples)
      throw StudyError("output.periodogram: " + std::to_string(rp.samples + 1) +
                       " sample times; the periodogram takes at "
                       "most " +
                       std::to_string(periodogram_max_samples) + " (raise output.sample_dt)");
    if (rp.samples < 4)
      throw StudyError("output.periodogram needs at least 5 sample times; the run has " + std::to_string(rp.samples + 1));
  }
}

// integrator.h, or with a fixed-step method and no h the model's default step (the penalty
// pendulum's from integrator.steps_per_oscillation, docs/study-format.md).
double resolved_step(const Study& s) {
  const ModelDescription& model = model_of(s);
  if (!model.default_step || s.has("integrator.h") || is_adaptive_method(s.method)) return s.h;
  return model.default_step(s);
}

// [first_passage]: the levels, each on a metric this run reports (EnsembleResult::
// metric_reported's rules, decided here from the study).
PassageLevels passage_levels(const Study& s) {
  refuse_keys_out_of_scope(s, "first_passage");
  static_assert(std::size(passage_level_members) == metric_count, "one [first_passage] level per metric");
  double levels[metric_count];
  for (int m = 0; m < metric_count; ++m) levels[m] = s.*passage_level_members[m];
  const bool angular = model_of(s).conserves_angular_momentum(s);
  PassageLevels out;
  for (int m = 0; m < metric_count; ++m) {
    if (!(levels[m] > 0)) continue;
    const std::string key = std::string("first_passage.") + metric_name(m) + " = " + shortest(levels[m]);
    if (m == int(MetricId::integration_error) && !reference_on(s))
      throw StudyError(key + ": this run has no reference solution (output.reference = \"none\"), so no integration "
                             "error to check; remove the key or use output.reference = \"auto\"");
    if (m == int(MetricId::angular_momentum_error) && !angular)
      throw StudyError(
          key + ": model.kind = \"" + model_name(s) +
          "\" conserves no angular momentum (gravity or a pivot), so its error is not reported; remove the key");
    if (m == int(MetricId::wedge_error) && !s.wedge)
      throw StudyError(key + ": the wedge product is computed with output.wedge = true only");
    if (m == int(MetricId::lyapunov) && !s.exponents())
      throw StudyError(key + ": the Lyapunov exponent is computed with output.lyapunov = true only");
    out.level[m] = levels[m];
    out.mask |= 1u << m;
    out.per_step = out.per_step || passage_per_step(m);
  }
  if (s.passage_lost) out.mask |= 1u << passage_lost;
  return out;
}

}  // namespace

RunParams<double> resolve(const Study& s) {
  RunParams<double> rp;
  const bool adaptive = is_adaptive_method(s.method);
  const bool impetus = s.formulation == FormulationId::impetus || s.formulation == FormulationId::impetus_modified;
  if (s.impetus_reset > 0 && !impetus)
    throw StudyError("integrator.impetus_reset = " + shortest(s.impetus_reset) +
                     ": only the impetus formulations (\"impetus\", \"impetus-modified\") carry impetuses to reset; "
                     "set it to 0 or choose an impetus formulation");
  if (adaptive && s.rtol == 0 && s.atol == 0)
    throw StudyError(std::string("integrator.rtol and integrator.atol are both 0: ") + method_name(s.method) +
                     " needs at least one > 0");
  validate_model(s);
  const double h = resolved_step(s);
  rp.h = h;
  rp.t_end = s.t_end;
  rp.fixed_step = !adaptive;
  rp.rtol = s.rtol;
  rp.atol = s.atol;
  rp.max_steps = s.max_steps;
  rp.iteration_tol = s.tol;
  rp.max_iterations = static_cast<int>(s.max_iterations);
  rp.project_momentum = s.momentum;
  rp.project_position = s.position;
  rp.projection_tol = s.projection_tol;
  rp.projection_max_iterations = static_cast<int>(s.projection_max_iterations);
  rp.projection_every = s.projection_every;
  rp.stage_projection = s.projection_scheme == "midpoint";
  rp.impetus_reset = s.impetus_reset;
  rp.lost_residual = s.lost_residual;
  rp.lost_diverged = s.lost_diverged;
  rp.lost_unconverged = s.lost_unconverged;
  rp.passage = passage_levels(s);
  if (s.kind == "inconsistent" && !(s.phi_offset > 0 || s.psi_offset > 0))
    throw StudyError("ensemble.kind = \"inconsistent\" needs ensemble.phi_offset > 0 or ensemble.psi_offset > 0 "
                     "(how far off the constraint manifold every instance starts)");
  if (s.kind == "consistent" && (s.phi_offset > 0 || s.psi_offset > 0))
    throw StudyError("ensemble.phi_offset and ensemble.psi_offset move instances off the constraint manifold; they "
                     "need ensemble.kind = \"inconsistent\"");
  rp.perturbation_shape.distribution = s.distribution == "normal" ? PerturbationDistribution::normal
                                                                  : PerturbationDistribution::uniform;
  rp.perturbation_shape.phi_offset = s.phi_offset;
  rp.perturbation_shape.psi_offset = s.psi_offset;
  rp.reference = reference_on(s);
  rp.reference_tol = s.reference_tol;
  constexpr double rel = 1e-9;
  constexpr std::int64_t max_samples = 10000000;
  if (!adaptive) {
    const double n = s.t_end / h;
    if (n > 9.0e15)
      throw StudyError("integrator.t_end / integrator.h = " + shortest(n) + " steps: too many for fixed-step integration");
    if (!fixed_step_grid(rp, h, s.sample_dt ? *s.sample_dt : 0.0))
      throw StudyError("output.sample_dt = " + shortest(*s.sample_dt) + " is not a multiple of integrator.h = " +
                       shortest(h) + ": fixed-step methods sample on their step grid; choose sample_dt = k * h");
  } else {
    rp.sample_dt = s.sample_dt ? *s.sample_dt : (s.t_end > 0 ? s.t_end / 100.0 : 1.0);
    const double k = s.t_end / rp.sample_dt;
    if (k > static_cast<double>(max_samples))
      throw StudyError("output.sample_dt = " + shortest(rp.sample_dt) + " gives " + shortest(k) + " samples; at most " +
                       std::to_string(max_samples) + " are allowed");
    const double kr = std::round(k);
    rp.samples = static_cast<index_t>(std::fabs(k - kr) <= rel * std::max(1.0, k) ? kr : std::ceil(k));
    rp.total_steps = 0;
    rp.steps_per_sample = 0;
    rp.last_h = h;
  }
  if (rp.samples > max_samples)
    throw StudyError("output.sample_dt gives " + std::to_string(rp.samples) + " samples; at most " +
                     std::to_string(max_samples) + " are allowed");
  rp.wedge = s.wedge;
  rp.lyapunov = s.exponents();
  if (s.exponents()) {
    // The tangents' renormalisation interval in steps, a given one on the step grid. By default
    // every sample for output.lyapunov (its renormalisation is exact, so it changes no number:
    // it bounds growth), and every spectrum_renormalisation_steps steps (or every sample if
    // sooner) for the spectrum, whose tangents would otherwise align with the fastest growing
    // one (geometry/tangent_system.hpp).
    const double every = s.lyapunov_interval ? *s.lyapunov_interval / h
                         : s.lyapunov_spectrum
                             ? static_cast<double>(std::min<index_t>(rp.steps_per_sample, spectrum_renormalisation_steps))
                             : static_cast<double>(rp.steps_per_sample);
    const double n = std::round(every);
    if (!(n >= 1) || std::fabs(every - n) > rel * std::max(1.0, every))
      throw StudyError("output.lyapunov_interval = " + shortest(s.lyapunov_interval.value_or(0.0)) +
                       " is not a multiple of integrator.h = " + shortest(h) +
                       ": the tangents are renormalised after whole steps; choose interval = k * h");
    rp.lyapunov_every = static_cast<index_t>(n);
  }
  validate_parameters(s, rp);  // first: output.phase_error's checks assume the study's own pendulum
  validate_output(s, rp);
  return rp;
}

}  // namespace chens
