// What a system unit is given (issue 42): the key that picks the unit of the systems list
// and the plain values it builds its system, method and initial state from, filled by the
// front end from the study (study/study_model.cpp: model_key, system_args). Nothing of
// host/study, host/cli, host/output or host/mpi reaches a system unit through it, so that
// editing those rebuilds no system unit. C++17-clean: nvcc compiles it.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include <chens/ensemble/run_params.hpp>

#include "backends/parameter_laws.hpp"
#include "dispatch/method_id.hpp"
#include "dispatch/model_kind.hpp"

namespace chens {

// Which model type of the systems list runs a study: ModelTraits<Model>::matches(key).
struct ModelKey {
  ModelKind kind = ModelKind::pendulum;
  bool single = false;      // integrator.precision = "float"
  int atoms = 0;            // chains: model.atoms
  std::string custom_name;  // user models: model.kind
};

struct SystemArgs {
  RunParams<double> rp;             // resolve()'s run parameters
  MethodId method = MethodId::rk4;  // integrator.method
  std::vector<double> initial;      // the nominal initial state (model.initial or the model's default)
  // The model's parameters as the study gives them, by ParameterId (mass, length, gravity,
  // bond_length, lj_epsilon, penalty; h is rp's).
  std::array<double, parameter_count> parameter{};
  std::vector<double> inverse_masses;  // chains: each atom's 1 / m
  std::array<double, 2> masses{};      // the double pendulum's m1, m2 (model.masses or model.mass)
  std::array<double, 2> lengths{};     // its l1, l2 (model.lengths or model.length)
  bool penalty_g1 = false;             // the penalty pendulum's model.constraint = "G1" (003 §5)
  std::vector<double> custom;          // a user model's parameters, in its spec's order
  double baumgarte_alpha = 1.0;        // formulation baumgarte's alpha and beta
  double baumgarte_beta = 1.0;

  double operator[](ParameterId p) const { return parameter[static_cast<std::size_t>(p)]; }
};

}  // namespace chens
