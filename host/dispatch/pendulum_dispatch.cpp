#include "dispatch/pendulum_dispatch.hpp"

namespace chens {

EnsembleResult run_pendulum_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  switch (s.formulation) {
    case FormulationId::naive: return run_pendulum_cpu_formulation<FormulationId::naive>(s, rp, spec);
    case FormulationId::total: return run_pendulum_cpu_formulation<FormulationId::total>(s, rp, spec);
    case FormulationId::extended: return run_pendulum_cpu_formulation<FormulationId::extended>(s, rp, spec);
    case FormulationId::dirac: return run_pendulum_cpu_formulation<FormulationId::dirac>(s, rp, spec);
    case FormulationId::impetus: return run_pendulum_cpu_formulation<FormulationId::impetus>(s, rp, spec);
    case FormulationId::impetus_modified:
      return run_pendulum_cpu_formulation<FormulationId::impetus_modified>(s, rp, spec);
  }
  throw StudyError("unknown integrator.formulation");
}

}  // namespace chens
