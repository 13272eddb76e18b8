// Butcher tableaus, kept apart from the stepping logic (explicit_rk.hpp, embedded_pair.hpp,
// implicit_rk.hpp). Coefficients are returned by constexpr functions so that the
// fully unrolled stage loops fold them into immediates on the host and the device.
#pragma once

#include <cmath>

#include <chens/config.hpp>
#include <chens/integrators/step_control.hpp>

namespace chens {

// Explicit Euler, order 1.
struct EulerTableau {
  static constexpr int stages = 1, order = 1;
  static constexpr const char* name = "euler";
  CHENS_HD static constexpr double a(int, int) { return 0.0; }
  CHENS_HD static constexpr double b(int) { return 1.0; }
  CHENS_HD static constexpr double c(int) { return 0.0; }
};

// Explicit midpoint rule, the RK2 of 001 §5: z_{1/2} = z + h f(z)/2, z' = z + h f(z_{1/2}).
struct Rk2Tableau {
  static constexpr int stages = 2, order = 2;
  static constexpr const char* name = "rk2";
  CHENS_HD static constexpr double a(int i, int j) { return (i == 1 && j == 0) ? 0.5 : 0.0; }
  CHENS_HD static constexpr double b(int i) { return i == 1 ? 1.0 : 0.0; }
  CHENS_HD static constexpr double c(int i) { return i == 1 ? 0.5 : 0.0; }
};

// Classical fourth-order Runge-Kutta method.
struct Rk4Tableau {
  static constexpr int stages = 4, order = 4;
  static constexpr const char* name = "rk4";
  CHENS_HD static constexpr double a(int i, int j) { return (i == j + 1) ? (i == 3 ? 1.0 : 0.5) : 0.0; }
  CHENS_HD static constexpr double b(int i) { return (i == 0 || i == 3) ? 1.0 / 6.0 : 1.0 / 3.0; }
  CHENS_HD static constexpr double c(int i) { return i == 0 ? 0.0 : (i == 3 ? 1.0 : 0.5); }
};

// Dormand-Prince 5(4) (Dormand & Prince 1980; Hairer, Norsett & Wanner I, Table II.5.2).
// Row 7 equals b (first same as last); e = b - bhat gives the embedded error estimate. As
// EmbeddedPair's tableau (integrators/dopri5.hpp) it also has the error norm and controller
// of Hairer's DOPRI5 code and its continuous extension, below.
struct Dopri5Tableau {
  static constexpr int stages = 7, order = 5, embedded_order = 4;
  static constexpr const char* name = "dopri5";
  // The 7th stage's argument is z + h sum_j b_j k_j, the solution: f(z_new) is the next step's
  // k1 (first same as last), and an attempt costs 6 evaluations.
  static constexpr bool fsal = true;
  CHENS_HD static constexpr double a(int i, int j) {
    switch (i * 8 + j) {
      case 1 * 8 + 0: return 1.0 / 5.0;
      case 2 * 8 + 0: return 3.0 / 40.0;
      case 2 * 8 + 1: return 9.0 / 40.0;
      case 3 * 8 + 0: return 44.0 / 45.0;
      case 3 * 8 + 1: return -56.0 / 15.0;
      case 3 * 8 + 2: return 32.0 / 9.0;
      case 4 * 8 + 0: return 19372.0 / 6561.0;
      case 4 * 8 + 1: return -25360.0 / 2187.0;
      case 4 * 8 + 2: return 64448.0 / 6561.0;
      case 4 * 8 + 3: return -212.0 / 729.0;
      case 5 * 8 + 0: return 9017.0 / 3168.0;
      case 5 * 8 + 1: return -355.0 / 33.0;
      case 5 * 8 + 2: return 46732.0 / 5247.0;
      case 5 * 8 + 3: return 49.0 / 176.0;
      case 5 * 8 + 4: return -5103.0 / 18656.0;
      case 6 * 8 + 0: return 35.0 / 384.0;
      case 6 * 8 + 2: return 500.0 / 1113.0;
      case 6 * 8 + 3: return 125.0 / 192.0;
      case 6 * 8 + 4: return -2187.0 / 6784.0;
      case 6 * 8 + 5: return 11.0 / 84.0;
      default: return 0.0;
    }
  }
  CHENS_HD static constexpr double b(int i) { return i < 6 ? a(6, i) : 0.0; }
  CHENS_HD static constexpr double c(int i) {
    switch (i) {
      case 1: return 1.0 / 5.0;
      case 2: return 3.0 / 10.0;
      case 3: return 4.0 / 5.0;
      case 4: return 8.0 / 9.0;
      case 5: return 1.0;
      case 6: return 1.0;
      default: return 0.0;
    }
  }
  // e_i = b_i - bhat_i.
  CHENS_HD static constexpr double e(int i) {
    switch (i) {
      case 0: return 71.0 / 57600.0;
      case 2: return -71.0 / 16695.0;
      case 3: return 71.0 / 1920.0;
      case 4: return -17253.0 / 339200.0;
      case 5: return 22.0 / 525.0;
      case 6: return -1.0 / 40.0;
      default: return 0.0;
    }
  }
  // The code's error norm, sqrt(mean_c (e_c / sc_c)^2) with e_c = h sum_i e_i k_i[c] and
  // sc_c = atol + rtol max(|z_c|, |z_new_c|) (EmbeddedPair's error_scale): component c's term,
  // and the norm of the terms' sum over the n components.
  static constexpr int error_sums = 1;
  template <class State, class Real>
  CHENS_HD static void error_terms(const State (&k)[stages], Real h, int c, Real sc, Real (&t)[error_sums]) {
    Real err = Real(0);
    CHENS_UNROLL
    for (int i = 0; i < stages; ++i)
      if (e(i) != 0.0) err = err + Real(e(i)) * k[i][c];
    err = err * h;
    t[0] = (err / sc) * (err / sc);
  }
  template <class Real>
  CHENS_HD static Real error_norm_of(const Real (&sum)[error_sums], Real n, Real) {
    using std::sqrt;
    return sqrt(sum[0] / n);
  }

  // Hairer's DOPRI5 controller (step_control.hpp): safety 0.9, factors [0.2, 10], Lund
  // stabilisation beta = 0.04, expo1 = 1/5 - 0.75 beta.
  CHENS_HD static constexpr HairerStepControl control() { return {0.9, 0.2, 10.0, 0.2 - 0.04 * 0.75, 0.04}; }

  // The continuous extension of order 4 (Hairer's dopri5.f, CONTD5; Hairer, Norsett & Wanner
  // I, §II.6): the step's interpolant is the cubic Hermite of its end states and derivatives
  // plus theta^2 (1 - theta)^2 h sum_i d_i k_i, one term over the 7 stages (the last f(z_new)).
  static constexpr int dense_terms = 1, dense_stages = 7;
  CHENS_HD static constexpr double d(int, int i) {
    switch (i) {
      case 0: return -12715105075.0 / 11282082432.0;
      case 2: return 87487479700.0 / 32700410799.0;
      case 3: return -10690763975.0 / 1880347072.0;
      case 4: return 701980252875.0 / 199316789632.0;
      case 5: return -1453857185.0 / 822651844.0;
      case 6: return 69997945.0 / 29380423.0;
      default: return 0.0;
    }
  }
};

// Gauss-Legendre collocation methods (Hairer, Lubich & Wanner, GNI §II.1.3).
// One stage is the implicit midpoint rule (002 §7), order 2; two stages give order 4.
struct Gauss1Tableau {
  static constexpr int stages = 1, order = 2;
  static constexpr const char* name = "midpoint";
  CHENS_HD static constexpr double a(int, int) { return 0.5; }
  CHENS_HD static constexpr double b(int) { return 1.0; }
  CHENS_HD static constexpr double c(int) { return 0.5; }
};

struct Gauss2Tableau {
  static constexpr int stages = 2, order = 4;
  static constexpr const char* name = "gauss2";
  // sqrt(3)/6 to 21 digits.
  static constexpr double r = 0.288675134594812882254574390251;
  CHENS_HD static constexpr double a(int i, int j) { return i == j ? 0.25 : (i == 0 ? 0.25 - r : 0.25 + r); }
  CHENS_HD static constexpr double b(int) { return 0.5; }
  CHENS_HD static constexpr double c(int i) { return i == 0 ? 0.5 - r : 0.5 + r; }
};

}  // namespace chens
