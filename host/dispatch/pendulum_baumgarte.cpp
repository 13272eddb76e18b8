#include "dispatch/pendulum_dispatch_impl.hpp"

namespace chens {
template EnsembleResult run_pendulum_cpu_formulation<FormulationId::baumgarte>(const Study&, const RunParams<double>&,
                                                                        const EnsembleSpec&);
}  // namespace chens
