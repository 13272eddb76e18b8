// What a study says about its model beyond its keys, from the model's description
// (models/model_description.hpp): the initial state, state names, the reference solution,
// the nominal period, and what a system unit is given (model_key, system_args); and the
// recorded instances.
#include <algorithm>
#include <cmath>

#include "models/model_description.hpp"

namespace chens {

ModelKey model_key(const Study& s) {
  ModelKey k;
  k.kind = s.model_kind;
  k.single = s.precision == Precision::single_precision;
  if (const auto fill = model_of(s).system_key) fill(s, k);
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
  set(ParameterId::h, rp.h);
  a.baumgarte_alpha = s.baumgarte_alpha;
  a.baumgarte_beta = s.baumgarte_beta;
  if (const auto more = model_of(s).system_args) more(s, a);
  return a;
}

std::vector<double> initial_state(const Study& s) {
  if (!s.initial.empty()) return s.initial;
  return model_of(s).default_initial(s);
}

bool reference_on(const Study& s) {
  if (s.reference) return *s.reference == "auto";
  return model_of(s).closed_form_reference;
}

std::vector<std::string> physical_state_names(const Study& s) { return model_of(s).state_names(s); }

double nominal_period(const Study& s) {
  const ModelDescription& model = model_of(s);
  if (!model.nominal_period)
    throw StudyError(std::string("output.phase_error measures the pendulum's phase after whole periods; model.kind is \"") +
                     model_name(s) + "\", which has no closed-form period");
  return model.nominal_period(s);
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
