// A run's finite-time Lyapunov exponent (output.lyapunov; geometry/tangent_system.hpp) against
// the central difference of two runs without dual numbers: what test_lyapunov_runs.cpp (chains,
// a user model from its header, compiled on first use) and test_custom_models.cpp (a user model
// built in by chens_add_model's TANGENTS) assert.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include <chens/diagnostics/metrics.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/geometry/lyapunov.hpp>
#include <chens/geometry/tangent_system.hpp>

#include "dispatch/run_study.hpp"
#include "study/study.hpp"

namespace chens::test {

// One instance of `base`'s model from exactly z0 (no perturbation, no reference),
// Hamilton-Dirac by RK4 with step h to t = 10, sampled every 2.5, with the exponent or without.
template <class State>
Study one_instance(Study base, const State& z0, double h, bool lyapunov) {
  Study s = std::move(base);
  s.initial.assign(z0.v, z0.v + State::size);
  s.given.insert("model.initial");
  s.formulation = FormulationId::dirac;
  s.method = MethodId::rk4;
  s.h = h;
  s.t_end = 10.0;
  s.sample_dt = 2.5;
  s.size = 1;
  s.perturbation = 0.0;
  s.reference = "none";
  s.lyapunov = lyapunov;
  return s;
}

// The same for a built-in model.kind.
template <class State>
Study one_instance(ModelKind kind, const State& z0, double h, bool lyapunov) {
  Study base;
  base.model_kind = kind;
  base.given.insert("model.kind");
  return one_instance(std::move(base), z0, h, lyapunov);
}

// The exponent of the run from z0 against the central difference of two runs from
// z0 +- eps dz0, dz0 the run's own initial tangent (geometry/tangent_system.hpp), each run
// one instance recorded at every sample (`study_from(z, lyapunov)`):
//   lambda_fd(t) = log(|P (z+(t) - z-(t))| / |P (z+(0) - z-(0))|) / t,
// P at z(t) of the run with the tangent. O(eps^2) from the linearisation and O(u / eps) from
// rounding (eps = 1e-6: both ~1e-10 relative), while the separation eps e^(lambda t) stays small.
template <class Model, class StudyFrom>
void expect_exponent_is_central_difference(const Model& model, const typename Model::State& z0, StudyFrom study_from,
                                           const std::string& what) {
  constexpr int S = Model::state_size;
  using TS = TangentSystem<HamiltonDirac<Model>>;
  const typename TS::State Z0 = TS::of(HamiltonDirac<Model>{model}).with_initial_tangents(z0);
  const double eps = 1e-6;
  typename Model::State zp, zm;
  for (int c = 0; c < S; ++c) {
    zp[c] = z0[c] + eps * Z0[S + c];
    zm[c] = z0[c] - eps * Z0[S + c];
  }
  const auto run_of = [](const Study& s) { return run_study_cpu(s, resolve(s), ensemble_spec(s, 1)); };
  const EnsembleResult r = run_of(study_from(z0, true));
  const EnsembleResult plus = run_of(study_from(zp, false)), minus = run_of(study_from(zm, false));
  ASSERT_EQ(r.lost_total() + plus.lost_total() + minus.lost_total(), 0u) << what;
  ASSERT_EQ(plus.recorded.state.size(), r.series.size() * S) << what;
  ASSERT_EQ(minus.recorded.state.size(), r.series.size() * S) << what;
  const auto separation = [&](std::size_t k) {
    typename Model::State z, d;
    for (int c = 0; c < S; ++c) {
      const std::size_t at = k * S + static_cast<std::size_t>(c);
      z[c] = r.recorded.state[at];
      d[c] = plus.recorded.state[at] - minus.recorded.state[at];
    }
    const typename Model::State pd = tangent_projection(model, z, d);
    double n2 = 0;
    for (int c = 0; c < S; ++c) n2 += pd[c] * pd[c];
    return std::sqrt(n2);
  };
  const double d0 = separation(0);
  for (std::size_t k = 1; k < r.series.size(); ++k) {
    const double t = r.series[k].t;
    const double fd = std::log(separation(k) / d0) / t, run = r.series[k].metric[int(MetricId::lyapunov)].mean;
    EXPECT_NEAR(run, fd, 1e-7 * std::max(1.0, std::fabs(fd)) / t) << what << ", t = " << t;
    std::printf("[ lyapunov ] %s, t = %g: run %.10g, central difference %.10g\n", what.c_str(), t, run, fd);
  }
}

}  // namespace chens::test
