// Perturbed initial data for instance i of an ensemble. The random numbers come from
// the counter-based Philox4x64-10 generator (Salmon et al., SC'11; Random123) keyed by
// (seed, 0) with counter (i, block, 0, 0), so instance i receives the same numbers on
// every backend, thread count and MPI split. Each component of the state is moved by
// delta * u, u uniform in [-1, 1) or (distribution = normal) the Irwin-Hall sum of 12
// uniforms in [0, 1) minus 6 (mean 0, variance 1, within +-6: a normal deviate computed
// with additions only, so that it has the same bits on every backend, which log and cos
// would not). The result is then put back on the level set {phi = phi*, psi = psi*}:
// Newton for the positions, then the exact momentum projection. For consistent ensembles
// phi* = phi(z0), psi* = psi(z0) (the constraint manifold when z0 is consistent); for
// inconsistent ones (000 §8's experiment) phi*_a = phi_a(z0) +- phi_offset and
// psi*_a = psi_a(z0) +- psi_offset, with a random sign per constraint and instance, so
// every instance is off the manifold by exactly the offsets. Instance 0 is the unperturbed
// nominal initial data. `on_level_set` reports whether the Newton iteration reached
// round-off (it may not when the perturbation is comparable to the size of the system);
// such an instance must not be integrated.
#pragma once

#include <Random123/philox.h>

#include <chens/config.hpp>
#include <chens/ensemble/perturbation_shape.hpp>
#include <chens/linalg/vec.hpp>
#include <chens/projections/momentum.hpp>
#include <chens/projections/position.hpp>

namespace chens {

// The 53 leading bits of x as a double in [-1, 1), computed exactly.
CHENS_HD CHENS_FORCEINLINE double uniform_pm1(std::uint64_t x) {
  const double u = static_cast<double>(x >> 11) * 1.1102230246251565404236316680908203125e-16;  // 2^-53
  return 2.0 * u - 1.0;
}

// The 53 leading bits of x as a double in [0, 1), computed exactly.
CHENS_HD CHENS_FORCEINLINE double uniform_01(std::uint64_t x) {
  return static_cast<double>(x >> 11) * 1.1102230246251565404236316680908203125e-16;  // 2^-53
}

// Component c's deviate of instance i in units of delta (see above). Philox counter
// blocks: uniform uses block c / 4, word c % 4; normal uses blocks 3 c .. 3 c + 2 (12 words).
CHENS_HD CHENS_FORCEINLINE double perturbation_deviate(std::uint64_t seed, std::uint64_t instance, int c,
                                                       PerturbationDistribution distribution) {
  r123::Philox4x64 rng;
  const r123::Philox4x64::key_type key = {{seed, 0}};
  if (distribution == PerturbationDistribution::uniform) {
    const r123::Philox4x64::ctr_type ctr = {{instance, static_cast<std::uint64_t>(c / 4), 0, 0}};
    return uniform_pm1(rng(ctr, key)[c % 4]);
  }
  double sum = 0.0;
  for (int b = 0; b < 3; ++b) {
    const r123::Philox4x64::ctr_type ctr = {{instance, static_cast<std::uint64_t>(3 * c + b), 1, 0}};
    const r123::Philox4x64::ctr_type r = rng(ctr, key);
    for (int j = 0; j < 4; ++j) sum += uniform_01(r[j]);
  }
  return sum - 6.0;
}

// +1 or -1 for constraint a of instance i (phi: which = 0, psi: which = 1).
CHENS_HD CHENS_FORCEINLINE int offset_sign(std::uint64_t seed, std::uint64_t instance, int which, int a) {
  r123::Philox4x64 rng;
  const r123::Philox4x64::key_type key = {{seed, 0}};
  const r123::Philox4x64::ctr_type ctr = {{instance, static_cast<std::uint64_t>(a), 2, static_cast<std::uint64_t>(which)}};
  return (rng(ctr, key)[0] >> 63) ? -1 : 1;
}

template <class Model>
CHENS_HD typename Model::State perturbed_initial_state(
    const Model& model, const typename Model::State& z0, typename Model::Real delta, std::uint64_t seed,
    std::uint64_t instance, bool* on_level_set = nullptr, const PerturbationShape<typename Model::Real>& shape = {}) {
  using Real = typename Model::Real;
  using State = typename Model::State;
  if (on_level_set) *on_level_set = true;
  const bool offsets = shape.phi_offset > Real(0) || shape.psi_offset > Real(0);
  if (instance == 0 || (delta == Real(0) && !offsets)) return z0;
  State z = z0;
  if (shape.distribution == PerturbationDistribution::uniform) {
    // One Philox call per four components (the deviates of perturbation_deviate).
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
  } else {
    for (int c = 0; c < State::size; ++c)
      z[c] = z[c] + mul_rn(delta, static_cast<Real>(perturbation_deviate(seed, instance, c, shape.distribution)));
  }
  auto phi0 = model.phi(Model::q_of(z0));
  auto psi0 = model.psi(z0);
  if (offsets) {
    for (int a = 0; a < Model::constraints; ++a) {
      phi0[a] = phi0[a] + Real(offset_sign(seed, instance, 0, a)) * shape.phi_offset;
      psi0[a] = psi0[a] + Real(offset_sign(seed, instance, 1, a)) * shape.psi_offset;
    }
  }
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
