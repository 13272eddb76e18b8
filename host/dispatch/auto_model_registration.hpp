// What a generated registration unit of chens_add_model() (cmake/ChensAddModel.cmake,
// host/dispatch/custom_model_unit.in) needs: a user model's CustomModelInfo from its spec
// (models/auto_model.hpp), with the entries of its systems-list units. Host only (g++).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/linalg/dense_solve.hpp>
#include <chens/models/auto_model.hpp>
#include <chens/reference/numerical.hpp>

#include "backends/backend.hpp"
#include "dispatch/auto_model_traits.hpp"
#include "dispatch/custom_models.hpp"
#include "dispatch/system_list.hpp"

namespace chens {

// V, phi and the condition number of Q at the initial data (`chens check` and `chens run`
// refuse non-finite values and cond(Q) > 1e12, study/study_resolve.cpp).
template <class Spec>
InitialCheck auto_model_check(const double* k, const double* z) {
  using M = AutoModel<Spec, double>;
  typename M::Params p = M::Params::zero();
  for (int i = 0; i < M::parameter_count; ++i) p[i] = k[i];
  const M m = M::make(p);
  typename M::Coords q;
  for (int i = 0; i < M::dof; ++i) q[i] = z[i];
  InitialCheck c;
  c.potential = m.potential(q);
  const auto f = m.phi(q);
  c.phi.assign(f.v, f.v + M::constraints);
  c.gram_condition = spd_condition_number(m.gram_matrix(q));
  return c;
}

template <class Spec>
CustomModelInfo auto_model_info(const char* header, std::vector<CustomEntry> entries) {
  using M = AutoModel<Spec, double>;
  static_assert(sizeof(Spec::coordinates) / sizeof(const char*) == M::dof,
                "the spec's coordinates[] names each of its dof coordinates once (docs/custom-models.md)");
  CustomModelInfo info;
  info.name = Spec::name;
  info.header = header;
  info.dof = M::dof;
  info.constraints = M::constraints;
  if constexpr (M::parameter_count > 0)
    for (const ModelParameter& p : Spec::parameters)
      info.parameters.push_back({p.name, p.value, p.meaning ? p.meaning : ""});
  for (const char* c : Spec::coordinates) info.coordinates.emplace_back(c);
  if constexpr (spec_has_initial<Spec>) {
    info.has_initial = true;
    info.initial = &Spec::initial;
  }
  info.angular_momentum = M::has_momentum_integrals;
  info.check = &auto_model_check<Spec>;
  info.bytes_per_instance = ModelTraits<M>::bytes_per_instance(false);
  info.bytes_per_instance_tangents = ModelTraits<M>::bytes_per_instance(true);
  info.entries = std::move(entries);
  return info;
}

}  // namespace chens
