// Planar chain molecules of N atoms with fixed bond lengths (002 §7;
// include/chens/models/chain.hpp) as the study layer sees them: N is model.atoms, so the
// state's size and names, the masses and the systems-list key follow the study.
#include <algorithm>
#include <cmath>

#include <chens/models/chain.hpp>

#include "dispatch/chain_sizes.hpp"
#include "dispatch/jit_systems.hpp"
#include "models/model_description.hpp"
#include "study/study_values.hpp"

namespace chens {

const std::vector<int>& compiled_chain_sizes() {
  static const std::vector<int> sizes = {
#define CHENS_CHAIN_SIZE_ENTRY(N) N,
      CHENS_FOR_EACH_CHAIN_SIZE(CHENS_CHAIN_SIZE_ENTRY)
#undef CHENS_CHAIN_SIZE_ENTRY
  };
  return sizes;
}

namespace {

// Its own keys (ModelDescription::own_keys), with their defaults: N, the bond length L and
// the Lennard-Jones epsilon of 002 eq. 39.
constexpr OwnKey<std::int64_t> atoms_key{"model.atoms", 7};
constexpr OwnKey<double> bond_length_key{"model.bond_length", 1.0};
constexpr OwnKey<double> lj_epsilon_key{"model.lj_epsilon", 0.1};

std::int64_t atoms(const Study& s) { return model_value(s, atoms_key); }

std::vector<double> inverse_masses(const Study& s) {
  std::vector<double> w(static_cast<std::size_t>(atoms(s)), 1.0 / s.mass);
  if (!s.masses.empty() && s.masses.size() == w.size())
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1.0 / s.masses[i];
  return w;
}

std::vector<double> masses(const Study& s) {
  std::vector<double> m;
  for (double w : inverse_masses(s)) m.push_back(1.0 / w);
  return m;
}

std::vector<std::string> state_names(const Study& s) {
  std::vector<std::string> names;
  for (const char* prefix : {"", "p"})
    for (std::int64_t i = 0; i < atoms(s); ++i) {
      names.push_back(std::string(prefix) + "x" + std::to_string(i));
      names.push_back(std::string(prefix) + "y" + std::to_string(i));
    }
  return names;
}

std::vector<double> default_initial(const Study& s) {
  std::vector<double> z(static_cast<std::size_t>(4 * atoms(s)));
  const std::vector<double> w = inverse_masses(s);
  chain_default_initial(static_cast<int>(atoms(s)), model_value(s, bond_length_key), w.data(), 0.25, z.data());
  return z;
}

std::string list(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ", ") + std::to_string(x);
  return out;
}

void validate(const Study& s) {
  const std::int64_t n = atoms(s);
  const double bond = model_value(s, bond_length_key);
  // Sizes the build has are its units; any other up to max_jit_chain_atoms is compiled on
  // first use (dispatch/jit_systems.hpp, docs/jit.md).
  const auto& sizes = compiled_chain_sizes();
  if (std::find(sizes.begin(), sizes.end(), static_cast<int>(n)) == sizes.end() && (n < 2 || n > max_jit_chain_atoms))
    throw StudyError("model.atoms = " + std::to_string(n) + ": chains have 2 to " + std::to_string(max_jit_chain_atoms) +
                     " atoms (this build has units for " + list(sizes) +
                     "; other sizes are compiled on first use, docs/jit.md)");
  // Float runs: chains of float_chain_atoms atoms (the benchmarks' size), without the
  // numerical reference (its 1e-12 tolerance is below float's resolution).
  if (s.precision == Precision::single_precision) {
    if (n != float_chain_atoms)
      throw StudyError("integrator.precision = \"float\" is built for chains of " + std::to_string(float_chain_atoms) +
                       " atoms only (model.atoms = " + std::to_string(n) + "); use precision = \"double\"");
    if (s.reference && *s.reference == "auto")
      throw StudyError("output.reference = \"auto\" with integrator.precision = \"float\": the chain's numerical "
                       "reference runs at reference_tol = 1e-12, below float's resolution; use output.reference = "
                       "\"none\" or precision = \"double\"");
  }
  if (!s.masses.empty() && s.masses.size() != static_cast<std::size_t>(n))
    throw StudyError("model.masses has " + std::to_string(s.masses.size()) + " entries; model.atoms = " + std::to_string(n) +
                     " needs one mass per atom");
  if (s.has("model.masses") && s.has("model.mass"))
    throw StudyError("model.mass and model.masses are both given: use one (mass sets every atom)");
  if (s.law(ParameterId::mass).varies() && !s.masses.empty())
    throw StudyError("parameters.mass varies every atom's mass alike; this chain gives model.masses (one per atom): "
                     "remove one of them");
  const std::vector<double> z = initial_state(s);
  if (z.size() != static_cast<std::size_t>(4 * n))
    throw StudyError("model.initial has " + std::to_string(z.size()) + " numbers; model.atoms = " + std::to_string(n) +
                     " needs 4 * atoms = " + std::to_string(4 * n) + " (x0, y0, ..., x" + std::to_string(n - 1) + ", y" +
                     std::to_string(n - 1) + ", then px0, py0, ...)");
  // Bonds must have the bond length: the constraint manifold is the whole point.
  for (std::int64_t a = 0; a + 1 < n; ++a) {
    const double dx = z[2 * a + 2] - z[2 * a], dy = z[2 * a + 3] - z[2 * a + 1];
    const double r = std::sqrt(dx * dx + dy * dy);
    if (!(std::fabs(r - bond) <= length_rel_tol * bond))
      throw StudyError("model.initial: bond " + std::to_string(a) + " (atoms " + std::to_string(a) + " and " +
                       std::to_string(a + 1) + ") has length " + shortest(r) + ", but model.bond_length = " +
                       shortest(bond) + " (allowed relative deviation " + shortest(length_rel_tol) + ")");
  }
  // Atoms on top of each other make the Lennard-Jones potential infinite.
  if (model_value(s, lj_epsilon_key) > 0)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = i + 1; j < n; ++j)
        if (z[2 * i] == z[2 * j] && z[2 * i + 1] == z[2 * j + 1])
          throw StudyError("model.initial: atoms " + std::to_string(i) + " and " + std::to_string(j) +
                           " are at the same position; the Lennard-Jones potential is infinite there");
}

std::string cpp_type(const Study& s) {
  return std::string(s.precision == Precision::single_precision ? "Chain<float, " : "Chain<double, ") +
         std::to_string(atoms(s)) + ">";
}
std::string label(const Study& s) { return "chain N = " + std::to_string(atoms(s)); }

void system_args(const Study& s, SystemArgs& a) {
  a.inverse_masses = inverse_masses(s);
  a.parameter[static_cast<std::size_t>(ParameterId::bond_length)] = model_value(s, bond_length_key);
  a.parameter[static_cast<std::size_t>(ParameterId::lj_epsilon)] = model_value(s, lj_epsilon_key);
}
void system_key(const Study& s, ModelKey& k) { k.atoms = static_cast<int>(atoms(s)); }
bool free_molecule(const Study&) { return true; }  // no gravity, no pivot: both momenta are conserved

}  // namespace

const ModelDescription& chain_description() {
  static const ModelDescription d{
      .kind = ModelKind::chain,
      .name = "chain",
      .keys = {"model.mass", "model.masses", "first_passage.linear_momentum_error", "parameters.mass"},
      // clang-format off
      .own_keys = {
          {.section = "model", .name = "atoms", .type = own_integer(atoms_key, 2, max_jit_chain_atoms),
           .doc_allowed = "the build's sizes (default 7, 16, 32, 64) and, on the CPU, any other compiled on first use "
                          "(docs/jit.md)",
           .meaning = "N"},
          {.section = "model", .name = "bond_length", .type = own_real(bond_length_key, rules::positive),
           .meaning = "L"},
          {.section = "model", .name = "lj_epsilon",
           .type = own_real(lj_epsilon_key, rules::non_negative),
           .meaning = "ε of the Lennard-Jones potential"},
          {.section = "parameters", .name = "bond_length", .type = parameter_law_key(ParameterId::bond_length),
           .printed = printed_law<ParameterId::bond_length>, .doc_default = "not varied",
           .meaning = "vary `model.bond_length`; each instance's nominal positions are scaled by its bond length over "
                      "`model.bond_length`"},
          {.section = "parameters", .name = "lj_epsilon", .type = parameter_law_key(ParameterId::lj_epsilon),
           .printed = printed_law<ParameterId::lj_epsilon>, .doc_default = "not varied",
           .meaning = "vary `model.lj_epsilon`"}},
      // clang-format on
      .formulations =
          [](const Study&) {
            return std::vector<FormulationId>{FormulationId::naive, FormulationId::dirac, FormulationId::impetus,
                                              FormulationId::constrained};
          },
      .lyapunov = true,
      .single_precision = true,
      .cpp_type = cpp_type,
      .state_names = state_names,
      .default_initial = default_initial,
      .validate = validate,
      .system_args = system_args,
      .conserves_angular_momentum = free_molecule,
      .system_key = system_key,
      .body_masses = masses,
      .label = label,
      .constraints = [](const Study& s) { return atoms(s) - 1; },  // the bonds
  };
  return d;
}

}  // namespace chens
