// The chain molecules' ModelTraits (dispatch/model_traits.hpp): what its system units need beyond
// its header. host/models/chain.cpp describes it to the study layer; chens_model() in the
// systems list registers both (cmake/ChensSystems.cmake). C++17-clean: nvcc compiles it.
#pragma once

#include <string>
#include <type_traits>

#include <chens/ensemble/instance.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/geometry/tangent_system.hpp>
#include <chens/models/chain.hpp>
#include <chens/reference/numerical.hpp>

#include "dispatch/model_traits.hpp"

namespace chens {

// Chains of N atoms (002 §7): every size of the systems list is its own instantiation. In
// double a tight DOPRI5 run is the reference; float runs have none (the reference's 1e-12
// tolerance is below float's resolution).
template <class Real, int N>
struct ModelTraits<Chain<Real, N>> {
  static constexpr ModelKind kind = ModelKind::chain;
  static bool matches(const ModelKey& k) { return k.kind == kind && k.atoms == N && precision_matches<Real>(k); }
  static Chain<Real, N> make(const SystemArgs& a) {
    Chain<double, N> c =
        Chain<double, N>::uniform(a[ParameterId::bond_length], a[ParameterId::lj_epsilon], a[ParameterId::mass]);
    for (int i = 0; i < N; ++i) c.w[i] = a.inverse_masses[static_cast<std::size_t>(i)];
    if constexpr (std::is_same_v<Real, double>) {
      return c;
    } else {
      return c.template rebound<Real>();
    }
  }
  using Reference = std::conditional_t<std::is_same_v<Real, double>, NumericalReference<Chain<Real, N>>,
                                       NoReference<Real, Chain<Real, N>::state_size>>;
  static std::string reference_kind(const RunParams<double>& rp) {
    return std::is_same_v<Real, double> ? numerical_reference_kind(rp) : std::string("none");
  }
  // With output.lyapunov an instance also carries two tangent vectors (geometry/tangent_system.hpp).
  static constexpr std::size_t bytes_per_instance(bool tangents) {
    using Dirac = HamiltonDirac<Chain<double, N>>;
    using Reference = NumericalReference<Chain<double, N>>;
    return tangents ? sizeof(InstanceOf<TangentSystem<Dirac>, Reference>) : sizeof(InstanceOf<Dirac, Reference>);
  }
  // As make(): the inverse masses and lengths in double, then in Real.
  static void set_parameter(Chain<Real, N>& c, ParameterId p, double v) {
    if (p == ParameterId::mass)
      for (int i = 0; i < N; ++i) c.w[i] = static_cast<Real>(1.0 / v);
    if (p == ParameterId::bond_length) c.L = static_cast<Real>(v);
    if (p == ParameterId::lj_epsilon) c.eps = static_cast<Real>(v);
  }
  static constexpr ParameterId length_parameter = ParameterId::bond_length;
  static double length_of(const Chain<Real, N>& c) { return static_cast<double>(c.L); }
};

}  // namespace chens
