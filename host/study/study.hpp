// A study: the user's description of one ensemble run (docs/study-format.md), parsed
// from TOML and --set overrides, validated key by key, and resolved into RunParams.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <chens/ensemble/run_params.hpp>
#include <chens/formulations/formulation.hpp>

#include "backends/parameter_laws.hpp"
#include "backends/step_grid.hpp"
#include "dispatch/method_id.hpp"
#include "dispatch/model_kind.hpp"
#include "dispatch/system_args.hpp"

namespace chens {

// Bad input: the message names the key, the value and what is allowed.
class StudyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// integrator.precision: the integration's arithmetic; float for throughput studies
// (docs/numerics.md, "Float runs"). A unit is told by SystemArgs's ModelKey::single.
enum class Precision { double_precision, single_precision };
inline constexpr int precision_count = 2;
// The study's name: "double", "float".
inline constexpr const char* precision_name(Precision p) { return p == Precision::single_precision ? "float" : "double"; }

// A key's value: TOML's and JSON's types (study_key_table.hpp prints and documents them).
using KeyValue =
    std::variant<bool, std::int64_t, std::uint64_t, double, std::string, std::vector<double>, std::vector<std::int64_t>>;

struct Study;
// model.kind as the study gave it: a built-in kind's name or a user model's.
std::string model_name(const Study& s);

// output.lyapunov_spectrum's largest 2(n - m): each exponent is a tangent carried through every
// step (geometry/tangent_system.hpp), so its cost grows with their number.
inline constexpr std::int64_t max_spectrum_exponents = 12;
// Its tangents are re-orthonormalised every this many steps unless output.lyapunov_interval says:
// between two, the directions align by e^((lambda_1 - lambda_K) t), which must stay far from
// 1 / rounding; the Gram-Schmidt costs about one projection per tangent, a fraction of the
// steps' cost at 10.
inline constexpr std::int64_t spectrum_renormalisation_steps = 10;

struct Study {
  // [model]
  ModelKind model_kind{};          // the systems list's first chens_model() (the default study's, the pendulum)
  std::string custom_model;        // model_kind = custom: the user model's name (model.kind)
  std::string model_source;        // model.source: the absolute path of the header defining it, or ""
  std::vector<double> parameters;  // model_kind = custom: its parameters' values, in its spec's order
  std::vector<double> initial;     // empty: the model's default (initial_state())
  double mass = 1.0;               // every atom's mass (chain), the bob's (pendulum), both bobs' (double pendulum)
  std::vector<double> masses;      // chain: one mass per atom; double pendulum: [m1, m2] (overrides mass)
  double length = 1.0;             // pendulum; double pendulum: both links
  double gravity = 1.0;            // pendulum, double pendulum
  // [integrator]
  FormulationId formulation = FormulationId::dirac;
  MethodId method = MethodId::rk4;
  double h = 0.1;
  double t_end = 100.0;
  double rtol = 1e-6;
  double atol = 1e-9;
  double tol = 1e-12;
  std::int64_t max_iterations = 100;
  std::int64_t max_steps = 100000000;
  double impetus_reset = 0.0;
  double baumgarte_alpha = 1.0;  // formulation baumgarte: phi'' + 2 alpha phi' + beta^2 phi = 0
  double baumgarte_beta = 1.0;
  Precision precision = Precision::double_precision;
  // [projection]
  bool momentum = false;
  bool position = false;
  double projection_tol = 1e-6;
  std::int64_t projection_max_iterations = 50;
  std::int64_t projection_every = 1;           // project after every k-th step (004 Fig. 4.5)
  std::string projection_scheme = "endpoint";  // "endpoint" | "midpoint" (stage projection, 004 §4)
  // [ensemble]
  std::int64_t size = 1024;
  std::uint64_t seed = 1;
  double perturbation = 1e-4;
  std::string distribution = "uniform";  // "uniform" | "normal"
  std::string kind = "consistent";       // "consistent" | "inconsistent" (000 §8)
  double phi_offset = 0.0;               // inconsistent: |phi - phi(z0)| of every instance
  double psi_offset = 0.0;               // inconsistent: |psi - psi(z0)|
  double lost_residual = 0.0;            // freeze instances whose |phi| or |psi| exceeds it; 0 = never
  double lost_diverged = 1e6;            // freeze instances whose errors exceed it (RunParams); 0 = never
  bool lost_unconverged = false;         // freeze instances whose implicit step or position projection hits its cap
  std::vector<std::int64_t> only;        // integrate these instances of the ensemble alone (ascending); empty = all
  // [output]
  std::optional<double> sample_dt;  // default: see resolve()
  bool trajectory = false;
  std::optional<std::string> reference;  // "auto" | "none"; default: auto for the (penalty) pendulum, none for
                                         // chains and the double pendulum (numerical references)
  double reference_tol = 1e-12;
  // The numerical reference's embedded pair (reference/numerical.hpp): DOPRI5, DOP853 or Vern9;
  // the latter two compiled on first use.
  MethodId reference_method = MethodId::dopri5;
  bool states = false;                      // states.h5: every instance's initial and final state
  std::vector<std::int64_t> record;         // instances whose trajectories go into states.h5
  std::vector<std::int64_t> phase_error;    // pendulum: |y(kT) - y_exact(kT)| of instance 0 at these k
  std::string periodogram;                  // a physical state component of instance 0, or "" (none)
  bool wedge = false;                       // the wedge-product diagnostic (004 §3.2): metric wedge_error
  bool lyapunov = false;                    // the finite-time maximal Lyapunov exponent: metric lyapunov
  bool lyapunov_spectrum = false;           // all 2(n - m) exponents (summary.json); the metric lyapunov too
  std::optional<double> lyapunov_interval;  // its tangents' renormalisation interval; default sample_dt
  // [first_passage] (ensemble/passage.hpp): the level of each metric whose first crossing every
  // instance records (0 = not checked), and whether the time it is lost is recorded.
  double passage_integration_error = 0.0;
  double passage_energy_error = 0.0;
  double passage_phi = 0.0;
  double passage_psi = 0.0;
  double passage_linear_momentum_error = 0.0;
  double passage_angular_momentum_error = 0.0;
  double passage_wedge_error = 0.0;
  double passage_lyapunov = 0.0;
  bool passage_lost = false;
  // [parameters] (backends/parameter_laws.hpp, docs/parameter_ensembles.md): the per-instance law
  // of each parameter the ensemble varies, indexed by ParameterId; LawKind::fixed elsewhere
  // (every instance takes the [model] or [integrator] value).
  std::array<ParameterLaw, parameter_count> vary{};
  // [parameters] group_by: the parameter whose values group the statistics ("": none); a
  // list's groups are its distinct values, a drawn parameter's are group_bins equal bins of its
  // law's range (uniform: equal widths; log-uniform: equal ratios) or the bins between
  // group_edges.
  std::string group_by;
  std::int64_t group_bins = 0;
  std::vector<double> group_edges;

  // Whether the instances carry tangent vectors (geometry/tangent_system.hpp).
  bool tangents() const { return wedge || lyapunov || lyapunov_spectrum; }
  // Whether the run reports Lyapunov exponents (the metric lyapunov, and the spectrum).
  bool exponents() const { return lyapunov || lyapunov_spectrum; }
  // The key that asks for them, for messages.
  const char* exponents_key() const { return lyapunov_spectrum ? "output.lyapunov_spectrum" : "output.lyapunov"; }
  // Whether the study checks a first-passage level ([first_passage]).
  bool first_passage_on() const;
  // Whether the study varies a parameter over its instances ([parameters]).
  bool varies_parameters() const {
    for (const ParameterLaw& l : vary)
      if (l.varies()) return true;
    return false;
  }
  const ParameterLaw& law(ParameterId p) const { return vary[static_cast<std::size_t>(p)]; }

  // The values of the keys a model declares itself (ModelDescription::own_keys: a chain's
  // model.atoms, the penalty pendulum's model.penalty, the double pendulum's model.lengths, ...),
  // by "section.key": a key absent here has its declared default.
  std::map<std::string, KeyValue> model_values;
  // "section.key" of every key the study file or --set gave.
  std::set<std::string> given;
  bool has(const char* key) const { return given.count(key) > 0; }
};

// The [first_passage] levels in the order of the metrics (metrics.hpp's MetricId): the one
// list that reading, resolving and the tests go through.
inline constexpr double Study::*passage_level_members[] = {&Study::passage_integration_error,
                                                           &Study::passage_energy_error,
                                                           &Study::passage_phi,
                                                           &Study::passage_psi,
                                                           &Study::passage_linear_momentum_error,
                                                           &Study::passage_angular_momentum_error,
                                                           &Study::passage_wedge_error,
                                                           &Study::passage_lyapunov};

inline bool Study::first_passage_on() const {
  for (double Study::*level : passage_level_members)
    if (this->*level > 0) return true;
  return passage_lost;
}

// The initial state the study runs from: model.initial, or its model's default
// (models/model_description.hpp: ModelDescription::default_initial).
std::vector<double> initial_state(const Study& s);
// The key of the study's model in the systems list (kind, precision, chain size, user model).
ModelKey model_key(const Study& s);
// What a system unit runs the study from (dispatch/system_args.hpp): rp and the study's
// method, initial state, model and formulation parameters.
SystemArgs system_args(const Study& s, const RunParams<double>& rp);
// Whether the run computes a reference solution (output.reference resolved).
bool reference_on(const Study& s);
// Names of the physical state's components (pendulum x, y, px, py; chain x0, y0, ..., px0, ...;
// a user model's coordinates, then p and their names).
std::vector<std::string> physical_state_names(const Study& s);
// The exact period of the nominal instance of a model with a closed-form period (the pendulum,
// after projection onto the manifold): the T of output.phase_error. Throws StudyError for
// other models or where there is no period.
double nominal_period(const Study& s);
// Instances whose trajectories the run records (output.record, plus instance 0 when
// trajectory.csv, the phase error or the periodogram need it), ascending and unique.
std::vector<std::uint64_t> recorded_instances(const Study& s);
// The periodogram's direct DFT is O(N^2): N is bounded.
inline constexpr std::int64_t periodogram_max_samples = 65536;
// Whether this build writes HDF5 (states.h5); CMake finds HDF5's C++ library.
bool hdf5_available();

// Reads the study file (if any) and applies --set SECTION.KEY=VALUE overrides in order.
// Throws StudyError naming the offending key.
Study load_study(const std::optional<std::string>& path, const std::vector<std::string>& sets);

// Sets one key of `s` as --set does ("model.atoms=12": the value read as TOML, a bare word as a
// string), checked by the key's own rule and marked as given: how code that builds a Study
// without a study file sets a key, a model's own keys among them (Study::model_values). Throws
// StudyError naming the key. A user model's parameters are not keys of the table: set them in
// Study::parameters.
void set_key(Study& s, const std::string& set);

// One run of a study file with several runs ([sweep] and/or [[run]], docs/study-format.md).
struct StudyRun {
  std::string name;  // directory under --out; "" for a study file with a single run
  std::vector<std::pair<std::string, std::string>> overrides;  // "section.key" and value, in order
  Study study;
};

// The runs of a study file: each [[run]] (or the base study alone), times every combination
// of the [sweep] values, each with --set applied last. A file with neither gives one run
// named "". Throws StudyError naming the offending key, value or run.
std::vector<StudyRun> load_runs(const std::optional<std::string>& path, const std::vector<std::string>& sets);

// The runs of a study given as TOML text (origin names it in messages), --set applied.
std::vector<StudyRun> load_runs_text(const std::string& text, const std::string& origin,
                                     const std::vector<std::string>& sets);

// The runs of the built-in default study (examples/default_study.toml, compiled in), --set
// applied to every run: what `chens run` and `chens check` run without a study file (and
// without --single).
std::vector<StudyRun> load_default_runs(const std::vector<std::string>& sets = {});

// Checks cross-key constraints and computes the time grid. Throws StudyError.
RunParams<double> resolve(const Study& s);

// fixed_step_grid and with_step_size: backends/step_grid.hpp.
// What the study varies over its instances (EnsembleSpec::parameters).
ParameterEnsemble parameter_ensemble(const Study& s);

// The study as TOML (every key, resolved defaults included) and as JSON for summary.json.
std::string to_toml(const Study& s, const RunParams<double>& rp);
nlohmann::json to_json(const Study& s, const RunParams<double>& rp);

}  // namespace chens
