// CPU float runs (integrator.precision = "float", float_runs.hpp).
#include "dispatch/float_dispatch.hpp"

#include "backends/cpu/cpu_ensemble.hpp"
#include "dispatch/float_runs.hpp"

namespace chens {

EnsembleResult run_float_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  auto cpu = [](const auto& sys, const auto& method, const auto& rpf, const auto& z0, const EnsembleSpec& sp, auto ref) {
    return run_cpu_ensemble<std::decay_t<decltype(sys)>, std::decay_t<decltype(method)>, typename decltype(ref)::type>(
        sys, method, rpf, z0, sp);
  };
  return s.model_kind == "chain" ? run_float_study<true>(s, rp, spec, cpu) : run_float_study<false>(s, rp, spec, cpu);
}

}  // namespace chens
