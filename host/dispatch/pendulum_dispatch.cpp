#include "dispatch/methods.hpp"
#include "dispatch/pendulum_dispatch.hpp"

namespace chens {

EnsembleResult run_pendulum_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  return with_formulation_id(s.formulation, [&](auto fid) {
    return run_pendulum_cpu_formulation<decltype(fid)::value>(s, rp, spec);
  });
}

}  // namespace chens
