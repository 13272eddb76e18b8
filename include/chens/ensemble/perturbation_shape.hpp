// How the instances of an ensemble are perturbed, besides the size of the perturbation:
// the distribution of the random displacement and, for inconsistent ensembles, the
// offsets from the constraint manifold (ensemble/perturbation.hpp says how they are used).
#pragma once

namespace chens {

enum class PerturbationDistribution : int { uniform = 0, normal = 1 };

template <class Real>
struct PerturbationShape {
  PerturbationDistribution distribution = PerturbationDistribution::uniform;
  Real phi_offset = Real(0);  // > 0 or psi_offset > 0: an inconsistent ensemble
  Real psi_offset = Real(0);
};

}  // namespace chens
