// A user model's spec (docs/custom-models.md) at its defaults: the parameters its
// Spec::parameters give, and its Spec::initial state at them (the examples' triatomic in
// test_custom_models.cpp and test_lyapunov_runs.cpp).
#pragma once

#include <chens/models/auto_model.hpp>

namespace chens::test {

template <class Spec>
typename AutoModel<Spec, double>::Params spec_default_parameters() {
  using M = AutoModel<Spec, double>;
  typename M::Params k = M::Params::zero();
  for (int i = 0; i < M::parameter_count; ++i) k[i] = Spec::parameters[i].value;
  return k;
}

template <class Spec>
typename AutoModel<Spec, double>::State spec_default_initial() {
  const auto k = spec_default_parameters<Spec>();
  typename AutoModel<Spec, double>::State z0;
  Spec::initial(k.v, z0.v);
  return z0;
}

}  // namespace chens::test
