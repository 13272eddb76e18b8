// CPU throughput of chens against Boost.Odeint on the same problem (docs/performance.md).
//
// Problem: an ensemble of planar pendulums, m = l = g = 1, nominal initial data
// (x, y, px, py) = (1, 0, 0, -2), instance i perturbed by chens::perturbed_initial_state
// (delta = 1e-4, seed 1; instance 0 is the nominal data). Hamilton-Dirac equations
// (002 eqs. 35-36), classical RK4, h = 0.01, a fixed number of steps, momentum projection
// after a step whenever |psi| > 1e-6 (as `chens run` does with projection.momentum = true).
// As in `chens run`, m, l, g and the initial data are run-time values for chens.
//
//   chens_driver          make_instance + advance_to_sample on one thread, no reference
//                         solution and no diagnostics: the per-instance driver alone, one
//                         instance at a time (B = 1, as on the GPU and for single instances).
//   chens_driver_lanes4   the same driver advancing 4 instances in lockstep
//                         (advance_fixed_to_sample<4>, as run_ensemble<CpuBackend> does): the lanes
//                         gain in isolation.
//   chens_driver_packed   the CPU backend's packed loop (ensemble/packed_steps.hpp) on the same
//                         driver: 2 registers of W instances in lockstep, the state packed from
//                         the first step to the sample, compiled for each instruction set the
//                         CPU runs (isa:sse2 W = 2, avx2 W = 4, avx512 W = 8; issue 23), on one
//                         thread and on all (OpenMP over lane groups). Integration and the
//                         projection check only: the like-for-like peer of odeint_rk4.
//   chens_driver_const    chens_driver with m = l = g = 1 and z0 known at compile time.
//   chens_ensemble        run_ensemble<CpuBackend>, the production CPU path: the driver plus, at
//                         every sample (every 10 steps: 100 samples per 1000 steps, as
//                         `chens run` resolves t_end = 10, h = 0.01), the exact reference
//                         solution, the four metrics and their accumulators.
//                         threads:1 and threads:<all>.
//   chens_ensemble/isa:X  chens_ensemble with CHENS_CPU_ISA = X (scalar: one instance at a time).
//   chens_ensemble_midpoint/isa:X, chens_ensemble_gauss2/isa:X  the same with implicit midpoint
//                         and Gauss2 (tol 1e-12, at most 100 fixed-point sweeps), whose lanes
//                         iterate each instance to its own tolerance (ImplicitRkLanes).
//   chens_ensemble_lanes1 run_ensemble<CpuBackend> with lanes switched off (the method wrapped so
//                         that has_lanes = false): the production path one instance at a
//                         time, as before lanes.
//   chens_ensemble_noref  the same without the reference solution (NoReference): isolates
//                         the cost of the elliptic-function reference.
//   chens_ensemble_first_passage  chens_ensemble with first-passage levels (docs/first_passage.md)
//                         on the energy error, phi, psi (checked after every step), the
//                         integration error and the loss, none of them reached: the checks' cost.
//   chens_ensemble_parameters  chens_ensemble as a parameter ensemble (docs/parameter_ensembles.md)
//                         whose every instance draws the nominal length (parameters.length =
//                         [1.0]): the same numbers through the per-instance path, whose
//                         instances step one at a time (no lanes) on a system of their own.
//   chens_ensemble_groups  a parameter ensemble of eight masses by index (1, 1.25, ..., 2.75),
//                         its statistics grouped by mass ([parameters] group_by): eight more
//                         sets of accumulators and histograms beside the ensemble's, against
//                         chens_ensemble_parameters.
//   odeint_*              Boost.Odeint runge_kutta4 (array_algebra, the default for
//                         std::array; range_algebra) and runge_kutta4_classic stepping the
//                         same equations, written as a plain functor for m = l = g = 1,
//                         with the same projection, over the same initial states, one thread
//                         (odeint_rk4/threads:<all>: OpenMP over instances, a stepper per thread).
//                         The functor takes one reciprocal 1/r^2 per evaluation, as chens
//                         does, so that both round the same; odeint_rk4_div divides twice by
//                         r^2, as the functor measured at a79aa54 did.
//   *_projall             projection_tol = 0: the momentum projection runs after every step
//                         (its cost; with tol = 1e-6 it never triggers in these runs).
//                         chens_ensemble_projall is the production path (lanes) doing so.
//
// Throughput is reported as items_per_second = instance-steps per second (wall clock).
// Before timing, main() checks that every odeint variant ends in the same final states as
// the chens driver (max |difference| <= 1e-12, same number of projections), that the
// 4-lane driver's final states equal the driver's bit for bit, and that the ensemble's
// instance 0 (lanes on and off, and as a parameter ensemble of the nominal length) equals the
// driver's bit for bit, with sample statistics equal bit for bit with lanes on and off; the
// binary exits with status 1 otherwise.
//
// --one-pass=<name> [--instances=N] [--steps=S] [--threads=T] [--projall] runs one untimed
// pass of one variant and exits (for valgrind --tool=callgrind instruction counts; see
// docs/performance.md).

#include <benchmark/benchmark.h>

#include "bench_args.hpp"
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <boost/numeric/odeint.hpp>

#include <chens/ensemble/instance.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/integrators/explicit_rk.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/models/pendulum.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "backends/cpu/cpu_engine.hpp"
#include "backends/cpu/cpu_isa.hpp"

namespace {

namespace odeint = boost::numeric::odeint;

using Model = chens::Pendulum<double>;
using System = chens::HamiltonDirac<Model>;
using Method = chens::ExplicitRk<chens::Rk4Tableau>;
using State = Model::State;
using NoRef = chens::NoReference<double, Model::state_size>;
using ExactRef = chens::PendulumExact<double>;
using Arr = std::array<double, 4>;

// The same RK4 with lanes switched off: run_ensemble<CpuBackend> then takes its one-instance-at-a-
// time path (advance_to_sample, i.e. advance_fixed_to_sample<1> calling step()).
struct Rk4NoLanes : Method {
  static constexpr bool has_lanes = false;
};

constexpr double kH = 0.01;
constexpr double kPerturbation = 1e-4;
constexpr std::uint64_t kSeed = 1;
constexpr double kProjectionTol = 1e-6;
constexpr chens::index_t kStepsPerSample = 10;
constexpr double kAgreementTol = 1e-12;

constexpr std::int64_t kDefaultInstances = 1024;
constexpr std::int64_t kDefaultSteps = 1000;

// Compile-time constant model (only for the chens_driver_const variant).
const Model kModel{1.0, 1.0, 1.0};
const System kSystem{kModel};
const State kZ0{{1.0, 0.0, 0.0, -2.0}};

// As in `chens run`, m, l, g and the initial data are run-time values: read through a
// volatile so that the compiler cannot fold m = l = g = 1 into the chens code.
volatile double g_unit = 1.0;
Model runtime_model() { return Model{g_unit, g_unit, g_unit}; }
System runtime_system() { return System{runtime_model()}; }
State runtime_z0() { return State{{g_unit * kZ0[0], g_unit * kZ0[1], g_unit * kZ0[2], g_unit * kZ0[3]}}; }

// The time grid `chens run` resolves for h = 0.01, t_end = steps * h, sample_dt = 0.1,
// with last_h = h exactly (so that odeint takes the very same steps).
chens::RunParams<double> run_params(chens::index_t steps, double tol = kProjectionTol) {
  chens::RunParams<double> rp;
  rp.h = kH;
  rp.last_h = kH;
  rp.t_end = static_cast<double>(steps) * kH;
  rp.fixed_step = true;
  rp.total_steps = steps;
  rp.steps_per_sample = std::min<chens::index_t>(kStepsPerSample, std::max<chens::index_t>(1, steps));
  rp.sample_dt = static_cast<double>(rp.steps_per_sample) * kH;
  rp.samples = steps == 0 ? 0 : (steps + rp.steps_per_sample - 1) / rp.steps_per_sample;
  rp.project_momentum = true;
  rp.project_position = false;
  rp.projection_tol = tol;
  return rp;
}

chens::EnsembleSpec ensemble_spec(std::uint64_t n, int threads) {
  chens::EnsembleSpec spec;
  spec.size = n;
  spec.seed = kSeed;
  spec.perturbation = kPerturbation;
  spec.threads = threads;
  return spec;
}

struct PassResult {
  std::vector<Arr> finals;  // final state of every instance
  std::uint64_t projections = 0;
};

// ---- chens: the per-instance driver, one thread ----------------------------------------

PassResult chens_driver_pass(const System& sys, const State& z0, std::uint64_t n, chens::index_t steps, bool keep_finals,
                             double tol) {
  const auto rp = run_params(steps, tol);
  const Method method{};
  PassResult out;
  if (keep_finals) out.finals.resize(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    auto in = chens::make_instance<System, NoRef>(sys, z0, kPerturbation, kSeed, i, rp);
    for (chens::index_t k = 1; k <= rp.samples; ++k) chens::advance_to_sample(sys, method, rp, in, k);
    benchmark::DoNotOptimize(in.z);
    out.projections += in.c.momentum_projections;
    if (keep_finals) out.finals[i] = Arr{in.z[0], in.z[1], in.z[2], in.z[3]};
  }
  return out;
}

PassResult chens_driver_pass(std::uint64_t n, chens::index_t steps, bool keep_finals, double tol = kProjectionTol) {
  return chens_driver_pass(runtime_system(), runtime_z0(), n, steps, keep_finals, tol);
}

// The same driver, B instances in lockstep (advance_fixed_to_sample<B>), the rest one by one.
template <int B>
PassResult chens_driver_lanes_pass(std::uint64_t n, chens::index_t steps, bool keep_finals, double tol = kProjectionTol) {
  const System sys = runtime_system();
  const State z0 = runtime_z0();
  const auto rp = run_params(steps, tol);
  const Method method{};
  using Inst = chens::InstanceOf<System, NoRef>;
  PassResult out;
  if (keep_finals) out.finals.resize(n);
  for (std::uint64_t i = 0; i < n;) {
    const int b = (i + B <= n) ? B : 1;
    Inst in[B];
    for (int j = 0; j < b; ++j) in[j] = chens::make_instance<System, NoRef>(sys, z0, kPerturbation, kSeed, i + j, rp);
    for (chens::index_t k = 1; k <= rp.samples; ++k) {
      if (b == B) chens::advance_fixed_to_sample<B>(sys, method, rp, in, k);
      else chens::advance_fixed_to_sample<1>(sys, method, rp, in, k);
    }
    for (int j = 0; j < b; ++j) {
      benchmark::DoNotOptimize(in[j].z);
      out.projections += in[j].c.momentum_projections;
      if (keep_finals) out.finals[i + j] = Arr{in[j].z[0], in[j].z[1], in[j].z[2], in[j].z[3]};
    }
    i += static_cast<std::uint64_t>(b);
  }
  return out;
}

// The packed loop of instruction set I (cpu_engine.hpp's packed_advance_*), B = 2 W instances
// at a time, the rest one by one; on `threads` OpenMP threads over the lane groups.
template <chens::CpuIsa I>
PassResult chens_driver_packed_pass(std::uint64_t n, chens::index_t steps, bool keep_finals, double tol, int threads = 1) {
  constexpr int W = I == chens::CpuIsa::avx512 ? 8 : I == chens::CpuIsa::avx2 ? 4 : 2, P = chens::cpu_packs, B = P * W;
  const System sys = runtime_system();
  const State z0 = runtime_z0();
  const auto rp = run_params(steps, tol);
  const Method method{};
  using Inst = chens::InstanceOf<System, NoRef>;
  bool momentum = false;
  if (!chens::packed_fits<System, Inst>(rp, momentum)) std::abort();
  chens::PackedSystemOf<System, W> ps[P];
  for (int p = 0; p < P; ++p) ps[p] = chens::broadcast_system<W>(sys);
  PassResult out;
  if (keep_finals) out.finals.resize(n);
  const auto groups = static_cast<std::int64_t>((n + B - 1) / B);
  std::uint64_t projections = 0;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : projections)
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::uint64_t i = static_cast<std::uint64_t>(g) * B;
    const int b = (i + B <= n) ? B : static_cast<int>(n - i);
    Inst in[B];
    for (int j = 0; j < b; ++j) in[j] = chens::make_instance<System, NoRef>(sys, z0, kPerturbation, kSeed, i + j, rp);
    for (chens::index_t k = 1; k <= rp.samples; ++k) {
      if (b == B) {
        if constexpr (I == chens::CpuIsa::avx512) {
          chens::packed_advance_avx512<P, W, Method>(ps, rp, momentum, in, k, INT64_MAX);
        } else if constexpr (I == chens::CpuIsa::avx2) {
          chens::packed_advance_avx2<P, W, Method>(ps, rp, momentum, in, k, INT64_MAX);
        } else {
          chens::packed_advance_sse2<P, W, Method>(ps, rp, momentum, in, k, INT64_MAX);
        }
      } else {
        for (int j = 0; j < b; ++j) chens::advance_fixed_to_sample<1>(sys, method, rp, &in[j], k);
      }
    }
    for (int j = 0; j < b; ++j) {
      benchmark::DoNotOptimize(in[j].z);
      projections += in[j].c.momentum_projections;
      if (keep_finals) out.finals[i + j] = Arr{in[j].z[0], in[j].z[1], in[j].z[2], in[j].z[3]};
    }
  }
  out.projections = projections;
  return out;
}

// ---- chens: the CPU backend -------------------------------------------------------------

template <class Reference, class M = Method>
chens::EnsembleResult chens_ensemble_pass(std::uint64_t n, chens::index_t steps, int threads, double tol = kProjectionTol,
                                          bool first_passage = false, bool parameters = false, bool groups = false) {
  chens::RunParams<double> rp = run_params(steps, tol);
  chens::EnsembleSpec spec = ensemble_spec(n, threads);
  if (parameters)
    spec.parameters.law[std::size_t(chens::ParameterId::length)] = chens::ParameterLaw{chens::LawKind::list, 0, 0, {1.0}};
  if (groups) {
    const std::vector<double> masses = {1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75};
    spec.parameters.law[std::size_t(chens::ParameterId::mass)] = chens::ParameterLaw{chens::LawKind::list, 0, 0, masses};
    spec.parameters.group_by = int(chens::ParameterId::mass);
    spec.parameters.group_values = masses;
  }
  if (first_passage) {
    // output's [first_passage] on the energy error, phi and psi (checked after every step), the
    // integration error (at samples) and the loss, at levels no instance reaches: the checks'
    // cost alone.
    for (const chens::MetricId m :
         {chens::MetricId::integration_error, chens::MetricId::energy_error, chens::MetricId::phi, chens::MetricId::psi}) {
      rp.passage.level[int(m)] = 1.0;
      rp.passage.mask |= 1u << int(m);
    }
    rp.passage.mask |= 1u << chens::passage_lost;
    rp.passage.per_step = true;
  }
  return chens::run_ensemble<chens::CpuBackend, System, M, Reference>(runtime_system(), M{}, rp, runtime_z0(), spec);
}

// An implicit method (implicit midpoint, Gauss2) on the production path with CHENS_CPU_ISA =
// isa: its lanes iterate each instance's fixed point on its own (ImplicitRkLanes).
template <class Tableau>
chens::EnsembleResult chens_implicit_pass(std::uint64_t n, chens::index_t steps, int threads, const char* isa) {
  if (*isa) ::setenv("CHENS_CPU_ISA", isa, 1);
  using M = chens::ImplicitRk<Tableau, double>;
  const M method{1e-12, 100};  // integrator.tol and max_iterations as chens run resolves them
  auto r = chens::run_ensemble<chens::CpuBackend, System, M, ExactRef>(runtime_system(), method, run_params(steps),
                                                                       runtime_z0(), ensemble_spec(n, threads));
  ::unsetenv("CHENS_CPU_ISA");
  return r;
}

// ---- Boost.Odeint -------------------------------------------------------------------------

// Hamilton-Dirac equations of the pendulum, m = l = g = 1 (002 eqs. 35-36), with one
// reciprocal of r^2 per evaluation, as chens computes them: the results round the same.
// project() is the momentum projection p -= (psi / r^2) q, likewise.
struct DiracPendulumRhs {
  void operator()(const Arr& z, Arr& dz, double /*t*/) const {
    const double x = z[0], y = z[1], px = z[2], py = z[3];
    const double ir2 = 1.0 / (x * x + y * y);
    const double lambda = -((px * px + py * py - y) * ir2);
    const double mu = -((x * px + y * py) * ir2);
    dz[0] = px + mu * x;
    dz[1] = py + mu * y;
    dz[2] = lambda * x - mu * px;
    dz[3] = lambda * y - mu * py - 1.0;
  }
  static void project(Arr& z, double psi) {
    const double c = psi * (1.0 / (z[0] * z[0] + z[1] * z[1]));
    z[2] -= c * z[0];
    z[3] -= c * z[1];
  }
};

// The functor as measured at a79aa54: two divisions by r^2 (they round differently from
// chens's reciprocal by a few ulp; the final states differ by about 3e-13).
struct DiracPendulumRhsDiv {
  void operator()(const Arr& z, Arr& dz, double /*t*/) const {
    const double x = z[0], y = z[1], px = z[2], py = z[3];
    const double r2 = x * x + y * y;
    const double lambda = -(px * px + py * py - y) / r2;
    const double mu = -(x * px + y * py) / r2;
    dz[0] = px + mu * x;
    dz[1] = py + mu * y;
    dz[2] = lambda * x - mu * px;
    dz[3] = lambda * y - mu * py - 1.0;
  }
  static void project(Arr& z, double psi) {
    const double c = psi / (z[0] * z[0] + z[1] * z[1]);
    z[2] -= c * z[0];
    z[3] -= c * z[1];
  }
};

using OdeintRk4 = odeint::runge_kutta4<Arr>;  // std::array dispatches to array_algebra
using OdeintRk4Range = odeint::runge_kutta4<Arr, double, Arr, double, odeint::range_algebra>;
using OdeintRk4Classic = odeint::runge_kutta4_classic<Arr>;

template <class Stepper, class Rhs = DiracPendulumRhs>
PassResult odeint_pass(std::uint64_t n, chens::index_t steps, bool keep_finals, double tol = kProjectionTol,
                       int threads = 1) {
  const Rhs rhs;
  const Model model = runtime_model();
  const State z0 = runtime_z0();
  PassResult out;
  if (keep_finals) out.finals.resize(n);
  std::uint64_t projections = 0;
#pragma omp parallel num_threads(threads) reduction(+ : projections)
  {
    Stepper stepper;  // one per thread: a stepper holds its stage buffers
#pragma omp for schedule(static)
    for (std::int64_t ii = 0; ii < static_cast<std::int64_t>(n); ++ii) {
      const auto i = static_cast<std::uint64_t>(ii);
      const State z = chens::perturbed_initial_state(model, z0, kPerturbation, kSeed, i);
      Arr x{z[0], z[1], z[2], z[3]};
      for (chens::index_t s = 0; s < steps; ++s) {
        stepper.do_step(rhs, x, static_cast<double>(s) * kH, kH);
        const double psi = x[0] * x[2] + x[1] * x[3];
        if (std::fabs(psi) > tol) {
          Rhs::project(x, psi);
          projections += 1;
        }
      }
      benchmark::DoNotOptimize(x);
      if (keep_finals) out.finals[i] = x;
    }
  }
  out.projections = projections;
  return out;
}

// ---- benchmarks -----------------------------------------------------------------------------

std::uint64_t instances_of(const benchmark::State& st) { return static_cast<std::uint64_t>(st.range(0)); }
chens::index_t steps_of(const benchmark::State& st) { return static_cast<chens::index_t>(st.range(1)); }

void finish(benchmark::State& st, std::uint64_t projections) {
  const double instance_steps = static_cast<double>(instances_of(st)) * static_cast<double>(steps_of(st));
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(instance_steps));
  st.counters["proj_per_step"] = benchmark::Counter(static_cast<double>(projections) / instance_steps);
}

void BM_chens_driver(benchmark::State& st, double tol) {
  std::uint64_t proj = 0;
  for (auto _ : st) proj = chens_driver_pass(instances_of(st), steps_of(st), false, tol).projections;
  finish(st, proj);
}

void BM_chens_driver_lanes4(benchmark::State& st, double tol) {
  std::uint64_t proj = 0;
  for (auto _ : st) proj = chens_driver_lanes_pass<4>(instances_of(st), steps_of(st), false, tol).projections;
  finish(st, proj);
}

template <chens::CpuIsa I>
void BM_chens_driver_packed(benchmark::State& st, double tol, int threads) {
  std::uint64_t proj = 0;
  for (auto _ : st) proj = chens_driver_packed_pass<I>(instances_of(st), steps_of(st), false, tol, threads).projections;
  finish(st, proj);
  st.counters["threads"] = benchmark::Counter(threads);
}

// CHENS_CPU_ISA for one benchmark (cpu_isa.hpp); "" leaves the widest.
struct ForcedIsa {
  explicit ForcedIsa(const char* isa) {
    if (*isa) ::setenv("CHENS_CPU_ISA", isa, 1);
  }
  ~ForcedIsa() { ::unsetenv("CHENS_CPU_ISA"); }
  ForcedIsa(const ForcedIsa&) = delete;
  ForcedIsa& operator=(const ForcedIsa&) = delete;
};

template <class Reference, class M = Method>
void BM_chens_ensemble(benchmark::State& st, int threads, double tol = kProjectionTol, bool first_passage = false,
                       bool parameters = false, bool groups = false, const char* isa = "") {
  const ForcedIsa forced(isa);
  std::uint64_t proj = 0;
  for (auto _ : st) {
    const auto res =
        chens_ensemble_pass<Reference, M>(instances_of(st), steps_of(st), threads, tol, first_passage, parameters, groups);
    benchmark::DoNotOptimize(res.instance0_state.data());
    proj = res.totals.momentum_projections;
  }
  finish(st, proj);
  st.counters["threads"] = benchmark::Counter(threads);
}

template <class Tableau>
void BM_chens_implicit(benchmark::State& st, const char* isa) {
  std::uint64_t iterations = 0;
  for (auto _ : st) {
    const auto res = chens_implicit_pass<Tableau>(instances_of(st), steps_of(st), 1, isa);
    benchmark::DoNotOptimize(res.instance0_state.data());
    iterations = res.totals.iterations;
  }
  finish(st, 0);
  st.counters["iterations_per_step"] = benchmark::Counter(
      static_cast<double>(iterations) / (static_cast<double>(instances_of(st)) * static_cast<double>(steps_of(st))));
}

template <class Stepper, class Rhs = DiracPendulumRhs>
void BM_odeint(benchmark::State& st, double tol, int threads = 1) {
  std::uint64_t proj = 0;
  for (auto _ : st) proj = odeint_pass<Stepper, Rhs>(instances_of(st), steps_of(st), false, tol, threads).projections;
  finish(st, proj);
}

// ---- agreement check ------------------------------------------------------------------------

double max_abs_diff(const std::vector<Arr>& a, const std::vector<Arr>& b) {
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (int c = 0; c < 4; ++c) {
      const double d = std::fabs(a[i][c] - b[i][c]);
      m = (d > m || d != d) ? d : m;
    }
  return m;
}

bool check_agreement(std::uint64_t n, chens::index_t steps, double tol) {
  bool ok = true;
  const PassResult ref = chens_driver_pass(n, steps, true, tol);
  std::printf("agreement check: %llu instances x %lld steps, projection_tol %g, chens driver: %llu momentum projections\n",
              static_cast<unsigned long long>(n), static_cast<long long>(steps), tol,
              static_cast<unsigned long long>(ref.projections));
  struct Variant {
    const char* name;
    PassResult (*pass)(std::uint64_t, chens::index_t, bool, double);
  };
  using chens::index_t;
  const Variant variants[] = {
      {"chens driver, 4 lanes", &chens_driver_lanes_pass<4>},
      {"odeint runge_kutta4 (array_algebra)",
       [](std::uint64_t m, index_t s, bool k, double t) { return odeint_pass<OdeintRk4>(m, s, k, t); }},
      {"odeint runge_kutta4 (range_algebra)",
       [](std::uint64_t m, index_t s, bool k, double t) { return odeint_pass<OdeintRk4Range>(m, s, k, t); }},
      {"odeint runge_kutta4_classic",
       [](std::uint64_t m, index_t s, bool k, double t) { return odeint_pass<OdeintRk4Classic>(m, s, k, t); }},
      {"odeint runge_kutta4, two divisions", [](std::uint64_t m, index_t s, bool k, double t) {
         return odeint_pass<OdeintRk4, DiracPendulumRhsDiv>(m, s, k, t);
       }}};
  // The packed loop on every instruction set this CPU runs, on one thread and on all: bit
  // for bit the driver's (issue 23).
  for (int isa = 1; isa < chens::cpu_isa_count; ++isa) {
    if (!chens::cpu_isa_supported(chens::CpuIsa(isa))) {
      std::printf("  chens packed loop, %-23s skipped: this CPU cannot run it\n", chens::cpu_isa_name(chens::CpuIsa(isa)));
      continue;
    }
    for (const int threads : {1, omp_get_max_threads()}) {
      const PassResult r = isa == 3   ? chens_driver_packed_pass<chens::CpuIsa::avx512>(n, steps, true, tol, threads)
                           : isa == 2 ? chens_driver_packed_pass<chens::CpuIsa::avx2>(n, steps, true, tol, threads)
                                      : chens_driver_packed_pass<chens::CpuIsa::sse2>(n, steps, true, tol, threads);
      const double d = max_abs_diff(ref.finals, r.finals);
      bool bits = true;
      for (std::size_t i = 0; i < n; ++i) bits = bits && std::memcmp(&r.finals[i], &ref.finals[i], sizeof(Arr)) == 0;
      const bool good = bits && r.projections == ref.projections;
      std::printf(
          "  chens packed loop, %-6s %d thread(s)   max |final - chens final| = %.3e, bitwise %s, projections %llu  %s\n",
          chens::cpu_isa_name(chens::CpuIsa(isa)), threads, d, bits ? "yes" : "NO",
          static_cast<unsigned long long>(r.projections), good ? "ok" : "MISMATCH");
      ok = ok && good;
    }
  }
  {
    const PassResult r = odeint_pass<OdeintRk4>(n, steps, true, tol, omp_get_max_threads());
    const double d = max_abs_diff(ref.finals, r.finals);
    const bool good = d <= kAgreementTol && r.projections == ref.projections;
    std::printf("  %-38s max |final - chens final| = %.3e, projections %llu  %s\n", "odeint runge_kutta4, all threads", d,
                static_cast<unsigned long long>(r.projections), good ? "ok" : "MISMATCH");
    ok = ok && good;
  }
  for (const auto& v : variants) {
    const PassResult r = v.pass(n, steps, true, tol);
    const double d = max_abs_diff(ref.finals, r.finals);
    // The lanes driver must agree bit for bit; odeint to within kAgreementTol.
    const bool lanes = v.pass == &chens_driver_lanes_pass<4>;
    const bool good = (lanes ? d == 0.0 : d <= kAgreementTol) && r.projections == ref.projections;
    std::printf("  %-38s max |final - chens final| = %.3e, projections %llu  %s\n", v.name, d,
                static_cast<unsigned long long>(r.projections), good ? "ok" : "MISMATCH");
    ok = ok && good;
  }
  // Every ensemble run: instance 0 equal to the driver's, and all sample statistics equal
  // bit for bit to those of the run with lanes off.
  const chens::EnsembleResult off = chens_ensemble_pass<ExactRef, Rk4NoLanes>(n, steps, 1, tol);
  auto same_series = [&](const chens::EnsembleResult& res) {
    if (res.series.size() != off.series.size()) return false;
    for (std::size_t k = 0; k < res.series.size(); ++k)
      for (int j = 0; j < chens::metric_count; ++j) {
        const chens::Accumulator& a = res.series[k].metric[j];
        const chens::Accumulator& b = off.series[k].metric[j];
        if (a.count != b.count || std::memcmp(&a.mean, &b.mean, sizeof a.mean) != 0 ||
            std::memcmp(&a.scale, &b.scale, sizeof a.scale) != 0 || std::memcmp(&a.ssq, &b.ssq, sizeof a.ssq) != 0 ||
            std::memcmp(&a.min, &b.min, sizeof a.min) != 0 || std::memcmp(&a.max, &b.max, sizeof a.max) != 0)
          return false;
      }
    return true;
  };
  auto check_ensemble = [&](const char* what, const chens::EnsembleResult& res, int threads) {
    double d = 0.0;
    for (int c = 0; c < 4; ++c)
      d = std::max(d, std::fabs(res.instance0_state[static_cast<std::size_t>(c)] - ref.finals[0][c]));
    const bool series = same_series(res);
    const bool good = d == 0.0 && series && res.totals.momentum_projections == ref.projections && res.lost_total() == 0;
    std::printf("  run_ensemble<CpuBackend>%s, %d thread(s): instance 0 |diff| = %.3e, projections %llu, lost %llu, "
                "statistics %s lanes off  %s\n",
                what, threads, d, static_cast<unsigned long long>(res.totals.momentum_projections),
                static_cast<unsigned long long>(res.lost_total()), series ? "==" : "!=", good ? "ok" : "MISMATCH");
    ok = ok && good;
  };
  for (const int threads : {1, omp_get_max_threads()})
    check_ensemble("", chens_ensemble_pass<ExactRef>(n, steps, threads, tol), threads);
  if (tol == kProjectionTol) {
    // Gauss2's lanes against its scalar run (each instance its own iteration count).
    const chens::EnsembleResult g = chens_implicit_pass<chens::Gauss2Tableau>(n, steps / 10, 1, "scalar");
    for (int isa = 1; isa < chens::cpu_isa_count; ++isa) {
      if (!chens::cpu_isa_supported(chens::CpuIsa(isa))) continue;
      const chens::EnsembleResult r =
          chens_implicit_pass<chens::Gauss2Tableau>(n, steps / 10, 1, chens::cpu_isa_name(chens::CpuIsa(isa)));
      bool same = r.series.size() == g.series.size() && r.instance0_state == g.instance0_state &&
                  std::memcmp(&r.totals, &g.totals, sizeof(chens::Counters)) == 0;
      for (std::size_t k = 0; same && k < r.series.size(); ++k)
        same = std::memcmp(&r.series[k], &g.series[k], sizeof(chens::SampleStats)) == 0;
      std::printf("  Gauss2 ensemble, CHENS_CPU_ISA = %-6s  statistics, counters, instance 0 %s the scalar run's (%s)  %s\n",
                  chens::cpu_isa_name(chens::CpuIsa(isa)), same ? "==" : "!=", r.device.c_str(), same ? "ok" : "MISMATCH");
      ok = ok && same;
    }
  }
  for (int isa = 0; isa < chens::cpu_isa_count; ++isa) {
    if (!chens::cpu_isa_supported(chens::CpuIsa(isa))) continue;
    const ForcedIsa forced(chens::cpu_isa_name(chens::CpuIsa(isa)));
    const std::string what = std::string(" (CHENS_CPU_ISA = ") + chens::cpu_isa_name(chens::CpuIsa(isa)) + ")";
    check_ensemble(what.c_str(), chens_ensemble_pass<ExactRef>(n, steps, 1, tol), 1);
  }
  check_ensemble(" (lanes off)", off, 1);
  check_ensemble(" (parameters.length = [1.0])", chens_ensemble_pass<ExactRef>(n, steps, 1, tol, false, true), 1);
  if (tol == kProjectionTol) {
    std::printf("  sizeof Instance: %zu bytes with PendulumExact, %zu with NoReference\n",
                sizeof(chens::InstanceOf<System, ExactRef>), sizeof(chens::InstanceOf<System, NoRef>));
  }
  std::fflush(stdout);
  return ok;
}

// ---- one untimed pass (for callgrind) --------------------------------------------------

using chens::bench::arg_value;

int one_pass(const std::string& name, int argc, char** argv) {
  const auto n = static_cast<std::uint64_t>(arg_value(argc, argv, "--instances", kDefaultInstances));
  const auto steps = static_cast<chens::index_t>(arg_value(argc, argv, "--steps", kDefaultSteps));
  const int threads = static_cast<int>(arg_value(argc, argv, "--threads", 1));
  // --projall: projection_tol = 0 (project after every step) for the drivers, the ensembles
  // and odeint_rk4.
  bool projall = false;
  for (int a = 1; a < argc; ++a) projall = projall || std::strcmp(argv[a], "--projall") == 0;
  const double tol = projall ? 0.0 : kProjectionTol;
  std::uint64_t proj = 0;
  // A packed pass in an instruction set this CPU or build lacks would fault or trap.
  for (int isa = 1; isa < chens::cpu_isa_count; ++isa)
    if (name == std::string("chens_driver_packed_") + chens::cpu_isa_name(chens::CpuIsa(isa)))
      if (const char* why = chens::cpu_isa_unavailable(chens::CpuIsa(isa))) {
        std::fprintf(stderr, "--one-pass=%s: %s\n", name.c_str(), why);
        return 2;
      }
  if (name == "chens_driver") proj = chens_driver_pass(n, steps, false, tol).projections;
  else if (name == "chens_driver_lanes4") proj = chens_driver_lanes_pass<4>(n, steps, false, tol).projections;
  else if (name == "chens_driver_packed_sse2")
    proj = chens_driver_packed_pass<chens::CpuIsa::sse2>(n, steps, false, tol, threads).projections;
  else if (name == "chens_driver_packed_avx2")
    proj = chens_driver_packed_pass<chens::CpuIsa::avx2>(n, steps, false, tol, threads).projections;
  else if (name == "chens_driver_packed_avx512")
    proj = chens_driver_packed_pass<chens::CpuIsa::avx512>(n, steps, false, tol, threads).projections;
  else if (name == "chens_driver_const") proj = chens_driver_pass(kSystem, kZ0, n, steps, false, tol).projections;
  else if (name == "chens_ensemble")
    proj = chens_ensemble_pass<ExactRef>(n, steps, threads, tol).totals.momentum_projections;
  else if (name == "chens_ensemble_lanes1")
    proj = chens_ensemble_pass<ExactRef, Rk4NoLanes>(n, steps, threads, tol).totals.momentum_projections;
  else if (name == "chens_ensemble_noref")
    proj = chens_ensemble_pass<NoRef>(n, steps, threads, tol).totals.momentum_projections;
  else if (name == "odeint_rk4") proj = odeint_pass<OdeintRk4>(n, steps, false, tol, threads).projections;
  else if (name == "odeint_rk4_div") proj = odeint_pass<OdeintRk4, DiracPendulumRhsDiv>(n, steps, false, tol).projections;
  else if (name == "odeint_rk4_range") proj = odeint_pass<OdeintRk4Range>(n, steps, false).projections;
  else if (name == "odeint_rk4_classic") proj = odeint_pass<OdeintRk4Classic>(n, steps, false).projections;
  else if (name == "none") proj = 0;  // startup cost only
  else {
    std::fprintf(stderr, "unknown --one-pass=%s\n", name.c_str());
    return 2;
  }
  std::printf("%s: %llu instances x %lld steps, %llu projections\n", name.c_str(), static_cast<unsigned long long>(n),
              static_cast<long long>(steps), static_cast<unsigned long long>(proj));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int a = 1; a < argc; ++a)
    if (std::strncmp(argv[a], "--one-pass=", 11) == 0) return one_pass(argv[a] + 11, argc, argv);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  if (!check_agreement(kDefaultInstances, kDefaultSteps, kProjectionTol) ||
      !check_agreement(kDefaultInstances, kDefaultSteps, 0.0)) {
    std::fprintf(stderr, "odeint and chens disagree: the comparison would not be like with like\n");
    return 1;
  }

  const int all = omp_get_max_threads();
  const std::vector<std::int64_t> args{kDefaultInstances, kDefaultSteps};
  auto reg = [&](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)
        ->Args(args)
        ->ArgNames({"instances", "steps"})
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  };
  reg("chens_driver/threads:1", [](benchmark::State& st) { BM_chens_driver(st, kProjectionTol); });
  reg("chens_driver_lanes4/threads:1", [](benchmark::State& st) { BM_chens_driver_lanes4(st, kProjectionTol); });
  for (const int threads : {1, all}) {
    const std::string t = "/threads:" + std::to_string(threads);
    if (chens::cpu_isa_supported(chens::CpuIsa::sse2))
      reg("chens_driver_packed/isa:sse2" + t,
          [threads](benchmark::State& st) { BM_chens_driver_packed<chens::CpuIsa::sse2>(st, kProjectionTol, threads); });
    if (chens::cpu_isa_supported(chens::CpuIsa::avx2))
      reg("chens_driver_packed/isa:avx2" + t,
          [threads](benchmark::State& st) { BM_chens_driver_packed<chens::CpuIsa::avx2>(st, kProjectionTol, threads); });
    if (chens::cpu_isa_supported(chens::CpuIsa::avx512))
      reg("chens_driver_packed/isa:avx512" + t,
          [threads](benchmark::State& st) { BM_chens_driver_packed<chens::CpuIsa::avx512>(st, kProjectionTol, threads); });
    if (threads == all) break;
  }
  reg("chens_driver_const/threads:1", [](benchmark::State& st) {
    std::uint64_t proj = 0;
    for (auto _ : st)
      proj = chens_driver_pass(kSystem, kZ0, instances_of(st), steps_of(st), false, kProjectionTol).projections;
    finish(st, proj);
  });
  reg("chens_ensemble/threads:1", [](benchmark::State& st) { BM_chens_ensemble<ExactRef>(st, 1); });
  reg("chens_ensemble/threads:" + std::to_string(all),
      [all](benchmark::State& st) { BM_chens_ensemble<ExactRef>(st, all); });
  for (int isa = 0; isa < chens::cpu_isa_count; ++isa) {
    if (!chens::cpu_isa_supported(chens::CpuIsa(isa))) continue;
    const char* name = chens::cpu_isa_name(chens::CpuIsa(isa));
    for (const int threads : {1, all}) {
      reg(std::string("chens_ensemble/isa:") + name + "/threads:" + std::to_string(threads),
          [name, threads](benchmark::State& st) {
            BM_chens_ensemble<ExactRef>(st, threads, kProjectionTol, false, false, false, name);
          });
      if (threads == all) break;
    }
  }
  for (int isa = 0; isa < chens::cpu_isa_count; ++isa) {
    if (!chens::cpu_isa_supported(chens::CpuIsa(isa))) continue;
    const char* name = chens::cpu_isa_name(chens::CpuIsa(isa));
    reg(std::string("chens_ensemble_midpoint/isa:") + name + "/threads:1",
        [name](benchmark::State& st) { BM_chens_implicit<chens::Gauss1Tableau>(st, name); });
    reg(std::string("chens_ensemble_gauss2/isa:") + name + "/threads:1",
        [name](benchmark::State& st) { BM_chens_implicit<chens::Gauss2Tableau>(st, name); });
  }
  reg("chens_ensemble_lanes1/threads:1", [](benchmark::State& st) { BM_chens_ensemble<ExactRef, Rk4NoLanes>(st, 1); });
  reg("chens_ensemble_noref/threads:1", [](benchmark::State& st) { BM_chens_ensemble<NoRef>(st, 1); });
  reg("chens_ensemble_first_passage/threads:1",
      [](benchmark::State& st) { BM_chens_ensemble<ExactRef>(st, 1, kProjectionTol, true); });
  reg("chens_ensemble_parameters/threads:1",
      [](benchmark::State& st) { BM_chens_ensemble<ExactRef>(st, 1, kProjectionTol, false, true); });
  reg("chens_ensemble_groups/threads:1",
      [](benchmark::State& st) { BM_chens_ensemble<ExactRef>(st, 1, kProjectionTol, false, true, true); });
  reg("odeint_rk4/threads:1", [](benchmark::State& st) { BM_odeint<OdeintRk4>(st, kProjectionTol); });
  if (all > 1)
    reg("odeint_rk4/threads:" + std::to_string(all),
        [all](benchmark::State& st) { BM_odeint<OdeintRk4>(st, kProjectionTol, all); });
  reg("odeint_rk4_div/threads:1",
      [](benchmark::State& st) { BM_odeint<OdeintRk4, DiracPendulumRhsDiv>(st, kProjectionTol); });
  reg("odeint_rk4_range/threads:1", [](benchmark::State& st) { BM_odeint<OdeintRk4Range>(st, kProjectionTol); });
  reg("odeint_rk4_classic/threads:1", [](benchmark::State& st) { BM_odeint<OdeintRk4Classic>(st, kProjectionTol); });
  // projection_tol = 0: the momentum projection runs after every step (its cost, not production).
  reg("chens_driver_projall/threads:1", [](benchmark::State& st) { BM_chens_driver(st, 0.0); });
  reg("chens_driver_lanes4_projall/threads:1", [](benchmark::State& st) { BM_chens_driver_lanes4(st, 0.0); });
  reg("chens_ensemble_projall/threads:1", [](benchmark::State& st) { BM_chens_ensemble<ExactRef>(st, 1, 0.0); });
  reg("odeint_rk4_projall/threads:1", [](benchmark::State& st) { BM_odeint<OdeintRk4>(st, 0.0); });

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
