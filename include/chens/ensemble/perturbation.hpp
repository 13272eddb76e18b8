// Perturbed initial data for instance i of an ensemble. The random numbers come from
// the counter-based Philox4x64-10 generator (Salmon et al., SC'11; Random123) keyed by
// (seed, 0) with counter (i, block, 0, 0), so instance i receives the same numbers on
// every backend, thread count and MPI split. Each component of the state is moved by
// delta * u with u uniform in [-1, 1); the result is then put back on the level set
// {phi = phi(z0), psi = psi(z0)} of the nominal initial data (the constraint manifold
// when z0 is consistent): Newton for the positions, then the exact momentum
// projection. Instance 0 is the unperturbed nominal initial data. `on_level_set` reports
// whether the Newton iteration reached round-off (it may not when the perturbation is
// comparable to the size of the system); such an instance must not be integrated.
#pragma once

#include <Random123/philox.h>

#include <chens/config.hpp>
#include <chens/linalg/vec.hpp>
#include <chens/projections/momentum.hpp>
#include <chens/projections/position.hpp>

namespace chens {

// The 53 leading bits of x as a double in [-1, 1), computed exactly.
CHENS_HD CHENS_FORCEINLINE double uniform_pm1(std::uint64_t x) {
  const double u = static_cast<double>(x >> 11) * 1.1102230246251565404236316680908203125e-16;  // 2^-53
  return 2.0 * u - 1.0;
}

template <class Model>
CHENS_HD typename Model::State perturbed_initial_state(const Model& model, const typename Model::State& z0,
                                                       typename Model::Real delta, std::uint64_t seed,
                                                       std::uint64_t instance, bool* on_level_set = nullptr) {
  using Real = typename Model::Real;
  using State = typename Model::State;
  if (on_level_set) *on_level_set = true;
  if (instance == 0 || delta == Real(0)) return z0;
  State z = z0;
  r123::Philox4x64 rng;
  const r123::Philox4x64::key_type key = {{seed, 0}};
  for (int block = 0; block * 4 < State::size; ++block) {
    const r123::Philox4x64::ctr_type ctr = {{instance, static_cast<std::uint64_t>(block), 0, 0}};
    const r123::Philox4x64::ctr_type r = rng(ctr, key);
    for (int j = 0; j < 4 && block * 4 + j < State::size; ++j) {
      const int c = block * 4 + j;
      z[c] = z[c] + mul_rn(delta, static_cast<Real>(uniform_pm1(r[j])));
    }
  }
  const auto phi0 = model.phi(Model::q_of(z0));
  const auto psi0 = model.psi(z0);
  const Real tol = Real(2) * machine_epsilon<Real>() * model.constraint_scale();
  // Newton with the matrix refreshed each sweep (a few sweeps reach round-off).
  for (int sweep = 0; sweep < 8; ++sweep)
    if (position_project(model, z, tol, 4, phi0).converged) break;
  momentum_project(model, z, psi0);
  if (on_level_set) {
    // Judged more loosely than the iteration's target, so that round-off noise in phi
    // never condemns an instance.
    auto r = model.phi(Model::q_of(z));
    for (int a = 0; a < Model::constraints; ++a) r[a] = r[a] - phi0[a];
    *on_level_set = all_finite(z) && max_abs(r) <= Real(32) * tol;
  }
  return z;
}

}  // namespace chens
