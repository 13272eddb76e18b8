#include "dispatch/run_study.hpp"

#include "dispatch/chain_dispatch.hpp"
#include "dispatch/float_dispatch.hpp"
#include "dispatch/pendulum_dispatch.hpp"

namespace chens {

EnsembleSpec ensemble_spec(const Study& s, int threads) {
  EnsembleSpec spec;
  spec.size = s.only.empty() ? static_cast<std::uint64_t>(s.size) : s.only.size();
  spec.only.assign(s.only.begin(), s.only.end());
  spec.seed = s.seed;
  spec.perturbation = s.perturbation;
  spec.record = recorded_instances(s);
  if (s.states) spec.keep_instances = spec.size;
  spec.threads = threads;
  return spec;
}

EnsembleResult run_study_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  if (s.precision == "float") return run_float_cpu(s, rp, spec);
  if (s.model_kind == "chain") return run_chain_cpu(s, rp, spec);
  if (s.model_kind == "penalty-pendulum") return run_penalty_cpu(s, rp, spec);
  return run_pendulum_cpu(s, rp, spec);
}

int physical_state_size(const Study& s) { return s.model_kind == "chain" ? 4 * static_cast<int>(s.atoms) : 4; }

std::size_t bytes_per_instance(const Study& s) {
  // output.states keeps each instance's initial and final states (formulation and physical
  // variables), final metrics, lost reason and counters.
  const auto S = static_cast<std::size_t>(physical_state_size(s));
  const std::size_t kept = s.states ? (4 * S + metric_count) * sizeof(double) + sizeof(Counters) + sizeof(int) : 0;
  if (s.model_kind == "chain") return chain_bytes_per_instance(static_cast<int>(s.atoms)) + kept;
  return pendulum_bytes_per_instance_with(s.wedge) + kept;
}

}  // namespace chens
