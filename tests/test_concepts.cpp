// The named interfaces of include/chens/concepts.hpp hold for every model, formulation and
// method chens builds, and refuse a model that lacks a primitive (so they are not vacuous).
// Compile-time checks: a violation fails the build of this test.
#include <gtest/gtest.h>

#include <chens/concepts.hpp>
#include <chens/models/chain.hpp>
#include <chens/models/double_pendulum.hpp>
#include <chens/models/pendulum.hpp>
#include <chens/models/penalty_pendulum.hpp>

#include "dispatch/methods.hpp"

namespace chens {
namespace {

// The pendulum without S = {psi, psi} (002 eq. 43): not a constrained model.
struct PendulumWithoutS : Pendulum<double> {
  void s_mul() const = delete;
};
// A chain whose phi returns the wrong type.
struct ChainWithScalarPhi : Chain<double, 7> {
  double phi(const Coords&) const { return 0.0; }
};
// A method without step().
struct NoStep {
  static constexpr bool adaptive = false, has_lanes = false;
  static constexpr int order = 1;
};

template <class Model>
constexpr bool every_formulation_is_a_system() {
  return ModelSystem<Naive<Model>> && ModelSystem<HamiltonDirac<Model>> && ModelSystem<ImpetusStriction<Model>> &&
         ModelSystem<Constrained<Model>>;
}

TEST(Concepts, EveryModelFormulationAndMethodSatisfiesThem) {
  static_assert(ConstrainedModel<Pendulum<double>> && ConstrainedModel<Pendulum<float>> &&
                ConstrainedModel<Pendulum<double, true>> && ConstrainedModel<PenaltyPendulum<double>> &&
                ConstrainedModel<Chain<double, 7>> && ConstrainedModel<Chain<double, 64>> &&
                ConstrainedModel<Chain<float, 7>>);
  static_assert(every_formulation_is_a_system<Pendulum<double>>() && every_formulation_is_a_system<Chain<double, 16>>());
  static_assert(ConstrainedModel<DoublePendulum<double>> && every_formulation_is_a_system<DoublePendulum<double>>() &&
                ModelSystem<Baumgarte<DoublePendulum<double>>>);
  using P = Pendulum<double>;
  static_assert(ModelSystem<TotalHamiltonian<P>> && ModelSystem<ExtendedHamiltonian<P>> && ModelSystem<ImpetusModified<P>> &&
                ModelSystem<Baumgarte<P>> && ModelSystem<PenaltyOde<PenaltyPendulum<double>>>);
  using D = HamiltonDirac<P>;
  static_assert(OneStepMethod<ExplicitRk<Rk4Tableau>, D> && OneStepMethod<Dopri5<double>, D> &&
                OneStepMethod<ImplicitRk<Gauss2Tableau, double>, D> && OneStepMethod<MidpointProjection<double>, D> &&
                OneStepMethod<Rattle<double>, Constrained<P>> &&
                OneStepMethod<StormerVerlet, PenaltyOde<PenaltyPendulum<double>>>);
}

TEST(Concepts, RefuseWhatLacksAPrimitive) {
  static_assert(!ConstrainedModel<PendulumWithoutS>);
  static_assert(!ConstrainedModel<ChainWithScalarPhi>);
  static_assert(!OneStepMethod<NoStep, HamiltonDirac<Pendulum<double>>>);
  static_assert(!ModelSystem<Pendulum<double>>);  // a model is not a system: no formulation id, no physical()
}

}  // namespace
}  // namespace chens
