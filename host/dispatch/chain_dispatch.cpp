#include "dispatch/chain_dispatch.hpp"

#include <chens/ensemble/instance.hpp>
#include <chens/models/chain.hpp>
#include <chens/reference/numerical.hpp>

#include "dispatch/chain_sizes.hpp"
#include "dispatch/methods.hpp"

namespace chens {

namespace {

template <int N>
EnsembleResult run_chain_cpu_atoms(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  switch (s.formulation) {
    case FormulationId::naive: return run_chain_cpu_formulation<N, FormulationId::naive>(s, rp, spec);
    case FormulationId::dirac: return run_chain_cpu_formulation<N, FormulationId::dirac>(s, rp, spec);
    case FormulationId::impetus: return run_chain_cpu_formulation<N, FormulationId::impetus>(s, rp, spec);
    case FormulationId::constrained: return run_chain_cpu_formulation<N, FormulationId::constrained>(s, rp, spec);
    default: break;
  }
  throw StudyError(std::string("integrator.formulation = \"") + formulation_name(s.formulation) +
                   "\" is not available for chains");
}

template <int N>
constexpr std::size_t chain_instance_bytes() {
  using Model = Chain<double, N>;
  return sizeof(InstanceOf<HamiltonDirac<Model>, NumericalReference<Model>>);
}

}  // namespace

EnsembleResult run_chain_cpu(const Study& s, const RunParams<double>& rp, const EnsembleSpec& spec) {
  switch (static_cast<int>(s.atoms)) {
#define CHENS_CHAIN_CASE(N) \
  case N: return run_chain_cpu_atoms<N>(s, rp, spec);
    CHENS_FOR_EACH_CHAIN_SIZE(CHENS_CHAIN_CASE)
#undef CHENS_CHAIN_CASE
  }
  throw StudyError("model.atoms = " + std::to_string(s.atoms) + " is not instantiated in this build");
}

std::size_t chain_bytes_per_instance(int atoms) {
  switch (atoms) {
#define CHENS_CHAIN_CASE(N) \
  case N: return chain_instance_bytes<N>();
    CHENS_FOR_EACH_CHAIN_SIZE(CHENS_CHAIN_CASE)
#undef CHENS_CHAIN_CASE
  }
  return 0;
}

}  // namespace chens
