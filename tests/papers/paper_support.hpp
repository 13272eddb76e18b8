// Shared helpers of the paper-reproduction tests (docs/reproductions/pendulum.md).
//
// Every experiment integrates one trajectory of the unit pendulum (m = l = g = 1, as in
// all of Seiler's experiments) with the per-instance driver the ensemble backends run
// (include/chens/ensemble/instance.hpp): make_instance with perturbation 0 and index 0,
// advance_to_sample, measure_instance. The reference solution is PendulumExact (Jacobi
// elliptic functions); the papers used the state-space form integrated with h/10.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <numbers>
#include <stdexcept>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/counters.hpp>
#include <chens/ensemble/instance.hpp>
#include <chens/ensemble/run_params.hpp>
#include <chens/formulations/extended_hamiltonian.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/impetus_modified.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/pendulum.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "output/periodogram.hpp"

namespace chens::papers {

using Model = Pendulum<double>;
using State = Model::State;
using Rk4 = ExplicitRk<Rk4Tableau>;
using Exact = PendulumExact<double>;

inline Model unit_pendulum() { return Model{1.0, 1.0, 1.0}; }

// Initial data of 001 §6 and 002 §6: the pendulum rotates clockwise.
inline State rotating_initial_data() { return State{{1.0, 0.0, 0.0, -2.0}}; }

// Exact period of the rotation from rotating_initial_data() (the papers quote T ≈ 3.31).
inline double rotation_period() { return Exact::make(unit_pendulum(), rotating_initial_data()).period(); }

// A constant-step grid of `steps` steps of size h, sampled every `steps_per_sample`
// steps (and at the end), with tolerance-triggered projections as in 002 §11 / 001 §6.
struct Projections {
  bool momentum = false;
  bool position = false;
  double tol = 1e-6;
};

inline RunParams<double> fixed_grid(double h, index_t steps, index_t steps_per_sample, Projections pr = {}) {
  RunParams<double> rp;
  rp.fixed_step = true;
  rp.h = h;
  rp.last_h = h;
  rp.total_steps = steps;
  rp.t_end = static_cast<double>(steps) * h;
  rp.steps_per_sample = steps_per_sample;
  rp.samples = (steps + steps_per_sample - 1) / steps_per_sample;
  rp.sample_dt = static_cast<double>(steps_per_sample) * h;
  rp.project_momentum = pr.momentum;
  rp.project_position = pr.position;
  rp.projection_tol = pr.tol;
  rp.projection_max_iterations = 50;
  return rp;
}

struct Sample {
  double t;
  State z;     // state in the formulation's variables (impetuses for impetus formulations)
  State phys;  // physical (q, p)
  double integration_error, energy_error, phi, psi;
  Counters c;  // work counters accumulated up to t
};

struct Trajectory {
  std::vector<Sample> samples;
  Counters counters;
  bool lost = false;
};

// One trajectory, unperturbed, on the per-instance driver of the ensemble backends.
template <class System, class Method = Rk4>
Trajectory integrate(const System& sys, const State& z0, const RunParams<double>& rp, const Method& method = {}) {
  auto in = make_instance<System, Exact>(sys, z0, 0.0, 0, 0, rp);
  Trajectory tr;
  tr.samples.reserve(static_cast<std::size_t>(rp.samples + 1));
  for (index_t k = 0; k <= rp.samples; ++k) {
    if (k > 0) advance_to_sample(sys, method, rp, in, k);
    Metrics<double> m;
    if (!measure_instance(sys, rp, in, k, m)) {
      tr.lost = true;
      break;
    }
    tr.samples.push_back(Sample{rp.sample_time(k), in.z, sys.physical(in.z), m.v[0], m.v[1], m.v[2], m.v[3], in.c});
  }
  tr.counters = in.c;
  return tr;
}

// ---- growth rates ---------------------------------------------------------------

// Running maximum of a metric: the errors oscillate with the motion (and the phase
// error of y wraps around), the papers' "growth" describes their envelope.
template <class Get>
std::vector<double> running_max(const std::vector<Sample>& s, Get get) {
  std::vector<double> r(s.size());
  double m = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    m = std::max(m, get(s[i]));
    r[i] = m;
  }
  return r;
}

// Least-squares slope of log(v) against log(t) over the samples with t in [t0, t1]:
// the exponent p of v ~ t^p. Points are weighted uniformly in log t (each sample is
// weighted by its share of the log-time axis), so that late times do not dominate.
inline double loglog_slope(const std::vector<Sample>& s, const std::vector<double>& v, double t0, double t1) {
  std::vector<double> lx, ly, w;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i].t < t0 || s[i].t > t1 || !(v[i] > 0.0)) continue;
    lx.push_back(std::log(s[i].t));
    ly.push_back(std::log(v[i]));
  }
  if (lx.size() < 3) throw std::runtime_error("loglog_slope: fewer than 3 points in the window");
  w.resize(lx.size());
  for (std::size_t i = 0; i < lx.size(); ++i) {
    const double lo = i == 0 ? lx[0] : 0.5 * (lx[i - 1] + lx[i]);
    const double hi = i + 1 == lx.size() ? lx.back() : 0.5 * (lx[i] + lx[i + 1]);
    w[i] = hi - lo;
  }
  double sw = 0, sx = 0, sy = 0;
  for (std::size_t i = 0; i < lx.size(); ++i) {
    sw += w[i];
    sx += w[i] * lx[i];
    sy += w[i] * ly[i];
  }
  const double mx = sx / sw, my = sy / sw;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < lx.size(); ++i) {
    sxx += w[i] * (lx[i] - mx) * (lx[i] - mx);
    sxy += w[i] * (lx[i] - mx) * (ly[i] - my);
  }
  return sxy / sxx;
}

// Growth exponent of the running maximum of a metric over [t0, t1].
template <class Get>
double growth_exponent(const Trajectory& tr, Get get, double t0, double t1) {
  return loglog_slope(tr.samples, running_max(tr.samples, get), t0, t1);
}

inline double err_of(const Sample& s) { return s.integration_error; }
inline double energy_of(const Sample& s) { return s.energy_error; }
inline double phi_of(const Sample& s) { return s.phi; }
inline double psi_of(const Sample& s) { return s.psi; }

// The paper's criterion for useless results (002 §6: "the computed values can surely be
// considered as useless, if the integration error exceeds 1"): the first sample time at
// which the integration error exceeds 1, or the last sample time if it never does.
inline double useful_until(const Trajectory& tr) {
  for (const auto& s : tr.samples)
    if (s.integration_error > 1.0) return s.t;
  return tr.samples.empty() ? 0.0 : tr.samples.back().t;
}

// Largest value of a metric over the samples with t <= t1.
template <class Get>
double max_until(const Trajectory& tr, Get get, double t1) {
  double m = 0.0;
  for (const auto& s : tr.samples)
    if (s.t <= t1) m = std::max(m, get(s));
  return m;
}

// ---- periodogram (001 §6) ---------------------------------------------------------
// periodogram() is host/output/periodogram.hpp's, the one the CLI writes into summary.json
// and periodogram.csv.

}  // namespace chens::papers
