// Checking a study as a whole (the rules between keys; each key's own rule is in its
// declaration, study_keys.cpp) and resolving it into the run's parameters and time grid.
#include <algorithm>
#include <cmath>
#include <iterator>

#include <chens/diagnostics/metrics.hpp>

#include "dispatch/custom_models.hpp"
#include "dispatch/jit_systems.hpp"
#include "study/study_key_table.hpp"
#include "study/study_parameters.hpp"

namespace chens {

namespace {

std::string list(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ", ") + std::to_string(x);
  return out;
}

// The double pendulum's keys and initial data (docs/adding-a-model.md): two masses, two
// lengths, 8 numbers whose links have their lengths.
void validate_double_pendulum(const Study& s) {
  if (s.formulation != FormulationId::naive && s.formulation != FormulationId::dirac &&
      s.formulation != FormulationId::impetus && s.formulation != FormulationId::baumgarte &&
      s.formulation != FormulationId::constrained)
    throw StudyError(std::string("integrator.formulation = \"") + formulation_name(s.formulation) +
                     "\" is written for the pendulum only; the double pendulum has \"naive\", \"dirac\", \"impetus\", "
                     "\"baumgarte\" and method \"rattle\"");
  if (s.has("model.masses") && s.has("model.mass"))
    throw StudyError("model.mass and model.masses are both given: use one (mass sets both bobs)");
  if (!s.masses.empty() && s.masses.size() != 2)
    throw StudyError("model.masses has " + std::to_string(s.masses.size()) +
                     " entries; model.kind = \"double-pendulum\" needs two masses [m1, m2]");
  if (s.has("model.lengths") && s.has("model.length"))
    throw StudyError("model.length and model.lengths are both given: use one (length sets both links)");
  if (!s.lengths.empty() && s.lengths.size() != 2)
    throw StudyError("model.lengths has " + std::to_string(s.lengths.size()) +
                     " entries; model.kind = \"double-pendulum\" needs two link lengths [l1, l2]");
  const std::vector<double> z = initial_state(s);
  if (z.size() != 8)
    throw StudyError("model.initial has " + std::to_string(z.size()) +
                     " numbers: the double pendulum needs an array of 8 numbers [x1, y1, x2, y2, px1, py1, px2, py2]");
  // The links must have their lengths (as a chain's bonds): the constraint manifold is the
  // point of the model, and the numerical reference keeps the level set it starts on. The
  // tolerance admits coordinates typed to about 7 digits.
  constexpr double link_rel_tol = 1e-6;
  const DoublePendulum<double> m = double_pendulum_model(s);
  const double r1 = std::hypot(z[0], z[1]), r2 = std::hypot(z[2] - z[0], z[3] - z[1]);
  if (!(std::fabs(r1 - m.l1) <= link_rel_tol * m.l1))
    throw StudyError("model.initial: link 1 (pivot to bob 1) has length " + shortest(r1) + ", but l1 = " +
                     shortest(m.l1) + " (model.length or model.lengths; allowed relative deviation " +
                     shortest(link_rel_tol) + ")");
  if (!(std::fabs(r2 - m.l2) <= link_rel_tol * m.l2))
    throw StudyError("model.initial: link 2 (bob 1 to bob 2) has length " + shortest(r2) + ", but l2 = " +
                     shortest(m.l2) + " (model.length or model.lengths; allowed relative deviation " +
                     shortest(link_rel_tol) + ")");
}

// A user model (docs/custom-models.md): the formulations its executable built, its initial
// data's size, finite V and phi there, and independent constraints (Q = J M^-1 J^T of 002
// eq. 28 well conditioned: every formulation solves with it, and a singular Q is a model or
// data error no integration can repair).
void validate_custom_model(const Study& s) {
  const CustomModelInfo& m = custom_model_of(s);
  const char* origin = m.from_header ? "the formulations of a user model" : "chens_add_model's FORMULATIONS";
  std::string formulations;
  bool built = false;
  for (const CustomEntry& e : m.entries) {
    // Appended, not "\"" + name: GCC 12 warns falsely (-Wrestrict) of that insertion.
    std::string name = "\"";
    name += formulation_name(e.formulation);
    name += '"';
    if (formulations.find(name) == std::string::npos) formulations += (formulations.empty() ? "" : ", ") + name;
    built = built || e.formulation == s.formulation;
  }
  if (!built)
    throw StudyError(std::string("integrator.formulation = \"") + formulation_name(s.formulation) + "\": model.kind = \"" +
                     m.name + "\" is " + (m.from_header ? "compiled" : "built") + " with " + formulations + " (" +
                     origin + "; \"constrained\" is method \"rattle\")");
  // The built methods that integrate the formulation: RATTLE the constrained equations alone.
  MethodMask methods = 0;
  for (const CustomEntry& e : m.entries)
    if (e.formulation == s.formulation) methods |= e.methods;
  methods &= s.formulation == FormulationId::constrained ? method_bit(MethodId::rattle) : ~method_bit(MethodId::rattle);
  if (!has_method(methods, s.method)) {
    std::string names;
    for (int i = 0; i < method_count; ++i)
      if (has_method(methods, static_cast<MethodId>(i)))
        names += (names.empty() ? "\"" : ", \"") + std::string(method_name(static_cast<MethodId>(i))) + "\"";
    // (A model from a header has every method: only chens_add_model's METHODS leave some out.)
    throw StudyError(std::string("integrator.method = \"") + method_name(s.method) + "\": model.kind = \"" + m.name +
                     "\" is built with methods " + names + " (chens_add_model's METHODS)");
  }
  if (s.precision != Precision::double_precision)
    throw StudyError(std::string("integrator.precision = \"") + precision_name(s.precision) +
                     "\": user models run in double precision only");
  if (s.initial.empty() && !m.has_initial)
    throw StudyError("model.initial is missing: model.kind = \"" + m.name + "\" (" + m.header +
                     ") has no default initial state; give " + std::to_string(2 * m.dof) + " numbers (q, then p)");
  const std::vector<double> z = initial_state(s);
  if (z.size() != static_cast<std::size_t>(2 * m.dof))
    throw StudyError("model.initial has " + std::to_string(z.size()) + " numbers; model.kind = \"" + m.name + "\" needs " +
                     std::to_string(2 * m.dof) + " (q, then p: " + std::to_string(m.dof) + " each)");
  for (std::size_t i = 0; i < z.size(); ++i)
    if (!std::isfinite(z[i]))
      throw StudyError("the initial state of model.kind = \"" + m.name + "\" has a non-finite component " +
                       physical_state_names(s)[i] + " = " + shortest(z[i]));
  const InitialCheck c = m.check(s.parameters.data(), z.data());
  if (!std::isfinite(c.potential))
    throw StudyError("the potential V of model.kind = \"" + m.name + "\" is not finite at the initial state (V = " +
                     shortest(c.potential) + "; " + m.header + ", parameters as given)");
  for (std::size_t a = 0; a < c.phi.size(); ++a)
    if (!std::isfinite(c.phi[a]))
      throw StudyError("constraint " + std::to_string(a) + " of model.kind = \"" + m.name +
                       "\" is not finite at the initial state (phi = " + shortest(c.phi[a]) + ")");
  constexpr double max_condition = 1e12;
  if (!(c.gram_condition <= max_condition))
    throw StudyError("the constraints of model.kind = \"" + m.name + "\" are dependent at the initial state: Q = J M^-1 J^T "
                     "has condition number " + shortest(c.gram_condition) + " (> " + shortest(max_condition) +
                     "; infinite: singular or not positive definite, e.g. a mass <= 0). Choose initial data where the "
                     "constraint gradients are independent");
}

// Model-specific keys and values: which keys apply to which model, and whether the
// initial data make sense for it.
void validate_model(const Study& s) {
  refuse_keys_out_of_scope(s, "model");
  const bool chain = is_chain(s);
  const bool penalty = is_penalty_pendulum(s);
  if (penalty) {
    if (s.formulation != FormulationId::penalty)
      throw StudyError(std::string("model.kind = \"penalty-pendulum\" has no constraint to formulate: its equations are "
                       "the penalty ODE itself; remove integrator.formulation (it was \"") +
                       formulation_name(s.formulation) + "\")");
    if (s.method == MethodId::rattle)
      throw StudyError("integrator.method = \"rattle\" integrates constrained equations; model.kind = "
                       "\"penalty-pendulum\" has none: use \"verlet\" (Stormer-Verlet) or another ODE method");
    if (s.momentum || s.position)
      throw StudyError(std::string("projection.") + (s.position ? "position" : "momentum") +
                       " = true: model.kind = \"penalty-pendulum\" replaces the constraint by a potential and is not "
                       "projected (003); set it to false");
  } else if (s.formulation == FormulationId::penalty) {
    throw StudyError(std::string("integrator.formulation = \"penalty\" is the equations of model.kind = \"penalty-pendulum\" "
                                 "(this study's model.kind is \"") + model_name(s) + "\")");
  }
  if (s.method == MethodId::verlet && !penalty)
    throw StudyError("integrator.method = \"verlet\" (Stormer-Verlet) needs a separable Hamiltonian: model.kind = "
                     "\"penalty-pendulum\"; for the constrained pendulum and chains \"rattle\" is Stormer-Verlet with "
                     "the constraints");
  refuse_keys_out_of_scope(s, "integrator");
  if (s.has("integrator.steps_per_oscillation") && s.has("integrator.h"))
    throw StudyError("integrator.h and integrator.steps_per_oscillation are both given: use one (steps_per_oscillation "
                     "sets h = 2 pi / (omega_fast * steps_per_oscillation))");
  if (s.projection_scheme == "midpoint") {
    if (s.method != MethodId::midpoint)
      throw StudyError(std::string("projection.scheme = \"midpoint\" projects the stage of the implicit midpoint rule "
                       "(004 §4): it needs integrator.method = \"midpoint\" (method was \"") + method_name(s.method) + "\")");
    if (!s.position && !s.momentum)
      throw StudyError("projection.scheme = \"midpoint\" projects the stage onto the manifold: set projection.position "
                       "and/or projection.momentum = true");
    if (s.projection_every != 1)
      throw StudyError("projection.every = " + std::to_string(s.projection_every) + " thins out the projections after "
                       "steps; with projection.scheme = \"midpoint\" every step projects its stage (use every = 1)");
  }
  if (s.projection_every != 1 && !s.position && !s.momentum && s.impetus_reset == 0)
    throw StudyError("projection.every = " + std::to_string(s.projection_every) + " but no projection is enabled: set "
                     "projection.position and/or projection.momentum = true");
  if (s.wedge) {
    if (s.model_kind != ModelKind::pendulum && !penalty)
      throw StudyError("output.wedge is written for the pendulum models (its consistent initial tangents, 004 §3.2); "
                       "model.kind is \"" + model_name(s) + "\"");
    if (s.method == MethodId::dopri5)
      throw StudyError("output.wedge propagates tangents through fixed-step maps (004 §3.2); integrator.method = "
                       "\"dopri5\" chooses its steps from the state: use a fixed-step method");
    if (s.precision == Precision::single_precision)
      throw StudyError("output.wedge runs in double precision only (integrator.precision = \"float\")");
  }
  if (s.method == MethodId::rattle && s.formulation != FormulationId::constrained)
    throw StudyError(std::string("integrator.method = \"rattle\" integrates the constrained equations themselves, not an "
                     "underlying ODE: remove integrator.formulation (or set it to \"constrained\"); it was \"") +
                     formulation_name(s.formulation) + "\"");
  if (s.formulation == FormulationId::constrained && s.method != MethodId::rattle)
    throw StudyError(std::string("integrator.formulation = \"constrained\" has no right-hand side to integrate; only "
                     "integrator.method = \"rattle\" integrates it (method was \"") + method_name(s.method) + "\")");
  // Float runs (docs/numerics.md, "Float runs"): the explicit fixed-step methods, whose
  // steps have no tolerance that float rounding could make unreachable; the naive and
  // Dirac equations (the throughput studies'; every float instantiation costs build time);
  // the pendulum with its closed-form reference, chains of float_chain_atoms atoms without a
  // reference (the numerical reference's 1e-12 tolerance is below float's resolution).
  if (s.precision == Precision::single_precision) {
    if (s.method != MethodId::euler && s.method != MethodId::rk2 && s.method != MethodId::rk4)
      throw StudyError(std::string("integrator.precision = \"float\" runs the explicit fixed-step methods \"euler\", "
                       "\"rk2\" and \"rk4\" only (method was \"") + method_name(s.method) +
                       "\": its tolerances assume double); use precision = \"double\"");
    if (s.formulation != FormulationId::naive && s.formulation != FormulationId::dirac)
      throw StudyError(std::string("integrator.precision = \"float\" is built for the formulations \"naive\" and "
                       "\"dirac\" only (formulation was \"") + formulation_name(s.formulation) +
                       "\"); use precision = \"double\"");
    if (is_double_pendulum(s))
      throw StudyError("integrator.precision = \"float\" is built for the pendulum and chains only (model.kind = "
                       "\"double-pendulum\"); use precision = \"double\"");
    if (chain && s.atoms != float_chain_atoms)
      throw StudyError("integrator.precision = \"float\" is built for chains of " + std::to_string(float_chain_atoms) +
                       " atoms only (model.atoms = " + std::to_string(s.atoms) + "); use precision = \"double\"");
    if (chain && s.reference && *s.reference == "auto")
      throw StudyError("output.reference = \"auto\" with integrator.precision = \"float\": the chain's numerical "
                       "reference runs at reference_tol = 1e-12, below float's resolution; use output.reference = "
                       "\"none\" or precision = \"double\"");
  }
  if (is_double_pendulum(s)) {
    validate_double_pendulum(s);
    return;
  }
  if (is_custom(s)) {
    validate_custom_model(s);
    return;
  }
  if (!chain) {
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
    return;
  }
  // Sizes the build has are its units; any other up to max_jit_chain_atoms is compiled on
  // first use (dispatch/jit_systems.hpp, docs/jit.md).
  const auto& sizes = compiled_chain_sizes();
  if (std::find(sizes.begin(), sizes.end(), static_cast<int>(s.atoms)) == sizes.end() &&
      (s.atoms < 2 || s.atoms > max_jit_chain_atoms))
    throw StudyError("model.atoms = " + std::to_string(s.atoms) + ": chains have 2 to " +
                     std::to_string(max_jit_chain_atoms) + " atoms (this build has units for " + list(sizes) +
                     "; other sizes are compiled on first use, docs/jit.md)");
  if (s.formulation != FormulationId::naive && s.formulation != FormulationId::dirac &&
      s.formulation != FormulationId::impetus && s.formulation != FormulationId::constrained)
    throw StudyError(std::string("integrator.formulation = \"") + formulation_name(s.formulation) +
                     "\" is written for the pendulum only; chains have \"naive\", \"dirac\", \"impetus\" and "
                     "method \"rattle\"");
  if (!s.masses.empty() && s.masses.size() != static_cast<std::size_t>(s.atoms))
    throw StudyError("model.masses has " + std::to_string(s.masses.size()) + " entries; model.atoms = " +
                     std::to_string(s.atoms) + " needs one mass per atom");
  if (s.has("model.masses") && s.has("model.mass"))
    throw StudyError("model.mass and model.masses are both given: use one (mass sets every atom)");
  const std::vector<double> z = initial_state(s);
  if (z.size() != static_cast<std::size_t>(4 * s.atoms))
    throw StudyError("model.initial has " + std::to_string(z.size()) + " numbers; model.atoms = " +
                     std::to_string(s.atoms) + " needs 4 * atoms = " + std::to_string(4 * s.atoms) +
                     " (x0, y0, ..., x" + std::to_string(s.atoms - 1) + ", y" + std::to_string(s.atoms - 1) +
                     ", then px0, py0, ...)");
  // Bonds must have the bond length: the constraint manifold is the whole point. The
  // tolerance admits coordinates typed to about 7 digits.
  constexpr double bond_rel_tol = 1e-6;
  for (std::int64_t a = 0; a + 1 < s.atoms; ++a) {
    const double dx = z[2 * a + 2] - z[2 * a], dy = z[2 * a + 3] - z[2 * a + 1];
    const double r = std::sqrt(dx * dx + dy * dy);
    if (!(std::fabs(r - s.bond_length) <= bond_rel_tol * s.bond_length))
      throw StudyError("model.initial: bond " + std::to_string(a) + " (atoms " + std::to_string(a) + " and " +
                       std::to_string(a + 1) + ") has length " + shortest(r) + ", but model.bond_length = " +
                       shortest(s.bond_length) + " (allowed relative deviation " + shortest(bond_rel_tol) + ")");
  }
  // Atoms on top of each other make the Lennard-Jones potential infinite.
  if (s.lj_epsilon > 0)
    for (std::int64_t i = 0; i < s.atoms; ++i)
      for (std::int64_t j = i + 1; j < s.atoms; ++j)
        if (z[2 * i] == z[2 * j] && z[2 * i + 1] == z[2 * j + 1])
          throw StudyError("model.initial: atoms " + std::to_string(i) + " and " + std::to_string(j) +
                           " are at the same position; the Lennard-Jones potential is infinite there");
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
                     std::to_string(max_recorded) + " trajectories are recorded (use output.states for final states of all)");
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
      throw StudyError(std::string(s.trajectory ? "output.trajectory" : !s.phase_error.empty() ? "output.phase_error"
                                                                                            : "output.periodogram") +
                       " is about instance 0, which ensemble.only leaves out; add 0 to ensemble.only or drop it");
  }
  const double S = static_cast<double>(physical_state_names(s).size());
  const std::size_t recorded = recorded_instances(s).size();
  const double rec_bytes = static_cast<double>(recorded) * static_cast<double>(rp.samples + 1) *
                           (2 * S + metric_count + 1) * 8;
  if (rec_bytes > 8e9)
    throw StudyError("output.record / output.trajectory: recording " + std::to_string(recorded) +
                     " instances at " + std::to_string(rp.samples + 1) + " sample times needs " +
                     shortest(rec_bytes / 1e9) + " GB of host memory (at most 8); record fewer instances or raise "
                     "output.sample_dt");
  if (!s.phase_error.empty()) {
    const double T = pendulum_nominal_period(s);
    if (!rp.reference)
      throw StudyError("output.phase_error compares y(kT) with the closed-form solution; it needs output.reference = \"auto\"");
    for (std::int64_t k : s.phase_error) {
      const double t = static_cast<double>(k) * T;
      const double m = t / rp.sample_dt;
      if (t > rp.t_end * (1 + 1e-9))
        throw StudyError("output.phase_error: " + std::to_string(k) + " T = " + shortest(t) + " is after integrator.t_end = " +
                         shortest(rp.t_end) + " (T = " + shortest(T) + ")");
      if (std::fabs(m - std::round(m)) > 1e-9 * std::max(1.0, m))
        throw StudyError("output.phase_error: " + std::to_string(k) + " T = " + shortest(t) +
                         " is not a sample time (output.sample_dt = " + shortest(rp.sample_dt) + "); the period of the "
                         "nominal initial data is T = " + shortest(T) + ": choose sample_dt = T / m and, for fixed-step "
                         "methods, integrator.h = T / n (e.g. h = " + shortest(T / 33) + ", sample_dt = " + shortest(T) + ")");
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
      throw StudyError("output.periodogram: " + std::to_string(rp.samples + 1) + " sample times; the periodogram takes at "
                       "most " + std::to_string(periodogram_max_samples) + " (raise output.sample_dt)");
    if (rp.samples < 4)
      throw StudyError("output.periodogram needs at least 5 sample times; the run has " + std::to_string(rp.samples + 1));
  }
}

// integrator.h, or for the penalty pendulum with a fixed-step method and no h the step
// from integrator.steps_per_oscillation (docs/study-format.md).
double resolved_step(const Study& s) {
  if (!is_penalty_pendulum(s) || s.has("integrator.h") || s.method == MethodId::dopri5) return s.h;
  const PenaltyPendulum<double> m = penalty_model(s);
  const double omega = PenaltyPendulum<double>::fast_frequency(m.m, m.l, m.mu, m.constraint);
  const double h_max = 2.0 * 3.14159265358979323846 / omega / static_cast<double>(s.steps_per_oscillation);
  if (!s.sample_dt) return h_max;
  // The largest step <= h_max that divides output.sample_dt: samples fall on the step grid.
  const double n = std::ceil(*s.sample_dt / h_max * (1.0 - 1e-12));
  return *s.sample_dt / std::max(1.0, n);
}

// [first_passage]: the levels, each on a metric this run reports (EnsembleResult::
// metric_reported's rules, decided here from the study).
PassageLevels passage_levels(const Study& s) {
  refuse_keys_out_of_scope(s, "first_passage");
  static_assert(std::size(passage_level_members) == metric_count, "one [first_passage] level per metric");
  double levels[metric_count];
  for (int m = 0; m < metric_count; ++m) levels[m] = s.*passage_level_members[m];
  const bool angular = is_chain(s) || (is_custom(s) && custom_model_of(s).angular_momentum);
  PassageLevels out;
  for (int m = 0; m < metric_count; ++m) {
    if (!(levels[m] > 0)) continue;
    const std::string key = std::string("first_passage.") + metric_name(m) + " = " + shortest(levels[m]);
    if (m == int(MetricId::integration_error) && !reference_on(s))
      throw StudyError(key + ": this run has no reference solution (output.reference = \"none\"), so no integration "
                             "error to check; remove the key or use output.reference = \"auto\"");
    if (m == int(MetricId::angular_momentum_error) && !angular)
      throw StudyError(key + ": model.kind = \"" + model_name(s) +
                       "\" conserves no angular momentum (gravity or a pivot), so its error is not reported; remove the key");
    if (m == int(MetricId::wedge_error) && !s.wedge)
      throw StudyError(key + ": the wedge product is computed with output.wedge = true only");
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
  const bool adaptive = s.method == MethodId::dopri5;
  const bool impetus = s.formulation == FormulationId::impetus || s.formulation == FormulationId::impetus_modified;
  if (s.impetus_reset > 0 && !impetus)
    throw StudyError("integrator.impetus_reset = " + shortest(s.impetus_reset) +
                     ": only the impetus formulations (\"impetus\", \"impetus-modified\") carry impetuses to reset; "
                     "set it to 0 or choose an impetus formulation");
  if (adaptive && s.rtol == 0 && s.atol == 0)
    throw StudyError("integrator.rtol and integrator.atol are both 0: dopri5 needs at least one > 0");
  validate_model(s);
  const double h = resolved_step(s);
  if (!(h > 0) || !std::isfinite(h))
    throw StudyError("integrator.steps_per_oscillation = " + std::to_string(s.steps_per_oscillation) +
                     " with model.penalty = " + shortest(s.penalty) + " gives the step h = " + shortest(h) +
                     ": not a usable step; choose a smaller penalty or give integrator.h");
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
  rp.perturbation_shape.distribution =
      s.distribution == "normal" ? PerturbationDistribution::normal : PerturbationDistribution::uniform;
  rp.perturbation_shape.phi_offset = s.phi_offset;
  rp.perturbation_shape.psi_offset = s.psi_offset;
  rp.reference = reference_on(s);
  rp.reference_tol = s.reference_tol;
  constexpr double rel = 1e-9;
  constexpr std::int64_t max_samples = 10000000;
  if (!adaptive) {
    const double n = s.t_end / h;
    if (n > 9.0e15) throw StudyError("integrator.t_end / integrator.h = " + shortest(n) + " steps: too many for fixed-step integration");
    if (!fixed_step_grid(rp, h, s.sample_dt ? *s.sample_dt : 0.0))
      throw StudyError("output.sample_dt = " + shortest(*s.sample_dt) + " is not a multiple of integrator.h = " +
                       shortest(h) + ": fixed-step methods sample on their step grid; choose sample_dt = k * h");
  } else {
    rp.sample_dt = s.sample_dt ? *s.sample_dt : (s.t_end > 0 ? s.t_end / 100.0 : 1.0);
    const double k = s.t_end / rp.sample_dt;
    if (k > static_cast<double>(max_samples))
      throw StudyError("output.sample_dt = " + shortest(rp.sample_dt) + " gives " + shortest(k) +
                       " samples; at most " + std::to_string(max_samples) + " are allowed");
    const double kr = std::round(k);
    rp.samples = static_cast<index_t>(std::fabs(k - kr) <= rel * std::max(1.0, k) ? kr : std::ceil(k));
    rp.total_steps = 0;
    rp.steps_per_sample = 0;
    rp.last_h = h;
  }
  if (rp.samples > max_samples)
    throw StudyError("output.sample_dt gives " + std::to_string(rp.samples) + " samples; at most " +
                     std::to_string(max_samples) + " are allowed");
  validate_parameters(s, rp);  // first: output.phase_error's checks assume the study's own pendulum
  validate_output(s, rp);
  return rp;
}

}  // namespace chens
