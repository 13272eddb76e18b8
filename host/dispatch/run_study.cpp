#include "dispatch/run_study.hpp"

#include <cstdint>
#include <string>

#include <chens/ensemble/accumulator.hpp>

#include "backends/ensemble_spec.hpp"
#include "dispatch/jit_systems.hpp"
#include "dispatch/system_dispatch.hpp"
#include "study/study.hpp"

namespace chens {

template EnsembleResult run_study<CpuBackend>(const Study&, const RunParams<double>&, const EnsembleSpec&);

EnsembleSpec ensemble_spec(const Study& s, int threads) {
  EnsembleSpec spec;
  spec.size = s.only.empty() ? static_cast<std::uint64_t>(s.size) : s.only.size();
  spec.only.assign(s.only.begin(), s.only.end());
  spec.seed = s.seed;
  spec.perturbation = s.perturbation;
  spec.record = recorded_instances(s);
  if (s.states) spec.keep_instances = spec.size;
  spec.threads = threads;
  spec.parameters = parameter_ensemble(s);
  return spec;
}

namespace {

// The study's model (kind, precision, size) from the systems list; resolve() has refused the
// ones this build does not have.
template <class F>
void with_model_of(const Study& s, F&& f) {
  if (with_study_model(s, f)) return;
  throw StudyError(std::string("model.kind = \"") + model_name(s) +
                   "\" with these keys is not in this build's systems list");
}

}  // namespace

bool runs_compiled_on_first_use(const Study& s, BackendId backend) {
  return backend == BackendId::cuda ? compiles_on_first_use<CudaBackend>(s) : compiles_on_first_use<CpuBackend>(s);
}

FirstUseCompile first_use_compile(const Study& s, BackendId backend) {
  if (!runs_compiled_on_first_use(s, backend)) return FirstUseCompile::none;
  return jit_cached(jit_system(s, backend == BackendId::cuda)) ? FirstUseCompile::cached : FirstUseCompile::needed;
}

std::string first_use_label(const Study& s, BackendId backend) { return jit_system(s, backend == BackendId::cuda).label; }

std::size_t chain_bytes_per_instance_fit(int atoms, bool tangents) {
  const std::size_t b3 = ModelTraits<Chain<double, 3>>::bytes_per_instance(tangents);
  const std::size_t b4 = ModelTraits<Chain<double, 4>>::bytes_per_instance(tangents);
  return b3 + (b4 - b3) * static_cast<std::size_t>(atoms - 3);
}

namespace {

// A chain the build has no unit for (compiled on first use): from its object where it is
// cached, else the fit.
std::size_t chain_bytes_per_instance(const Study& s) {
  if (const std::size_t cached = jit_cached_bytes_per_instance(jit_system(s))) return cached;
  return chain_bytes_per_instance_fit(model_key(s).atoms, s.tangents());
}

}  // namespace

int physical_state_size(const Study& s) { return static_cast<int>(physical_state_names(s).size()); }

namespace {

// An instance's bytes, its system plain or with the pair of tangents.
std::size_t plain_bytes_per_instance(const Study& s, bool tangents) {
  if (s.model_kind == ModelKind::custom) {
    const CustomModelInfo& m = custom_model_of(s);
    return tangents ? m.bytes_per_instance_tangents : m.bytes_per_instance;
  }
  if (s.model_kind == ModelKind::chain && !with_study_model(s, [](auto) {})) {
    Study t = s;
    t.wedge = false;
    t.lyapunov = tangents;
    t.lyapunov_spectrum = false;
    return chain_bytes_per_instance(t);
  }
  std::size_t bytes = 0;
  with_model_of(s, [&](auto m) { bytes = ModelTraits<typename decltype(m)::type>::bytes_per_instance(tangents); });
  return bytes;
}

}  // namespace

std::size_t bytes_per_instance(const Study& s) {
  // output.states keeps each instance's initial and final states (formulation and physical
  // variables), final metrics, first-passage times, lost reason and counters.
  const auto S = static_cast<std::size_t>(physical_state_size(s));
  const std::size_t kept =
      s.states ? (4 * S + metric_count + passage_slots) * sizeof(double) + sizeof(Counters) + sizeof(int) : 0;
  // [parameters] group_by: each group's statistics of at least one sample row (an accumulator
  // per metric and block of cpu_block_size instances; CpuEngine::memory_rows) and each
  // instance's group index.
  const std::size_t groups = parameter_ensemble(s).groups();
  const std::size_t grouped =
      groups == 0
          ? 0
          : (groups * metric_count * sizeof(Accumulator) + cpu_block_size - 1) / cpu_block_size + sizeof(std::int16_t);
  if (s.lyapunov_spectrum) {
    // Its system is compiled on first use only: the object's own number once cached, else the
    // pair's tangent instance with the spectrum's K tangents and K sums of S numbers where the
    // pair has 2 and 2 slots (geometry/tangent_system.hpp), K = 2(n - m) <= S.
    if (const std::size_t cached = jit_cached_bytes_per_instance(jit_system(s))) return cached + kept + grouped;
    Study pair = s;
    pair.lyapunov_spectrum = false;
    pair.lyapunov = true;
    const std::size_t plain = plain_bytes_per_instance(pair, false), tangents = plain_bytes_per_instance(pair, true);
    const std::size_t per_pair = tangents > plain ? tangents - plain : 0;
    return plain + per_pair * (S * S + S) / (2 * S + 2) + kept + grouped;
  }
  return plain_bytes_per_instance(s, s.tangents()) + kept + grouped;
}

}  // namespace chens
