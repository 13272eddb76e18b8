// Every study key, declared once (study_key_table.hpp says what each field is for). The
// table's order is the order in which keys are read and listed in messages; the docs'
// descriptions are docs/study-format.md's.
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "dispatch/custom_models.hpp"
#include "dispatch/jit_systems.hpp"
#include "models/model_description.hpp"
#include "study/study_key_table.hpp"

namespace chens {

bool is_custom(const Study& s) { return s.model_kind == ModelKind::custom; }

std::string model_name(const Study& s) { return is_custom(s) ? s.custom_model : model_kind_name(s.model_kind); }

bool in_scope(const StudyKey& key, const Study& s) {
  switch (key.scope) {
    case KeyScope::every_study: return true;
    case KeyScope::model: return model_of(s).takes(key.path());
    case KeyScope::baumgarte: return s.formulation == FormulationId::baumgarte;
  }
  return false;
}

namespace {

using namespace rules;

constexpr std::int64_t two_to_40 = std::int64_t(1) << 40;

// [parameters]' grouping keys are printed where they are given.
std::optional<KeyValue> printed_group_by(const Study& s, const RunParams<double>&, Printout) {
  if (s.group_by.empty()) return std::nullopt;
  return s.group_by;
}
std::optional<KeyValue> printed_group_bins(const Study& s, const RunParams<double>&, Printout) {
  if (s.group_bins <= 0) return std::nullopt;
  return s.group_bins;
}
// The header of a user model compiled on first use, as the absolute path the study resolved
// (so that the printed study reads back from anywhere); nothing for other models.
std::optional<KeyValue> printed_source(const Study& s, const RunParams<double>&, Printout) {
  if (s.model_source.empty()) return std::nullopt;
  return s.model_source;
}
std::optional<KeyValue> printed_group_edges(const Study& s, const RunParams<double>&, Printout) {
  if (s.group_edges.empty()) return std::nullopt;
  return s.group_edges;
}

std::vector<std::string> parameter_names() {
  std::vector<std::string> out;
  for (int p = 0; p < parameter_count; ++p) out.emplace_back(parameter_name(ParameterId(p)));
  return out;
}

// model.kind: a built-in kind, or a user model registered in this executable (chens_add_model,
// dispatch/custom_models.hpp), whose parameters then start at their defaults.
KeyType model_kind_key() {
  KeyType t;
  t.parse = [](const toml::node& n, const std::string& k, Study& st) {
    std::vector<std::pair<std::string, std::string>> names;  // every model.kind this executable knows
    for (const ModelDescription* m : model_descriptions())
      if (m->kind != ModelKind::custom) names.emplace_back(m->name, m->name);
    for (const CustomModelInfo& m : custom_models()) names.emplace_back(m.name, m.name);
    const std::string name = choice<std::string>(n, k, names);
    st.custom_model.clear();
    st.parameters.clear();
    if (const ModelDescription* built_in = find_built_in_model(name)) {
      st.model_kind = built_in->kind;
      return;
    }
    const CustomModelInfo* m = find_custom_model(name);
    st.model_kind = ModelKind::custom;
    st.custom_model = name;
    for (const CustomModelParameter& p : m->parameters) st.parameters.push_back(p.value);
  };
  t.value = [](const Study& s) { return KeyValue(model_name(s)); };
  for (const ModelDescription* m : model_descriptions())
    if (m->kind != ModelKind::custom) t.allowed += (t.allowed.empty() ? "`\"" : ", `\"") + std::string(m->name) + "\"`";
  t.allowed += ", the name of a user model built into the executable or defined by `model.source`'s header "
               "(docs/custom-models.md)";
  return t;
}


std::optional<KeyValue> resolved_initial(const Study& s, const RunParams<double>&, Printout) { return initial_state(s); }
std::optional<KeyValue> resolved_h(const Study&, const RunParams<double>& rp, Printout) { return rp.h; }
std::optional<KeyValue> resolved_sample_dt(const Study&, const RunParams<double>& rp, Printout) { return rp.sample_dt; }
std::optional<KeyValue> resolved_lyapunov_interval(const Study& s, const RunParams<double>& rp, Printout) {
  if (!s.exponents()) return std::nullopt;
  return static_cast<double>(rp.lyapunov_every) * rp.h;
}
std::optional<KeyValue> resolved_reference(const Study& s, const RunParams<double>&, Printout) {
  return std::string(reference_on(s) ? "auto" : "none");
}
// [first_passage]: a level is printed where it is checked (> 0), the loss where it is recorded.
template <double Study::*Level>
std::optional<KeyValue> printed_level(const Study& s, const RunParams<double>&, Printout) {
  if (s.*Level > 0) return s.*Level;
  return std::nullopt;
}
std::optional<KeyValue> printed_passage_lost(const Study& s, const RunParams<double>&, Printout) {
  if (s.passage_lost) return true;
  return std::nullopt;
}

// A model of several bodies (one that takes model.masses: a chain, the double pendulum)
// prints its masses as given (mass or masses) in TOML and one mass per body in JSON; a model
// with several links (its own model.lengths) its link lengths alike (length or lengths).
// (printed_value calls them within their keys' scope only.)
std::optional<KeyValue> printed_mass(const Study& s, const RunParams<double>&, Printout to) {
  const ModelDescription& model = model_of(s);
  if (!model.takes("model.masses") || (to == Printout::toml && s.masses.empty())) return s.mass;
  return std::nullopt;
}
std::optional<KeyValue> printed_masses(const Study& s, const RunParams<double>&, Printout to) {
  const ModelDescription& model = model_of(s);
  if (to == Printout::toml && s.masses.empty()) return std::nullopt;
  if (to == Printout::toml || !model.body_masses) return s.masses;
  return model.body_masses(s);
}
std::optional<KeyValue> printed_length(const Study& s, const RunParams<double>&, Printout to) {
  const ModelDescription& model = model_of(s);
  if (!model.takes("model.lengths") || (to == Printout::toml && model_numbers(s, "model.lengths").empty())) return s.length;
  return std::nullopt;
}

// clang-format off
std::vector<StudyKey> declare_keys() {
  using S = Study;
  return {
      // [model]
      {.section = "model", .name = "kind", .type = model_kind_key(),
       .meaning = "the model; `\"penalty-pendulum\"` is the pendulum with its constraint replaced by a stiff potential "
                  "(003; below), `\"double-pendulum\"` the planar double pendulum (below)"},
      {.section = "model", .name = "source",
       .type = text(&S::model_source, "must be a string: the path of a C++ header defining user models"),
       .scope = KeyScope::model, .scope_note = "it names the header defining the user model that model.kind names",
       .printed = printed_source, .doc_default = "none",
       .doc_allowed = "a readable file; relative to the study file (to the current directory with `--set` and for "
                      "the built-in default study); not in `[sweep]` or `[[run]]`",
       .meaning = "a header defining user models (docs/custom-models.md): its models are compiled on first use and "
                  "cached, and `kind` names one of them (may be left out where the header defines one); printed "
                  "as an absolute path"},
      {.section = "model", .name = "initial",
       .type = numbers(&S::initial, "must be an array of numbers (pendulum: [x, y, px, py]; chain: 4 * atoms numbers)",
                       "", [](double) { return true; }),
       .printed = resolved_initial, .doc_default = "pendulum: `[1.0, 0.0, 0.0, -2.0]`; chain, double pendulum: see below",
       .doc_allowed = "pendulum: 4 of them, x² + y² > 0; chain: 4·atoms whose bonds have length `bond_length` "
                      "(relative deviation ≤ 1e-6), no two atoms at the same place; double pendulum: 8 whose links have "
                      "the lengths l1, l2 (relative deviation ≤ 1e-6)",
       .meaning = "nominal initial state; for the pendulum (x, y, px, py), which need not lie on the constraint "
                  "manifold; for chains (x0, y0, x1, y1, …, px0, py0, px1, py1, …); for the double pendulum (x1, y1, "
                  "x2, y2, px1, py1, px2, py2)"},
      {.section = "model", .name = "mass", .type = real(&S::mass, positive), .scope = KeyScope::model, .printed = printed_mass,
       .print_after = "lj_epsilon", .meaning = "pendulum: m; chain: the mass of every atom; double pendulum: the mass of "
                                                     "both bobs"},
      {.section = "model", .name = "masses",
       .type = numbers(&S::masses, "must be an array of one mass per atom", " > 0", [](double x) { return x > 0; }),
       .scope = KeyScope::model, .printed = printed_masses, .print_after = "lj_epsilon", .doc_default = "all `mass`",
       .doc_allowed = "chain: one per atom; double pendulum: two, [m1, m2]; not together with `mass`",
       .meaning = "one mass per atom (chain) or bob (double pendulum)"},
      {.section = "model", .name = "length", .type = real(&S::length, positive), .scope = KeyScope::model,
       .printed = printed_length, .meaning = "l; double pendulum: the length of both links"},
      {.section = "model", .name = "gravity", .type = real(&S::gravity, non_negative), .scope = KeyScope::model,
       .meaning = "g (gravity acts along −y)"},
      // [integrator]
      {.section = "integrator", .name = "formulation",
       .type = one_of(&S::formulation, every_id<FormulationId>(formulation_count, formulation_name)),
       .doc_default = "`\"dirac\"` (`\"constrained\"` with `rattle`, its compositions and `lobatto3`, `\"penalty\"` "
                      "for the penalty pendulum)",
       .doc_allowed = "chains: `\"naive\"`, `\"dirac\"`, `\"impetus\"`, `\"constrained\"`; the double pendulum: "
                      "the same and `\"baumgarte\"`; the penalty pendulum: `\"penalty\"` only",
       .meaning = "underlying equations; `\"constrained\"` is the constrained system itself, which only `rattle`, "
                  "its compositions and `lobatto3` integrate; `\"baumgarte\"` the naive equations with Baumgarte stabilisation (docs/geometry.md). In "
                  "004's terms `\"extended\"` is the Hamiltonian underlying ODE of Dirac (3.2)–(3.3), `\"dirac\"` the "
                  "weakly Hamiltonian formulation (3.7)–(3.8), `\"total\"` the simplified η = 0 form (3.9)–(3.10), "
                  "`\"naive\"` the standard underlying ODE (1.6)"},
      {.section = "integrator", .name = "method",
       .type = one_of(&S::method, every_id<MethodId>(method_count, method_name)),
       .meaning = "integrator; `rattle` and its symmetric compositions `rattle4` (Yoshida, 3 stages, order 4), "
                  "`rattle4-suzuki` (5 stages, order 4), `rattle6` and `rattle8` (Kahan–Li, 9 and 17 stages) and `lobatto3` "
                  "(the 3-stage Lobatto IIIA–IIIB pair, order 4, compiled on first use) take no formulation (leave "
                  "`formulation` out or set it to `\"constrained\"`); `verlet` (Störmer–Verlet) "
                  "needs a separable Hamiltonian: the penalty pendulum only; the adaptive methods are `dopri5` "
                  "(Dormand–Prince 5(4)), `dop853` (Dormand–Prince 8(5,3)), `vern9` (Verner 9(8)) and `rodas5p` "
                  "(Steinebach's Rosenbrock 5(4), L-stable, for stiff problems such as the penalty pendulum at large "
                  "μ; states of at most 64 components), the last three compiled on first use"},
      {.section = "integrator", .name = "h", .type = real(&S::h, positive), .printed = resolved_h,
       .doc_default = "`0.1`; penalty pendulum with a fixed-step method: from `steps_per_oscillation`",
       .meaning = "step size; for the adaptive methods (`dopri5`, `dop853`, `vern9`, `rodas5p`) the first trial step"},
      {.section = "integrator", .name = "t_end", .type = real(&S::t_end, non_negative), .meaning = "end of the run"},
      {.section = "integrator", .name = "rtol", .type = real(&S::rtol, non_negative),
       .doc_allowed = "not both 0 with `atol` for an adaptive method", .meaning = "the adaptive methods' relative tolerance"},
      {.section = "integrator", .name = "atol", .type = real(&S::atol, non_negative),
       .doc_allowed = "not both 0 with `rtol` for an adaptive method", .meaning = "the adaptive methods' absolute tolerance"},
      {.section = "integrator", .name = "tol", .type = real(&S::tol, positive),
       .meaning = "implicit methods: the fixed-point iteration stops when the stage values move by at most `tol` (max "
                  "norm); `rattle` and its compositions: the position (SHAKE/Newton) iteration of each (sub)step stops when "
                  "max\\|φ\\| ≤ `tol`; `lobatto3`: its Newton iteration stops when max\\|φ\\| ≤ `tol` at both "
                  "implicit stages and the middle stage moved by at most `tol` (1 + max\\|Q₂\\|)"},
      {.section = "integrator", .name = "max_iterations", .type = integer_in(&S::max_iterations, 1, 1000000),
       .meaning = "implicit methods, `rattle`, its compositions and `lobatto3`: iteration cap per step (per "
                  "substep of a composition; a step that hits it is counted in `unconverged_steps`)"},
      {.section = "integrator", .name = "max_steps", .type = integer_in(&S::max_steps, 1, no_limit),
       .meaning = "adaptive methods: cap on accepted + rejected steps per instance (an instance over it is lost, reason "
                  "`max_steps`)"},
      {.section = "integrator", .name = "impetus_reset", .type = real(&S::impetus_reset, zero_is_never),
       .doc_allowed = "> 0 only with impetus formulations",
       .meaning = "reset p* to p when max\\|p* − p\\| exceeds this (000 §8); 0 = never"},
      {.section = "integrator", .name = "precision", .type = one_of(&S::precision, every_id<Precision>(precision_count, precision_name)),
       .doc_allowed = "`\"float\"` only with `euler`, `rk2`, `rk4` and the formulations `naive`, `dirac`, for the "
                      "pendulum and chains of 7 atoms (`output.reference = \"none\"`)",
       .meaning = "arithmetic of the integration. `\"float\"` runs the same per-instance code with float states, for "
                  "throughput studies; metrics are evaluated in double from the float states and the pendulum's "
                  "closed-form reference stays in double, so they show the float run's own error (docs/numerics.md, "
                  "\"Float runs\", has its measured limits)"},
      {.section = "integrator", .name = "baumgarte_alpha", .type = real(&S::baumgarte_alpha, non_negative),
       .scope = KeyScope::baumgarte,
       .meaning = "α of φ'' + 2α φ' + β² φ = 0 (α = β = 0 is `\"naive\"` bit for bit)"},
      {.section = "integrator", .name = "baumgarte_beta", .type = real(&S::baumgarte_beta, non_negative),
       .scope = KeyScope::baumgarte, .meaning = "β of φ'' + 2α φ' + β² φ = 0"},
      // [projection]
      {.section = "projection", .name = "momentum", .type = flag(&S::momentum),
       .meaning = "mass-orthogonal momentum projection when max\\|ψ\\| > `tol` (002 eq. 66/68)"},
      {.section = "projection", .name = "position", .type = flag(&S::position),
       .meaning = "Newton position projection when max\\|φ\\| > `tol` (002 eq. 67), iterated until max\\|φ\\| ≤ `tol`; `lobatto3`: its Newton iteration stops when max\\|φ\\| ≤ `tol` at both "
                  "implicit stages and the middle stage moved by at most `tol` (1 + max\\|Q₂\\|)"},
      {.section = "projection", .name = "tol", .type = real(&S::projection_tol, positive),
       .meaning = "trigger (and Newton stopping) tolerance"},
      {.section = "projection", .name = "max_iterations", .type = integer_in(&S::projection_max_iterations, 1, 1000000),
       .meaning = "Newton cap (an unconverged projection is counted)"},
      {.section = "projection", .name = "every", .type = integer_in(&S::projection_every, 1, two_to_40),
       .doc_allowed = "> 1 needs a projection enabled",
       .meaning = "infrequent projection (004 Fig. 4.5): the projections are checked after every `every`-th accepted "
                  "step only"},
      {.section = "projection", .name = "scheme", .type = strings_one_of(&S::projection_scheme, {"endpoint", "midpoint"}),
       .doc_allowed = "`\"midpoint\"` needs `integrator.method = \"midpoint\"`, `position` and/or `momentum`, and "
                      "`every = 1`",
       .meaning = "endpoint projection: the projections act on the step's result (004 Fig. 4.3, 002 §11); midpoint "
                  "(stage) projection: the implicit midpoint rule's stage is projected inside its fixed-point iteration "
                  "and the step taken with its slope, the end point left alone (004 §4, Fig. 4.4; "
                  "integrators/midpoint_projection.hpp). Use a tight `tol` with `\"midpoint\"`: the stage must lie on "
                  "the manifold for the iteration to converge to `integrator.tol`"},
      // [ensemble]
      {.section = "ensemble", .name = "size", .type = integer_in(&S::size, 1, two_to_40), .meaning = "number of instances"},
      {.section = "ensemble", .name = "seed", .type = integer_in(&S::seed, 0, no_limit),
       .meaning = "key of the Philox4x64-10 generator"},
      {.section = "ensemble", .name = "perturbation", .type = real(&S::perturbation, non_negative),
       .meaning = "each state component of instance i ≥ 1 moves by `perturbation`·u (u from `distribution`), then the "
                  "state is projected back onto the level set {φ = φ(z0), ψ = ψ(z0)} of the nominal data (the "
                  "constraint manifold when z0 is consistent), or onto the offset level set of an inconsistent ensemble"},
      {.section = "ensemble", .name = "distribution", .type = strings_one_of(&S::distribution, {"uniform", "normal"}),
       .meaning = "u uniform in [−1, 1), or normal: the Irwin–Hall sum of 12 uniforms in [0, 1) minus 6 (mean 0, "
                  "variance 1, within ±6), computed with additions only so that instance i has the same bits on every "
                  "backend"},
      {.section = "ensemble", .name = "kind", .type = strings_one_of(&S::kind, {"consistent", "inconsistent"}),
       .meaning = "consistent: instances stay on the nominal level set. Inconsistent (000 §8's experiment with "
                  "inconsistent initial data): every instance i ≥ 1 is put on the level set φ_a = φ_a(z0) ± "
                  "`phi_offset`, ψ_a = ψ_a(z0) ± `psi_offset`, with a random sign per constraint and instance (Newton "
                  "for the positions, the exact momentum projection for the momenta), so each starts off the manifold "
                  "by exactly the offsets"},
      {.section = "ensemble", .name = "phi_offset", .type = real(&S::phi_offset, non_negative),
       .doc_allowed = "> 0 only with `kind = \"inconsistent\"`, which needs it or `psi_offset` > 0",
       .meaning = "the offset of φ of an inconsistent ensemble"},
      {.section = "ensemble", .name = "psi_offset", .type = real(&S::psi_offset, non_negative),
       .doc_allowed = "> 0 only with `kind = \"inconsistent\"`, which needs it or `phi_offset` > 0",
       .meaning = "the offset of ψ of an inconsistent ensemble"},
      {.section = "ensemble", .name = "lost_residual", .type = real(&S::lost_residual, zero_is_never),
       .meaning = "an instance whose \\|φ\\| or \\|ψ\\| (largest over the constraints) exceeds this at a sample time is "
                  "frozen there as lost (`residual_bound`): it leaves the statistics from that sample on and no longer "
                  "costs steps; the other instances are untouched, so their statistics are those of a run without it "
                  "(`Ensemble.InstancesOverTheResidualBoundLeaveTheStatisticsAndNothingElse`)"},
      {.section = "ensemble", .name = "lost_unconverged", .type = flag(&S::lost_unconverged),
       .meaning = "`true`: an instance whose implicit step (`integrator.max_iterations`) or position projection "
                  "(`projection.max_iterations`) stops at its iteration cap without reaching its tolerance is frozen at "
                  "its state before that step as lost (`unconverged`) and leaves the statistics. `false`: such steps "
                  "are counted (`unconverged_steps`, `projections.unconverged_position`) and the instance goes on with "
                  "the last iterate, which is usually within a few tolerances of the solution: freezing by default "
                  "would end studies whose tolerance is merely tight (`Ensemble.UnconvergedIterationsFreezeWhenAsked`)"},
      {.section = "ensemble", .name = "lost_diverged", .type = real(&S::lost_diverged, zero_is_never),
       .meaning = "an instance whose integration error, \\|φ\\|, \\|ψ\\| or momentum errors exceed this, or whose energy "
                  "error exceeds it times max(1, \\|H₀\\|), at a sample time is frozen there as lost (`diverged`) and "
                  "leaves the statistics: an error a million times the size of the papers' unit systems is an "
                  "overflowing integration, not an error to average, and would swamp every statistic and growth "
                  "exponent. A run that diverges is no longer reported as \"lost 0\" "
                  "(`Divergence.InstancesWhoseErrorsOutgrowTheBoundAreLostAsDiverged`: explicit Euler on the naive "
                  "equations, whose energy error passes 10⁷ without the rule)"},
      {.section = "ensemble", .name = "only",
       .type = indices(&S::only, "must be an array of instance indices, e.g. [3, 17] (summary.json's lost_examples)", 0,
                       no_limit, true),
       .doc_default = "`[]` (all)", .doc_allowed = "< `size`",
       .meaning = "integrate these instances of the ensemble alone, with the initial data they have in the whole "
                  "ensemble (the same seed, size and perturbation): e.g. summary.json's `lost_examples`, to look at them "
                  "with `output.record`. Statistics are over the listed instances; `instances` in summary.json is their "
                  "number; states.h5's `/instances/index` maps rows to ensemble indices. `output.record` must list some "
                  "of them, and `output.trajectory`, `phase_error` and `periodogram` need instance 0 among them. Not "
                  "under mpirun. Tested: every listed instance ends bitwise as in the whole run, on both backends "
                  "(`Ensemble.OnlyRunsTheListedInstancesAsTheWholeEnsembleDoes`)"},
      // [output]
      {.section = "output", .name = "sample_dt", .type = real(&S::sample_dt, positive), .printed = resolved_sample_dt,
       .doc_default = "fixed step: the multiple of h nearest t_end/100; adaptive methods: t_end/100",
       .doc_allowed = "a multiple of h for fixed-step methods; at most 10⁷ samples",
       .meaning = "spacing of sample times; the last sample is t_end"},
      {.section = "output", .name = "trajectory", .type = flag(&S::trajectory),
       .meaning = "also write `trajectory.csv` (instance 0 and its reference solution at every sample)"},
      {.section = "output", .name = "reference",
       .type = one_of(&S::reference, std::vector<std::pair<std::string, std::string>>{{"auto", "auto"}, {"none", "none"}}),
       .printed = resolved_reference, .doc_default = "pendulum: `\"auto\"`; chain, double pendulum: `\"none\"`",
       .meaning = "the reference solution for `integration_error`: `auto` = the closed form in Jacobi elliptic "
                  "functions (pendulum) or a numerical reference (chains and the double pendulum: DOPRI5, or "
                  "`reference_method`, with rtol = atol = `reference_tol` on "
                  "the Hamilton–Dirac equations from each instance's own physical initial data, advanced alongside it; "
                  "it costs about as much as one more tight-tolerance instance); `none` = no integration error"},
      {.section = "output", .name = "reference_tol", .type = real(&S::reference_tol, positive),
       .meaning = "tolerance of the numerical reference"},
      {.section = "output", .name = "reference_method",
       .type = one_of(&S::reference_method, std::vector<std::pair<std::string, MethodId>>{{"dopri5", MethodId::dopri5},
                                                                                          {"dop853", MethodId::dop853},
                                                                                          {"vern9", MethodId::vern9}}),
       .meaning = "the embedded pair that integrates the numerical reference (with `output.reference = \"auto\"` on "
                  "chains, the double pendulum and user models): `dopri5`, or `dop853` and `vern9`, which reach "
                  "`reference_tol` = 1e-12 closer to the solution with a fifth (pendulum) to a third (double pendulum) "
                  "of DOPRI5's right-hand sides and are compiled on first use (docs/numerics.md)"},
      {.section = "output", .name = "states", .type = flag(&S::states),
       .meaning = "write `states.h5` with every instance's initial and final state, final metrics, first-passage "
                  "times, lost reason and work counters (about (4·S + 17)·8 + 100 bytes per instance in host memory, S "
                  "the state size; counted in the memory check)"},
      {.section = "output", .name = "record",
       .type = indices(&S::record, "must be an array of instance indices, e.g. [0, 1, 2]", 0, no_limit, true),
       .doc_allowed = "< `ensemble.size`, at most 4096",
       .meaning = "instances whose state, reference state and metrics at every sample time go into `states.h5` "
                  "(`/trajectories`); the recording must fit 8 GB of host memory"},
      {.section = "output", .name = "phase_error",
       .type = indices(&S::phase_error, "must be an array of numbers of periods, e.g. [2, 4, 10, 20, 30]", 1, two_to_40,
                       false),
       .meaning = "pendulum: the phase error \\|y(kT) − y_exact(kT)\\| of instance 0 after k periods (002 Table 1; T the "
                  "exact period of the nominal data, y_exact(kT) = y(0)) in `summary.json`; every kT must be a sample "
                  "time (choose `sample_dt = T/m` and, for fixed-step methods, `h = T/n`; the error message gives T) and "
                  "needs `reference = \"auto\"`"},
      {.section = "output", .name = "periodogram",
       .type = text(&S::periodogram, "must be the name of a physical state component (\"y\"), or \"\" for none"),
       .doc_default = "`\"\"` (none)", .doc_allowed = "a physical state component (`\"y\"`; chains `\"x6\"`, …)",
       .meaning = "the periodogram of that component of instance 0 at the equally spaced sample times (001 §6): "
                  "`periodogram.csv` and the peak in `summary.json`; at most 65 536 samples (direct DFT), at least 5"},
      {.section = "output", .name = "wedge", .type = flag(&S::wedge),
       .doc_allowed = "the pendulum and the penalty pendulum, fixed-step methods, double precision",
       .meaning = "the wedge-product (symplecticity) diagnostic of 004 §3.2: two consistent tangent vectors are carried "
                  "through every step and projection by the discrete variational equations, and the metric "
                  "`wedge_error` = \\|ω(t) − ω(0)\\| (ω(0) = 1) is reported with the same statistics as the other "
                  "metrics (docs/geometry.md). Switching it on does not change any other number of the run (tested bit "
                  "for bit); it costs 3–7× the CPU time (docs/geometry.md)"},
      {.section = "output", .name = "lyapunov", .type = flag(&S::lyapunov),
       .doc_allowed = "the built-in models and user models from a header (`model.source`); fixed-step methods, double "
                      "precision",
       .meaning = "the finite-time maximal Lyapunov exponent of each instance (docs/lyapunov.md): a tangent vector is "
                  "carried through every step and projection by the method's own discrete variational equations, and "
                  "the metric `lyapunov` = log(\\|P dz(t)\\| / \\|P dz(0)\\|) / t (P: into the constraint manifold's "
                  "tangent space; Euclidean in physical (q, p)) is reported with the same statistics as the other "
                  "metrics, 0 at t = 0. Switching it on does not change any other number of the run (tested bit for "
                  "bit)"},
      {.section = "output", .name = "lyapunov_spectrum", .type = flag(&S::lyapunov_spectrum),
       .doc_allowed = "as `output.lyapunov`, for at most 12 exponents (2(n − m): the pendulum 2, the penalty pendulum 4, "
                      "the double pendulum 4, a chain of N ≤ 5 atoms 2N + 2, a user model of 2(n − m) ≤ 12), not with "
                      "`output.wedge` or the impetus formulations; CPU, compiled on first use",
       .meaning = "all 2(n − m) finite-time Lyapunov exponents of each instance on the constraint manifold "
                  "(docs/lyapunov.md): as many tangents, put into the manifold's tangent space and re-orthonormalised "
                  "(Gram–Schmidt) every `output.lyapunov_interval`; summary.json's `lyapunov_spectrum` gives each "
                  "exponent's statistics over the live instances at the last sample time, as lists from the first "
                  "(largest) exponent down (and each `[parameters]` group's in `groups`), states.h5 each instance's "
                  "(`/instances/lyapunov_spectrum`, with `output.states`), and the metric `lyapunov` is the first. "
                  "Switching it on does not change any other number of the run (tested bit for bit)"},
      {.section = "output", .name = "lyapunov_interval", .type = real(&S::lyapunov_interval, positive),
       .printed = resolved_lyapunov_interval,
       .doc_default = "`output.sample_dt`; with `output.lyapunov_spectrum`, 10 h (or `output.sample_dt` if shorter)",
       .doc_allowed = "with `output.lyapunov` or `output.lyapunov_spectrum`; a multiple of h",
       .meaning = "how often the tangents are renormalised (Benettin's method): output.lyapunov's by a power of two, "
                  "which is exact, so the interval changes no number reported; it only keeps a chaotic tangent's growth "
                  "from overflowing. output.lyapunov_spectrum's re-orthonormalisation rounds, so its exponents depend "
                  "on the interval by rounding"},
      // [first_passage]: the keys are the metrics' names (metrics.hpp), in their order.
      {.section = "first_passage", .name = "integration_error", .type = real(&S::passage_integration_error, not_checked),
       .printed = printed_level<&Study::passage_integration_error>,
       .doc_allowed = "a run with a reference solution (`output.reference`)",
       .meaning = "record each instance's first time its integration error exceeds this level: checked at sample times "
                  "(the reference is evaluated there); the statistics of these times go to `summary.json`'s "
                  "`first_passage`, the surviving fraction to `series.csv`, each instance's time to `states.h5` "
                  "(docs/first_passage.md). A study with any `[first_passage]` key runs on the CPU backend only, "
                  "for now"},
      {.section = "first_passage", .name = "energy_error", .type = real(&S::passage_energy_error, not_checked),
       .printed = printed_level<&Study::passage_energy_error>,
       .meaning = "the same for the energy error \\|H − H(0)\\|, checked after every step: the crossing time is located "
                  "inside the step on its interpolant, to the method's order (at most 4 for fixed-step methods)"},
      {.section = "first_passage", .name = "phi", .type = real(&S::passage_phi, not_checked),
       .printed = printed_level<&Study::passage_phi>,
       .meaning = "the same for the position constraint residual max \\|φ\\|, checked after every step"},
      {.section = "first_passage", .name = "psi", .type = real(&S::passage_psi, not_checked),
       .printed = printed_level<&Study::passage_psi>,
       .meaning = "the same for the momentum constraint residual max \\|ψ\\|, checked after every step"},
      {.section = "first_passage", .name = "linear_momentum_error",
       .type = real(&S::passage_linear_momentum_error, not_checked), .scope = KeyScope::model,
       .scope_note = "only chains conserve the total linear momentum",
       .printed = printed_level<&Study::passage_linear_momentum_error>,
       .meaning = "the same for the linear momentum error, checked after every step"},
      {.section = "first_passage", .name = "angular_momentum_error",
       .type = real(&S::passage_angular_momentum_error, not_checked),
       .printed = printed_level<&Study::passage_angular_momentum_error>,
       .doc_allowed = "chains, and user models with an angular momentum",
       .meaning = "the same for the angular momentum error, checked after every step"},
      {.section = "first_passage", .name = "wedge_error", .type = real(&S::passage_wedge_error, not_checked),
       .printed = printed_level<&Study::passage_wedge_error>,
       .doc_allowed = "with `output.wedge = true`",
       .meaning = "the same for the wedge product's change, checked after every step"},
      {.section = "first_passage", .name = "lyapunov", .type = real(&S::passage_lyapunov, not_checked),
       .printed = printed_level<&Study::passage_lyapunov>, .doc_allowed = "with `output.lyapunov = true`",
       .meaning = "the same for the finite-time Lyapunov exponent, checked at sample times"},
      {.section = "first_passage", .name = "lost", .type = flag(&S::passage_lost), .printed = printed_passage_lost,
       .meaning = "record the first sample time at which each instance is lost (its last sample in the statistics is "
                  "the one before); every other level counts a loss before its crossing as `lost_first`"},
      // [parameters]: the keys are the parameter names (parameter_laws.hpp), in ParameterId's order.
      {.section = "parameters", .name = "mass", .type = parameter_law_key(ParameterId::mass),
       .scope = KeyScope::model, .printed = printed_law<ParameterId::mass>, .doc_default = "not varied",
       .doc_allowed = "the pendulum, the penalty pendulum, chains (every atom's mass; not with `model.masses`)",
       .meaning = "vary `model.mass` over the instances: each instance draws its own value from this law (or takes "
                  "the list's value at its index modulo the list's length), from the ensemble's seed and its index "
                  "alone, so that every backend, thread count, rank count and resume gives it the same value. "
                  "Initial data are made consistent with each instance's own parameters; each instance's values go to "
                  "`states.h5`, a summary of the drawn values to `summary.json` (docs/parameter_ensembles.md). A study "
                  "with `[parameters]` runs on the CPU backend only, for now"},
      {.section = "parameters", .name = "length", .type = parameter_law_key(ParameterId::length),
       .scope = KeyScope::model, .printed = printed_law<ParameterId::length>, .doc_default = "not varied",
       .meaning = "vary `model.length`; each instance's nominal positions are scaled by its length over `model.length` "
                  "(the same angle) before they are put on its constraint manifold"},
      {.section = "parameters", .name = "gravity", .type = parameter_law_key(ParameterId::gravity),
       .scope = KeyScope::model, .printed = printed_law<ParameterId::gravity>, .doc_default = "not varied", .meaning = "vary `model.gravity`"},
      {.section = "parameters", .name = "h", .type = parameter_law_key(ParameterId::h), .printed = printed_law<ParameterId::h>, .doc_default = "not varied",
       .doc_allowed = "fixed-step methods: `output.sample_dt` given, `integrator.t_end` a multiple of it, and a list's "
                      "values dividing it; double precision",
       .meaning = "vary the step size (adaptive methods: the initial trial step). Fixed-step methods sample every instance at "
                  "the same times: a list's values must divide `output.sample_dt`, and a drawn value is rounded to "
                  "`sample_dt / n` with n = max(1, round(sample_dt / value))"},
      {.section = "parameters", .name = "group_by", .type = strings_one_of(&S::group_by, parameter_names()),
       .printed = printed_group_by, .doc_default = "no groups",
       .doc_allowed = "a parameter this section varies",
       .meaning = "group the statistics by this parameter's values: each group gets the ensemble's statistics over "
                  "its own instances (summary.json `groups`, a `group` column in series.csv, a curve per group in "
                  "`chens plot`), reduced as the ensemble's so that they do not depend on threads or ranks. A list's "
                  "groups are its distinct values; a drawn parameter needs `group_bins` or `group_edges`. Each group "
                  "holds its statistics of a sample row, about 5 bytes per instance (counted in the memory check; "
                  "docs/parameter_ensembles.md)"},
      {.section = "parameters", .name = "group_bins", .type = integer_in(&S::group_bins, 1, std::int64_t(max_parameter_groups)),
       .printed = printed_group_bins, .doc_default = "none",
       .doc_allowed = "with `group_by` naming a uniform or log-uniform parameter",
       .meaning = "that many bins of equal width (log-uniform: of equal ratio) over the law's range [min, max]"},
      {.section = "parameters", .name = "group_edges",
       .type = numbers(&S::group_edges, "must be an array of ascending bin edges", "", [](double) { return true; }),
       .printed = printed_group_edges, .doc_default = "none",
       .doc_allowed = "with `group_by` naming a drawn parameter; 2 to 65 strictly ascending edges that every drawn "
                      "value lies between",
       .meaning = "the bins [e0, e1), [e1, e2), ..., [e(n-1), en] (the last one closed)"},
  };
}
// clang-format on

}  // namespace

std::vector<StudyKey> with_own_keys(std::vector<StudyKey> table, const std::vector<const ModelDescription*>& models) {
  for (const ModelDescription* m : models)
    for (StudyKey k : m->own_keys) {
      for (const StudyKey& other : table)
        if (other.path() == k.path())
          throw std::logic_error("study key " + k.path() + " is declared twice (model " + m->name + ")");
      k.scope = KeyScope::model;
      // After the section's last model-dependent key (so that keys of one kind stay together,
      // [parameters]' laws before group_by), else after its last key.
      auto at = table.end(), after_model_key = table.end();
      for (auto it = table.begin(); it != table.end(); ++it)
        if (std::string(it->section) == k.section) {
          at = it + 1;
          if (it->scope == KeyScope::model) after_model_key = it + 1;
        }
      table.insert(after_model_key != table.end() ? after_model_key : at, std::move(k));
    }
  return table;
}

const std::vector<StudyKey>& study_keys() {
  static const std::vector<StudyKey> keys = with_own_keys(declare_keys(), model_descriptions());
  return keys;
}

const std::vector<std::string>& study_sections() {
  static const std::vector<std::string> sections = [] {
    std::vector<std::string> out;
    for (const StudyKey& k : study_keys())
      if (out.empty() || out.back() != k.section) out.emplace_back(k.section);
    return out;
  }();
  return sections;
}

std::vector<const StudyKey*> section_keys(const std::string& section) {
  std::vector<const StudyKey*> out;
  for (const StudyKey& k : study_keys())
    if (section == k.section) out.push_back(&k);
  return out;
}

void refuse_keys_out_of_scope(const Study& s, const std::string& section) {
  // A user model's [model] entries are its own parameters, checked when they were read
  // (study_files.cpp); the built-in keys of the same names do not apply to it.
  if (is_custom(s) && section == "model") return;
  for (const StudyKey* k : section_keys(section)) {
    if (!s.has(k->path().c_str()) || in_scope(*k, s)) continue;
    const std::string why = k->scope_note ? k->scope_note : "this study's model.kind is \"" + model_name(s) + "\"";
    switch (k->scope) {
      case KeyScope::every_study: break;
      case KeyScope::model: throw StudyError(k->path() + " applies to " + models_taking(k->path()) + " only (" + why + ")");
      case KeyScope::baumgarte:
        throw StudyError(k->path() + " is a parameter of integrator.formulation = \"baumgarte\" (formulation was \"" +
                         formulation_name(s.formulation) + "\")");
    }
  }
}

std::optional<KeyValue> printed_value(const StudyKey& key, const Study& s, const RunParams<double>& rp, Printout to) {
  // A user model's [model] is its kind, its initial state and its parameters (printed by
  // to_toml and to_json after the keys of the table).
  if (is_custom(s) && std::string(key.section) == "model" && std::string(key.name) != "kind" &&
      std::string(key.name) != "initial" && std::string(key.name) != "source")
    return std::nullopt;
  // A key is printed in its own studies only (KeyScope), whatever its printer would say.
  if (!in_scope(key, s)) return std::nullopt;
  if (key.printed) return key.printed(s, rp, to);
  return key.type.value(s);
}

}  // namespace chens
