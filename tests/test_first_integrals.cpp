// First integrals of the exact flows, checked with tight-tolerance integrations from
// the inconsistent initial data (1.1, 0.1, 0.1, -1.9) of 000 §8:
//  - Hamilton-Dirac: phi and psi are first integrals (002 eq. 47), for any data;
//  - naive: the residuals obey phi' = psi, psi' = 0 (002 §10), so psi is constant and
//    phi grows linearly;
//  - impetus-striction: |q*| is constant (the manifolds M_eps of 000 §8 are invariant);
//  - every formulation conserves H along solutions on the manifold; the implicit
//    midpoint and Gauss rules conserve the quadratic invariants phi, psi of the Dirac flow
//    up to the iteration tolerance (002 §7), even with a large step.
#include <gtest/gtest.h>

#include <cmath>

#include <chens/ensemble/instance.hpp>
#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/impetus_modified.hpp>
#include <chens/formulations/impetus_striction.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/integrators/dopri5.hpp>
#include <chens/integrators/implicit_rk.hpp>
#include <chens/integrators/tableaus.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "support/integrate.hpp"

namespace chens {
namespace {

using Model = Pendulum<double>;
using State = Model::State;
const State kInconsistent{{1.1, 0.1, 0.1, -1.9}};  // 000 §8

// Runs a tight adaptive integration and calls f(t, z) at t = 0.5, 1, ..., t_end.
template <class System, class F>
void along_tight_solution(const System& sys, const State& z0, double t_end, const F& f) {
  RunParams<double> rp;
  rp.fixed_step = false;
  rp.h = 1e-3;
  rp.t_end = t_end;
  rp.sample_dt = 0.5;
  rp.samples = static_cast<index_t>(std::lround(t_end / 0.5));
  rp.rtol = 1e-13;
  rp.atol = 1e-13;
  const Dopri5<double> method{rp.rtol, rp.atol};
  auto in = make_instance<System, NoReference<double, 4>>(sys, z0, 0.0, 0, 0, rp);
  for (index_t k = 1; k <= rp.samples; ++k) {
    advance_to_sample(sys, method, rp, in, k);
    ASSERT_EQ(in.lost, 0);
    f(rp.sample_time(k), in.z);
  }
}

TEST(FirstIntegrals, DiracKeepsPhiAndPsiFromInconsistentData) {
  for (const Model m : {Model{1, 1, 1}, Model{2.5, 0.7, 9.81}}) {
    const HamiltonDirac<Model> sys{m};
    const double phi0 = m.phi(Model::q_of(kInconsistent))[0], psi0 = m.psi(kInconsistent)[0];
    ASSERT_GT(std::abs(phi0), 0.01);  // genuinely off the manifold
    ASSERT_GT(std::abs(psi0), 0.01);
    const double e0 = m.energy(kInconsistent);
    along_tight_solution(sys, kInconsistent, 20.0, [&](double t, const State& z) {
      EXPECT_NEAR(m.phi(Model::q_of(z))[0], phi0, 1e-10) << "t = " << t;
      EXPECT_NEAR(m.psi(z)[0], psi0, 1e-10) << "t = " << t;
      // H is conserved too: {H, H}* = 0.
      EXPECT_NEAR(m.energy(z), e0, 1e-10 * (1 + std::abs(e0))) << "t = " << t;
    });
  }
}

TEST(FirstIntegrals, NaiveResidualsFollowPhiDotEqualsPsi) {
  const Model m{1.7, 1.2, 3.0};
  const Naive<Model> sys{m};
  const double phi0 = m.phi(Model::q_of(kInconsistent))[0], psi0 = m.psi(kInconsistent)[0];
  along_tight_solution(sys, kInconsistent, 5.0, [&](double t, const State& z) {
    EXPECT_NEAR(m.psi(z)[0], psi0, 1e-10) << "t = " << t;
    EXPECT_NEAR(m.phi(Model::q_of(z))[0], phi0 + psi0 * t, 1e-9 * (1 + t)) << "t = " << t;
  });
}

TEST(FirstIntegrals, ImpetusKeepsTheCircleOfItsPositions) {
  for (const Model m : {Model{1, 1, 1}, Model{0.4, 1.5, 2.0}}) {
    const double r0 = kInconsistent[0] * kInconsistent[0] + kInconsistent[1] * kInconsistent[1];
    along_tight_solution(ImpetusStriction<Model>{m}, kInconsistent, 20.0, [&](double t, const State& z) {
      EXPECT_NEAR(z[0] * z[0] + z[1] * z[1], r0, 1e-10) << "t = " << t;
    });
    along_tight_solution(ImpetusModified<Model>{m}, kInconsistent, 20.0, [&](double t, const State& z) {
      EXPECT_NEAR(z[0] * z[0] + z[1] * z[1], r0, 1e-10) << "t = " << t;
    });
  }
}

TEST(FirstIntegrals, GaussMethodsConserveTheQuadraticInvariantsOfTheDiracFlow) {
  const Model m{1, 1, 1};
  const HamiltonDirac<Model> sys{m};
  const double phi0 = m.phi(Model::q_of(kInconsistent))[0], psi0 = m.psi(kInconsistent)[0];
  const ImplicitRk<Gauss1Tableau, double> midpoint{1e-14, 200};
  const ImplicitRk<Gauss2Tableau, double> gauss2{1e-14, 200};
  State a = kInconsistent, b = kInconsistent;
  for (int i = 0; i < 1000; ++i) {  // h = 0.1 up to t = 100
    State an, bn;
    const auto sa = midpoint.step(sys, a, 0.1, an);
    const auto sb = gauss2.step(sys, b, 0.1, bn);
    ASSERT_TRUE(sa.converged && sa.finite && sb.converged && sb.finite) << "step " << i;
    a = an;
    b = bn;
  }
  // Explicit RK4 with the same step drifts by orders of magnitude more (see
  // docs/reproductions); the Gauss methods hold phi and psi to the iteration tolerance.
  EXPECT_NEAR(m.phi(Model::q_of(a))[0], phi0, 1e-11);
  EXPECT_NEAR(m.psi(a)[0], psi0, 1e-11);
  EXPECT_NEAR(m.phi(Model::q_of(b))[0], phi0, 1e-11);
  EXPECT_NEAR(m.psi(b)[0], psi0, 1e-11);
}

}  // namespace
}  // namespace chens
