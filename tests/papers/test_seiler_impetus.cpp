// Seiler, "Stable underlying equations for constrained Hamiltonian systems" (paper 000)
// §8: the impetus-striction formulation (50) of the pendulum from the inconsistent data
// (x*, y*, px*, py*) = (1.1, 0.1, 0.1, -1.9), and the modified Hamiltonian (52)-(53).
// "With the same parameters as before": RK4, h = 0.025, t in [0, 1023] (000's numerical
// example, = 001 §6). Setups, our numbers and the discussion: docs/reproductions/pendulum.md.
#include <gtest/gtest.h>

#include <cmath>

#include "paper_support.hpp"

namespace chens::papers::seiler_impetus {
namespace {

const Model pend = unit_pendulum();
const State inconsistent{{1.1, 0.1, 0.1, -1.9}};

template <class System>
Trajectory run(double reset) {
  auto rp = fixed_grid(0.025, 40920, 40);
  rp.impetus_reset = reset;
  auto tr = integrate(System{pend}, inconsistent, rp);
  EXPECT_FALSE(tr.lost);
  return tr;
}
Trajectory run_impetus(double reset = 0.0) { return run<ImpetusStriction<Model>>(reset); }
Trajectory run_modified(double reset = 0.0) { return run<ImpetusModified<Model>>(reset); }

const Trajectory& impetus() {
  static const Trajectory tr = run_impetus();
  return tr;
}
const Trajectory& modified() {
  static const Trajectory tr = run_modified();
  return tr;
}

// Normal (radial) part of the impetus vector, q*.p* / |q*|.
double impetus_normal(const Sample& s) { return std::fabs(s.z[0] * s.z[2] + s.z[1] * s.z[3]) / std::hypot(s.z[0], s.z[1]); }
double impetus_amplitude(const Sample& s) { return std::hypot(s.z[2], s.z[3]); }
// 000 eq. (52): Hbar = |q|^2 |p|^2 / 2 + y, the modified Hamiltonian (m = l = g = 1).
double hbar(const State& z) { return (z[0] * z[0] + z[1] * z[1]) * (z[2] * z[2] + z[3] * z[3]) / 2.0 + z[1]; }

TEST(SeilerImpetus, NormalPartOfImpetusGrowsLinearly) {
  // "the growth of the amplitude is only linear [...] the px*- and py*-components of the
  // eigenvector are proportional to x* and y*, i.e. they point in radial direction".
  const auto& tr = impetus();
  EXPECT_NEAR(growth_exponent(tr, impetus_normal, 10.0, 1023.0), 1.0, 0.5);
  // The impetus vector is almost entirely radial at the end.
  const Sample& s = tr.samples.back();
  EXPECT_GT(impetus_normal(s), 0.99 * impetus_amplitude(s));
}

TEST(SeilerImpetus, PhysicalObservablesStayFine) {
  // "no observable like the energy or the physical momenta px, py shows an instability":
  // the energy of the physical state stays within 1e-3 of its start (E = 1.9 here)
  // while the impetuses grow to O(1e3), and (x*, y*) stays on its circle |q*| = const.
  const auto& tr = impetus();
  EXPECT_LT(max_until(tr, energy_of, 1023.0), 1e-3);
  EXPECT_GT(impetus_amplitude(tr.samples.back()), 1e2);
  const double phi0 = tr.samples.front().phi;
  for (const auto& s : tr.samples) {
    ASSERT_NEAR(s.phi, phi0, 1e-4) << "t = " << s.t;
    ASSERT_LT(s.psi, 1e-9) << "t = " << s.t;  // p = p* - lambda q* is tangent by construction
  }
}

TEST(SeilerImpetus, ModifiedHamiltonianMuchSmallerAmplitude) {
  // "with the same parameters as before, one obtains a much smaller maximal amplitude"
  // (the two numbers are illegible in our copy: "about ?0 compared with about ?000"):
  // at least ten times smaller. The normal part still grows ("qualitatively the same
  // picture": the system is nonlinearly unstable).
  const double a_imp = max_until(impetus(), impetus_amplitude, 1023.0);
  const double a_mod = max_until(modified(), impetus_amplitude, 1023.0);
  EXPECT_LT(a_mod, a_imp / 10.0);
  EXPECT_NEAR(growth_exponent(modified(), impetus_normal, 10.0, 1023.0), 1.0, 0.5);
}

TEST(SeilerImpetus, ModifiedHamiltonianIsConserved) {
  // Off the constraint manifold (|q*|^2 = 1.22 here) the modified equations (53) follow
  // Hbar, not H: Hbar is conserved, H oscillates by about (1 - 1/|q|^2) |y|.
  const auto& tr = modified();
  const double h0 = hbar(tr.samples.front().phys);
  for (const auto& s : tr.samples) ASSERT_NEAR(hbar(s.phys), h0, 1e-3) << "t = " << s.t;
}

TEST(SeilerImpetus, ResetChangesNoPhysicalObservable) {
  // 000 §8: resetting p* <- p "will not effect any of the physical observables". The
  // reset is a linear gauge map the flow is equivariant under, and Runge-Kutta methods
  // are equivariant under linear maps: the physical states agree up to round-off. That
  // round-off is amplified by the cancellation p = p* - lambda q* with |p*| ~ 1e3 in the
  // run without resets (the loss of precision 000 §8 warns about), so we ask for 1e-6,
  // still far below the truncation error of the run.
  const double threshold = 1.0;
  const auto with = run_impetus(threshold);
  const auto& without = impetus();
  EXPECT_GT(with.counters.impetus_resets, 0u);
  ASSERT_EQ(with.samples.size(), without.samples.size());
  for (std::size_t i = 0; i < with.samples.size(); ++i) {
    const State d = with.samples[i].phys - without.samples[i].phys;
    ASSERT_LT(max_abs(d), 1e-6) << "t = " << with.samples[i].t;
    ASSERT_LE(max_abs(with.samples[i].z - with.samples[i].phys), threshold) << "t = " << with.samples[i].t;
  }
}

}  // namespace
}  // namespace chens::papers::seiler_impetus
