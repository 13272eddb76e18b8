// The planar double pendulum in Cartesian coordinates (docs/adding-a-model.md;
// include/chens/models/double_pendulum.hpp) as the study layer sees it: two masses and two
// link lengths (model.masses, model.lengths, or model.mass and model.length for both), no
// closed form (a numerical reference, as for chains).
#include <cmath>

#include <chens/models/double_pendulum.hpp>

#include "models/model_description.hpp"
#include "study/study_values.hpp"

namespace chens {

namespace {

// Its own key (ModelDescription::own_keys): the two link lengths.
constexpr const char* lengths_key = "model.lengths";

DoublePendulum<double> model(const Study& s) {
  // validate() has checked that masses and lengths hold two numbers where given.
  const std::vector<double>& links = model_numbers(s, lengths_key);
  const bool two_masses = s.masses.size() == 2, two_lengths = links.size() == 2;
  return DoublePendulum<double>{two_masses ? s.masses[0] : s.mass, two_masses ? s.masses[1] : s.mass,
                                two_lengths ? links[0] : s.length, two_lengths ? links[1] : s.length, s.gravity};
}

std::vector<std::string> state_names(const Study&) { return {"x1", "y1", "x2", "y2", "px1", "py1", "px2", "py2"}; }

std::vector<double> default_initial(const Study& s) {
  const auto z = DoublePendulum<double>::default_initial(model(s));
  return std::vector<double>(z.v, z.v + z.size);
}

void validate(const Study& s) {
  if (s.has("model.masses") && s.has("model.mass"))
    throw StudyError("model.mass and model.masses are both given: use one (mass sets both bobs)");
  if (!s.masses.empty() && s.masses.size() != 2)
    throw StudyError("model.masses has " + std::to_string(s.masses.size()) +
                     " entries; model.kind = \"double-pendulum\" needs two masses [m1, m2]");
  if (s.has("model.lengths") && s.has("model.length"))
    throw StudyError("model.length and model.lengths are both given: use one (length sets both links)");
  const std::vector<double>& links = model_numbers(s, lengths_key);
  if (!links.empty() && links.size() != 2)
    throw StudyError("model.lengths has " + std::to_string(links.size()) +
                     " entries; model.kind = \"double-pendulum\" needs two link lengths [l1, l2]");
  const std::vector<double> z = initial_state(s);
  if (z.size() != 8)
    throw StudyError("model.initial has " + std::to_string(z.size()) +
                     " numbers: the double pendulum needs an array of 8 numbers [x1, y1, x2, y2, px1, py1, px2, py2]");
  // The links must have their lengths (as a chain's bonds): the constraint manifold is the
  // point of the model, and the numerical reference keeps the level set it starts on.
  const DoublePendulum<double> m = model(s);
  const double r1 = std::hypot(z[0], z[1]), r2 = std::hypot(z[2] - z[0], z[3] - z[1]);
  if (!(std::fabs(r1 - m.l1) <= length_rel_tol * m.l1))
    throw StudyError("model.initial: link 1 (pivot to bob 1) has length " + shortest(r1) + ", but l1 = " + shortest(m.l1) +
                     " (model.length or model.lengths; allowed relative deviation " + shortest(length_rel_tol) + ")");
  if (!(std::fabs(r2 - m.l2) <= length_rel_tol * m.l2))
    throw StudyError("model.initial: link 2 (bob 1 to bob 2) has length " + shortest(r2) + ", but l2 = " + shortest(m.l2) +
                     " (model.length or model.lengths; allowed relative deviation " + shortest(length_rel_tol) + ")");
}

void system_args(const Study& s, SystemArgs& a) {
  const DoublePendulum<double> m = model(s);
  a.masses = {m.m1, m.m2};
  a.lengths = {m.l1, m.l2};
}
std::vector<double> masses(const Study& s) {
  const DoublePendulum<double> m = model(s);
  return {m.m1, m.m2};
}
std::vector<double> lengths(const Study& s) {
  const DoublePendulum<double> m = model(s);
  return {m.l1, m.l2};
}
// model.lengths as given in TOML (where given), the resolved [l1, l2] in JSON.
std::optional<KeyValue> printed_lengths(const Study& s, const RunParams<double>&, Printout to) {
  if (to == Printout::json) return lengths(s);
  const std::vector<double>& given = model_numbers(s, lengths_key);
  if (given.empty()) return std::nullopt;
  return given;
}

}  // namespace

const ModelDescription& double_pendulum_description() {
  static const ModelDescription d{
      .kind = ModelKind::double_pendulum,
      .name = "double-pendulum",
      .keys = {"model.mass", "model.masses", "model.length", "model.gravity"},
      // clang-format off
      .own_keys = {
          {.section = "model", .name = "lengths",
           .type = own_numbers(lengths_key, "must be an array of the two link lengths [l1, l2]", " > 0",
                               [](double x) { return x > 0; }),
           .printed = printed_lengths, .doc_default = "both `length`",
           .doc_allowed = "two, [l1, l2]; not together with `length`",
           .meaning = "l1 (pivot to bob 1) and l2 (bob 1 to bob 2)"}},
      // clang-format on
      .formulations =
          [](const Study&) {
            return std::vector<FormulationId>{FormulationId::naive, FormulationId::dirac, FormulationId::impetus,
                                              FormulationId::baumgarte, FormulationId::constrained};
          },
      .lyapunov = true,
      .cpp_type = [](const Study&) { return std::string("DoublePendulum<double>"); },
      .state_names = state_names,
      .default_initial = default_initial,
      .validate = validate,
      .system_args = system_args,
      .conserves_angular_momentum = no_angular_momentum,
      .body_masses = masses,
      .constraints = [](const Study&) { return std::int64_t{2}; },  // the two links
  };
  return d;
}

}  // namespace chens
