// Reproduction of 004 (Leimkuhler & Reich 1992) §3-4 for the Cartesian pendulum
// (H = |p|^2/2 + y, g = x^2 + y^2 - 1, start (1, 0, 0, -2), as 004's figures): the wedge
// product of two consistent tangents (004 §3.2; geometry/tangent_system.hpp) and the constraint
// residuals under the implicit midpoint rule and its projections, on the per-instance
// driver of the ensemble backends with the tangent system (output.wedge).
//
// chens's formulations and 004's equations: "extended" (002 eq. 37) is 004's Hamiltonian
// underlying ODE of Dirac (3.2)-(3.3) (the same H_T; for g = 0 it is 004 §3.6's closed
// form); "dirac" is the weakly Hamiltonian Dirac formulation (3.7)-(3.8); "total"
// (001 eq. 14, H + mu phi) is the simplified eta = 0 formulation (3.9)-(3.10) (004 prints
// mu with the opposite sign, which would double gravity at rest: a misprint; 004's own
// (1.6) has the consistent sign); "naive" is the standard underlying ODE (1.6).
//
// What is asserted (the figures are lost in the text copy; the claims are 004's text):
//  - Fig. 3.1: implicit midpoint on the Hamiltonian underlying ODE keeps omega to the
//    iteration tolerance and the residuals bounded; Gauss-Legendre (gauss2) too; RK4,
//    not symplectic, changes omega by much more than rounding;
//  - Fig. 3.2: on the eta = 0 formulation omega is kept as well, but the residuals grow
//    exponentially (the saddle of 004 §3.6: rho' = sigma, sigma' = 4|p|^2 rho, rate 2|p|);
//  - 001 Props. 2-3 in a run: momentum projections after each step keep omega near the
//    unprojected symplectic run, position projections change it at first order in the
//    residual;
//  - Figs. 4.3-4.4: endpoint projection keeps the residuals at the projection tolerance;
//    midpoint (stage) projection leaves the end point's residuals to grow;
//  - Fig. 4.5: infrequent projection every 20 steps of the weakly Hamiltonian formulation
//    on [0, 10]: the projection count is steps/20 and the residuals stay bounded.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include <chens/ensemble/instance.hpp>
#include <chens/formulations/extended_hamiltonian.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/formulations/total_hamiltonian.hpp>
#include <chens/geometry/tangent_system.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/midpoint_projection.hpp>

#include "paper_support.hpp"

namespace chens::papers::leimkuhler_reich_geometry {
namespace {

using Midpoint = ImplicitRk<Gauss1Tableau, double>;
using Gauss2 = ImplicitRk<Gauss2Tableau, double>;

struct GeometrySample {
  double t, phi, psi, wedge_error;
};
struct GeometryRun {
  std::vector<GeometrySample> s;
  Counters c;
  double max_phi(double t0 = 0, double t1 = 1e300) const {
    double m = 0;
    for (const auto& x : s)
      if (x.t >= t0 && x.t <= t1) m = std::max(m, x.phi);
    return m;
  }
  double max_wedge() const {
    double m = 0;
    for (const auto& x : s) m = std::max(m, x.wedge_error);
    return m;
  }
};

// One trajectory with tangents (the system and method output.wedge runs).
template <class System, class Method>
GeometryRun run_geometry(const System& sys, const Method& method, const RunParams<double>& rp) {
  using T = TangentSystem<System>;
  const T ts = T::of(sys);
  const TangentStepper<Method> stepper{method};
  auto in = make_instance<T, Exact>(ts, rotating_initial_data(), 0.0, 0, 0, rp);
  GeometryRun r;
  for (index_t k = 0; k <= rp.samples; ++k) {
    if (k > 0) advance_to_sample(ts, stepper, rp, in, k);
    Metrics<double> m;
    if (!measure_instance(ts, rp, in, k, m)) {
      ADD_FAILURE() << "instance lost at sample " << k;
      break;
    }
    r.s.push_back(GeometrySample{rp.sample_time(k), m.v[int(MetricId::phi)], m.v[int(MetricId::psi)],
                                 m.v[int(MetricId::wedge_error)]});
  }
  r.c = in.c;
  return r;
}

RunParams<double> grid(double h, double t_end, double sample_dt, Projections pr = {}) {
  RunParams<double> rp =
      fixed_grid(h, static_cast<index_t>(std::llround(t_end / h)), static_cast<index_t>(std::llround(sample_dt / h)), pr);
  rp.iteration_tol = 1e-15;
  rp.max_iterations = 200;
  return rp;
}

void report(const char* name, const GeometryRun& r) {
  std::printf("  %-44s max|phi| %.3e  max wedge_error %.3e  (t_end %.3g)\n", name, r.max_phi(), r.max_wedge(), r.s.back().t);
}

const Model pendulum = unit_pendulum();

TEST(LeimkuhlerReich1992, Fig31DiracHamiltonianOdeKeepsOmegaAndResiduals) {
  const RunParams<double> rp = grid(0.01, 10.0, 0.1);
  const GeometryRun mid = run_geometry(ExtendedHamiltonian<Model>{pendulum}, Midpoint{rp.iteration_tol, 200}, rp);
  const GeometryRun g2 = run_geometry(ExtendedHamiltonian<Model>{pendulum}, Gauss2{rp.iteration_tol, 200}, rp);
  const GeometryRun rk4 = run_geometry(ExtendedHamiltonian<Model>{pendulum}, Rk4{}, rp);
  report("extended, midpoint", mid);
  report("extended, gauss2", g2);
  report("extended, rk4", rk4);
  EXPECT_LT(mid.max_wedge(), 1e-11) << "implicit midpoint is symplectic";
  EXPECT_LT(g2.max_wedge(), 1e-11) << "Gauss-Legendre is symplectic";
  EXPECT_GT(rk4.max_wedge(), 100 * std::max(mid.max_wedge(), 1e-13)) << "RK4 is not symplectic";
  EXPECT_LT(mid.max_phi(), 1e-3) << "residuals stay bounded (a stable centre, 004 §3.6)";
  EXPECT_EQ(mid.c.unconverged_steps, 0u);
}

TEST(LeimkuhlerReich1992, Fig32SimplifiedEtaZeroFormulationKeepsOmegaButResidualsGrow) {
  const RunParams<double> rp = grid(0.01, 1.0, 0.01);
  const GeometryRun total = run_geometry(TotalHamiltonian<Model>{pendulum}, Midpoint{rp.iteration_tol, 200}, rp);
  const GeometryRun ext = run_geometry(ExtendedHamiltonian<Model>{pendulum}, Midpoint{rp.iteration_tol, 200}, rp);
  report("total (eta = 0), midpoint, [0, 1]", total);
  report("extended, midpoint, [0, 1]", ext);
  EXPECT_LT(total.max_wedge(), 1e-11) << "omega is maintained (004: 'the wedge product is maintained')";
  // Exponential growth: the average rate over [0.2, 1] exceeds the slowest saddle rate on
  // the orbit, 2|p| >= 2 sqrt(2) (|p|^2 = 2 (H - y) >= 2 for H = 2, y <= 1; 004 §3.6).
  const double rate = std::log(total.s[100].phi / total.s[20].phi) / 0.8;
  std::printf("  total: phi(0.2) %.3e  phi(1) %.3e  average rate %.2f;  extended phi(1) %.3e\n", total.s[20].phi,
              total.s[100].phi, rate, ext.s[100].phi);
  EXPECT_GT(rate, 2 * std::sqrt(2.0));
  EXPECT_GT(total.s[100].phi, 20 * ext.s[100].phi) << "against the stable Dirac Hamiltonian form at t = 1";
  // The Dirac Hamiltonian form stays bounded: no larger over [0, 10] than over [0, 1].
  const GeometryRun ext10 =
      run_geometry(ExtendedHamiltonian<Model>{pendulum}, Midpoint{rp.iteration_tol, 200}, grid(0.01, 10.0, 0.01));
  EXPECT_LT(ext10.max_phi(), 1.5 * ext.max_phi());
}

// 001 Props. 2-3 in a run: the symplectic run (extended + implicit midpoint) projected after
// every step (tolerance 1e-14: every step projects). Momentum projections keep omega up to
// the tangents' own O(residual) distance from the manifold; position projections change it
// at first order in the residual (omega -> omega l/|q| per projection).
TEST(LeimkuhlerReich1992, MomentumProjectionKeepsOmegaPositionProjectionDoesNot) {
  const RunParams<double> none = grid(0.01, 10.0, 0.1);
  const GeometryRun plain = run_geometry(ExtendedHamiltonian<Model>{pendulum}, Midpoint{1e-15, 200}, none);
  const GeometryRun mom =
      run_geometry(ExtendedHamiltonian<Model>{pendulum}, Midpoint{1e-15, 200}, grid(0.01, 10.0, 0.1, {true, false, 1e-14}));
  const GeometryRun pos =
      run_geometry(ExtendedHamiltonian<Model>{pendulum}, Midpoint{1e-15, 200}, grid(0.01, 10.0, 0.1, {false, true, 1e-14}));
  report("extended, midpoint, no projection", plain);
  report("extended, midpoint, momentum projection", mom);
  report("extended, midpoint, position projection", pos);
  EXPECT_EQ(mom.c.momentum_projections, 1000u);
  EXPECT_EQ(pos.c.position_projections, 1000u);
  EXPECT_LT(mom.max_wedge(), 1e-5);
  EXPECT_GT(pos.max_wedge(), 1e-2);
  EXPECT_GT(pos.max_wedge(), 1e4 * mom.max_wedge());
}

// Figs. 4.3-4.4: endpoint projection (position and momentum after every step) against
// midpoint (stage) projection, same formulation, h = 0.01 on [0, 10]. Endpoint: residuals
// at the projection tolerance, omega drifting slowly. Midpoint: the stage is on the
// manifold but the end point's momentum residual grows, and omega with it, by orders of
// magnitude more (004: "the evident instability of the midpoint projection method").
TEST(LeimkuhlerReich1992, Fig43Fig44MidpointProjectionIsUnstableEndpointProjectionIsNot) {
  const RunParams<double> endpoint = grid(0.01, 10.0, 0.1, {true, true, 1e-14});
  RunParams<double> stage = endpoint;
  stage.stage_projection = true;
  const GeometryRun e = run_geometry(ExtendedHamiltonian<Model>{pendulum}, Midpoint{1e-15, 200}, endpoint);
  const GeometryRun m = run_geometry(ExtendedHamiltonian<Model>{pendulum},
                                     MidpointProjection<double>{1e-15, 200, true, true, 1e-14, 50}, stage);
  report("extended, endpoint projection", e);
  report("extended, midpoint (stage) projection", m);
  double e_psi = 0, m_psi1 = 0;
  for (const auto& x : e.s) e_psi = std::max(e_psi, x.psi);
  for (const auto& x : m.s)
    if (x.t <= 1.0) m_psi1 = std::max(m_psi1, x.psi);
  const GeometrySample& m10 = m.s.back();
  std::printf("  stage projection: |psi| %.3e (t <= 1) -> %.3e (t = 10); wedge_error %.3e (t = 1) -> %.3e\n", m_psi1,
              m10.psi, m.s[10].wedge_error, m10.wedge_error);
  EXPECT_LT(e.max_phi(), 1e-13);
  EXPECT_LT(e_psi, 1e-13);
  EXPECT_EQ(m.c.unconverged_steps, 0u);
  EXPECT_LT(m.max_phi(), 1e-13) << "the stage is on the manifold and so, here, is phi at the end point";
  EXPECT_GT(m10.psi, 1e6 * std::max(e_psi, 1e-18)) << "the end point's momentum residual is left to grow";
  EXPECT_GT(m10.psi, 3 * m_psi1);
  EXPECT_GT(m10.wedge_error, 20 * m.s[10].wedge_error) << "omega drifts ever faster";
  EXPECT_GT(m10.wedge_error, 100 * e.s.back().wedge_error);
}

// Fig. 4.5: infrequent projection, every 20 steps, on [0, 10]. 004 used the weakly
// Hamiltonian formulation; with 002's Hamilton-Dirac equations phi and psi are strong
// invariants and quadratic, so the implicit midpoint rule keeps them to rounding and no
// projection ever triggers (asserted: this is where we differ from 004's Fig. 4.2, which
// shows residual growth). The Hamiltonian Dirac form does drift: there every 20th step
// projects, and the residuals stay below those of the unprojected run.
TEST(LeimkuhlerReich1992, Fig45InfrequentProjectionEvery20Steps) {
  RunParams<double> every = grid(0.01, 10.0, 0.1, {true, true, 1e-14});
  every.projection_every = 20;
  const GeometryRun dirac = run_geometry(HamiltonDirac<Model>{pendulum}, Midpoint{1e-15, 200}, every);
  report("dirac, midpoint, projection every 20 steps", dirac);
  EXPECT_LT(dirac.max_phi(), 1e-14);
  EXPECT_EQ(dirac.c.position_projections + dirac.c.momentum_projections, 0u);
  const GeometryRun ext = run_geometry(ExtendedHamiltonian<Model>{pendulum}, Midpoint{1e-15, 200}, every);
  const GeometryRun ext_none =
      run_geometry(ExtendedHamiltonian<Model>{pendulum}, Midpoint{1e-15, 200}, grid(0.01, 10.0, 0.1));
  report("extended, midpoint, projection every 20 steps", ext);
  EXPECT_EQ(ext.c.momentum_projections, 50u);
  EXPECT_EQ(ext.c.position_projections, 50u);
  EXPECT_LT(ext.max_phi(), ext_none.max_phi() / 5);
}

}  // namespace
}  // namespace chens::papers::leimkuhler_reich_geometry
