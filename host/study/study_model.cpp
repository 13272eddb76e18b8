// What a study says about its model beyond its keys: the initial state, masses, state
// names, the reference solution, the pendulum's period, the recorded instances, and what a
// system unit is given (model_key, system_args).
#include <algorithm>
#include <cmath>

#include <chens/models/chain.hpp>
#include <chens/models/double_pendulum.hpp>
#include <chens/models/pendulum.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "dispatch/chain_sizes.hpp"
#include "dispatch/custom_models.hpp"
#include "study/study_key_table.hpp"

namespace chens {

const std::vector<int>& compiled_chain_sizes() {
  static const std::vector<int> sizes = {
#define CHENS_CHAIN_SIZE_ENTRY(N) N,
      CHENS_FOR_EACH_CHAIN_SIZE(CHENS_CHAIN_SIZE_ENTRY)
#undef CHENS_CHAIN_SIZE_ENTRY
  };
  return sizes;
}

PenaltyPendulum<double> penalty_model(const Study& s) {
  return PenaltyPendulum<double>::make(s.mass, s.length, s.gravity, s.penalty,
                                       s.penalty_constraint == "G1" ? PenaltyConstraint::g1 : PenaltyConstraint::g);
}

std::vector<double> chain_inverse_masses(const Study& s) {
  std::vector<double> w(static_cast<std::size_t>(s.atoms), 1.0 / s.mass);
  if (!s.masses.empty() && s.masses.size() == w.size())
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1.0 / s.masses[i];
  return w;
}

DoublePendulum<double> double_pendulum_model(const Study& s) {
  // resolve() has checked that masses and lengths hold two numbers where given.
  const bool two_masses = s.masses.size() == 2, two_lengths = s.lengths.size() == 2;
  return DoublePendulum<double>{two_masses ? s.masses[0] : s.mass, two_masses ? s.masses[1] : s.mass,
                                two_lengths ? s.lengths[0] : s.length, two_lengths ? s.lengths[1] : s.length,
                                s.gravity};
}

ModelKey model_key(const Study& s) {
  ModelKey k;
  k.kind = s.model_kind;
  k.single = s.precision == Precision::single_precision;
  if (s.model_kind == ModelKind::chain) k.atoms = static_cast<int>(s.atoms);
  if (s.model_kind == ModelKind::custom) k.custom_name = s.custom_model;
  return k;
}

SystemArgs system_args(const Study& s, const RunParams<double>& rp) {
  SystemArgs a;
  a.rp = rp;
  a.method = s.method;
  a.initial = initial_state(s);
  auto set = [&](ParameterId p, double v) { a.parameter[static_cast<std::size_t>(p)] = v; };
  set(ParameterId::mass, s.mass);
  set(ParameterId::length, s.length);
  set(ParameterId::gravity, s.gravity);
  set(ParameterId::bond_length, s.bond_length);
  set(ParameterId::lj_epsilon, s.lj_epsilon);
  set(ParameterId::penalty, s.penalty);
  set(ParameterId::h, rp.h);
  if (s.model_kind == ModelKind::chain) a.inverse_masses = chain_inverse_masses(s);
  if (s.model_kind == ModelKind::double_pendulum) {
    const DoublePendulum<double> m = double_pendulum_model(s);
    a.masses = {m.m1, m.m2};
    a.lengths = {m.l1, m.l2};
  }
  a.penalty_g1 = s.penalty_constraint == "G1";
  if (s.model_kind == ModelKind::custom) a.custom = s.parameters;
  a.baumgarte_alpha = s.baumgarte_alpha;
  a.baumgarte_beta = s.baumgarte_beta;
  return a;
}

std::vector<std::string> double_pendulum_state_names() { return {"x1", "y1", "x2", "y2", "px1", "py1", "px2", "py2"}; }

std::vector<double> initial_state(const Study& s) {
  if (!s.initial.empty()) return s.initial;
  if (is_custom(s)) {
    const CustomModelInfo& m = custom_model_of(s);
    std::vector<double> z(static_cast<std::size_t>(2 * m.dof), std::nan(""));
    if (m.has_initial) m.initial(s.parameters.data(), z.data());
    return z;
  }
  if (is_chain(s)) {
    std::vector<double> z(static_cast<std::size_t>(4 * s.atoms));
    const std::vector<double> w = chain_inverse_masses(s);
    chain_default_initial(static_cast<int>(s.atoms), s.bond_length, w.data(), 0.25, z.data());
    return z;
  }
  if (is_double_pendulum(s)) {
    const DoublePendulum<double> m = double_pendulum_model(s);
    const auto z = DoublePendulum<double>::default_initial(m);
    return std::vector<double>(z.v, z.v + z.size);
  }
  return {1.0, 0.0, 0.0, -2.0};
}

bool reference_on(const Study& s) {
  if (s.reference) return *s.reference == "auto";
  return !is_chain(s) && !is_double_pendulum(s) && !is_custom(s);  // the (penalty) pendulum has the closed form
}

std::vector<std::string> chain_state_names(int atoms) {
  std::vector<std::string> names;
  for (const char* prefix : {"", "p"})
    for (int i = 0; i < atoms; ++i) {
      names.push_back(std::string(prefix) + "x" + std::to_string(i));
      names.push_back(std::string(prefix) + "y" + std::to_string(i));
    }
  return names;
}

std::vector<std::string> physical_state_names(const Study& s) {
  if (is_chain(s)) return chain_state_names(static_cast<int>(s.atoms));
  if (is_custom(s)) {  // q by the spec's names, then p<name>
    std::vector<std::string> names = custom_model_of(s).coordinates;
    for (const std::string& c : custom_model_of(s).coordinates) names.push_back("p" + c);
    return names;
  }
  if (is_double_pendulum(s)) return double_pendulum_state_names();
  return {"x", "y", "px", "py"};
}

double pendulum_nominal_period(const Study& s) {
  if (!is_rigid_pendulum(s))
    throw StudyError(std::string("output.phase_error measures the pendulum's phase after whole periods; model.kind is \"") +
                     model_name(s) + "\"");
  const std::vector<double> z = initial_state(s);
  const auto exact = PendulumExact<double>::make(Pendulum<double>{s.mass, s.length, s.gravity}, Vec<double, 4>{{z[0], z[1], z[2], z[3]}});
  const double T = exact.period();
  if (!std::isfinite(T) || !(T > 0))
    throw StudyError("output.phase_error: the nominal initial data [" + shortest(z[0]) + ", " + shortest(z[1]) + ", " +
                     shortest(z[2]) + ", " + shortest(z[3]) + "] have no finite period (the pendulum rests or sits on the separatrix)");
  return T;
}

std::vector<std::uint64_t> recorded_instances(const Study& s) {
  std::vector<std::uint64_t> out;
  for (std::int64_t i : s.record) out.push_back(static_cast<std::uint64_t>(i));
  if (s.trajectory || !s.phase_error.empty() || !s.periodogram.empty()) out.push_back(0);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool hdf5_available() {
#ifdef CHENS_HAVE_HDF5
  return true;
#else
  return false;
#endif
}

}  // namespace chens
