#include "dispatch/run_study.hpp"

#include "dispatch/chain_dispatch.hpp"
#include "dispatch/float_dispatch.hpp"
#include "dispatch/pendulum_dispatch.hpp"

namespace chens {

EnsembleSpec ensemble_spec(const Study& s, int threads) {
  EnsembleSpec spec;
  spec.size = static_cast<std::uint64_t>(s.size);
  spec.seed = s.seed;
  spec.perturbation = s.perturbation;
  spec.record_trajectory = s.trajectory;
  spec.threads = threads;
  return spec;
}

EnsembleResult run_study_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  if (s.precision == "float") return run_float_cpu(s, rp, spec);
  if (s.model_kind == "chain") return run_chain_cpu(s, rp, spec);
  return run_pendulum_cpu(s, rp, spec);
}

std::size_t bytes_per_instance(const Study& s) {
  if (s.model_kind == "chain") return chain_bytes_per_instance(static_cast<int>(s.atoms));
  return pendulum_bytes_per_instance;
}

}  // namespace chens
