// Rodas5P: a stiffly accurate, L-stable Rosenbrock-Wanner method of order 5 with 8 stages and
// an embedded order-4 solution (G. Steinebach, "Construction of Rosenbrock-Wanner method
// Rodas5P and numerical benchmarks within the Julia Differential Equations package", BIT
// Numerical Mathematics 63 (2023), article 27), as a per-instance stepper for autonomous ODEs
// z' = f(z) with a small fixed-size state: the penalty formulation (formulations/penalty.hpp),
// stiff for large penalty strengths, is what it is for.
//
// Coefficients. Copied digit for digit (by a script, from the file's text) from SciML's
// OrdinaryDiffEq.jl, lib/OrdinaryDiffEqRosenbrock/src/rosenbrock_tableaus.jl at commit
// b211787f7b18d3c5391121bd8c9e2d5fee54efee (its last change to these lines: 47ab74d0, a
// reformatting): the constants RODAS5PA (a), RODAS5PC (c), RODAS5Pc (node), RODAS5Pd (d),
// RODAS5PH (h) and gamma = 0.21193756319429014 of Rodas5PTableau. They are the numbers
// Steinebach himself committed with the method (OrdinaryDiffEq.jl commit 000230a3e53a, "New
// method Rodas5P and new fourth order dense output Rodas5", 2022-02-25, src/tableaus/
// rosenbrock_tableaus.jl, a21..a65, C21..C87, c2..c5, d1..d5, h21..h48), compared equal
// digit for digit. Rows 7 and 8 of a are row 6 plus ones (a76 = 1; a86 = a87 = 1), as both
// versions have them; b is row 8 of a with b8 = 1 and the error weights are e8 (btilde in
// OrdinaryDiffEq's Rodas5PTableau): the method is stiffly accurate, its solution is the
// eighth stage's argument plus the eighth increment, and the embedded order-4 solution is
// that argument alone.
//
// Formulation. The coefficients belong to the "transformed" Rosenbrock step of Hairer &
// Wanner II, §IV.7 (the implementation section, and the RODAS code), the one OrdinaryDiffEq's
// perform_step! takes (W = J - I/(h gamma) there, increments W \ -(...)): with J = f'(z) and
// W = I/(h gamma) - J, for i = 1..8
//   W U_i = f(z + sum_{j<i} a_ij U_j) + sum_{j<i} (c_ij / h) U_j,
//   z_new = z + sum_i b_i U_i = (z + sum_{j<8} a_8j U_j) + U_8,  z_hat = z + sum_{j<8} a_8j U_j,
// the error estimate z_new - z_hat = U_8. The U_i are the classical form's increments k_i
// (h f included) combined as U_i = sum_{j<=i} gamma_ij k_j, so that a = alpha Gamma^-1,
// c = diag(1/gamma) - Gamma^-1, and the weights b here are Hairer-Wanner's m = b_HW Gamma^-1
// (tests/test_rodas5p.cpp recovers alpha, Gamma and b_HW from them and checks the order
// conditions). The system is autonomous, so the time derivative terms h d_i f_t vanish and the
// nodes (node) and gamma_i (d) are not used by the step; they are kept for checks and for a
// non-autonomous use.
//
// Dense output (Steinebach's order-4 continuous extension, OrdinaryDiffEq's H and
// _ode_interpolant): K_r = sum_i h(r, i) U_i, r = 0, 1, 2, and
//   z(theta) = (1 - theta) z + theta (z_new + (1 - theta) (K_0 + theta (K_1 + theta K_2))).
//
// The Jacobian J = f'(z) by forward-mode dual numbers (linalg/dual.hpp): the system's own rhs
// evaluated once over DualN<Real, N>, N = State::size, with the unit vectors as tangents
// (dual_system of formulations/formulation.hpp, the formulation over the model rebound to the
// dual type, as geometry/tangent_system.hpp does). No finite differences. A System that is
// not a formulation over a rebindable model may provide `jacobian(z, J)` itself (Mat<Real, N>
// row-major, J.a[i][j] = d f_i / d z_j); it is then used instead.
//
// W is factored once per attempt with partial pivoting (linalg/dense_solve.hpp's
// DensePivotedLu) and the factors serve all eight stages. Without pivoting, a leading minor
// of W that vanishes ends the step although W is regular: its first pivot 1/(h gamma) - J_00
// is zero where h gamma J_00 = 1 (tests/test_rodas5p.cpp's non-normal linear system, whose
// eigenvalues are +-1). W itself is singular where 1/(h gamma) is an eigenvalue of J (for the
// penalty ODE, J = [[0, M^-1], [-Hess V, 0]], where Hess V / m has the eigenvalue
// -1/(h gamma)^2: inside the circle, where the penalty's tangential curvature is negative);
// then no factorisation helps: the increments and the error norm are non-finite, which the
// step rejects (next_step shrinks a NaN norm's step by the largest factor).
//
// Cost of one attempt: one Jacobian (one rhs over DualN<Real, N>, or System::jacobian), one
// N x N LU, eight forward/back substitutions, and rhs_per_attempt = 8 right-hand sides:
// f at stages 2..8 (stage 1 uses the given k1 = f(z)) and f(z_new), returned as the next
// step's k1 whether or not the attempt is accepted, as DOPRI5's last stage is (first same as last).
//
// Controller: Hairer's (integrators/step_control.hpp) with the constants of Hairer's RODAS
// code: safety 0.9 (WORK(5)), step ratio within [0.2, 6] (WORK(3), WORK(4)), no growth right
// after a rejection; the exponent 1/5 since the estimate is an order-4 solution's local error
// O(h^5) (RODAS's own is 1/4 for its order-3 estimate). No Lund stabilisation, and RODAS's
// Gustafsson predictive option (its default) is not implemented. The error norm is DOPRI5's
// (and RODAS's): sqrt(mean_c (U_8c / (atol + rtol max(|z_c|, |z_new_c|)))^2).
//
// No heap, no exceptions, no virtuals; states are Vec<Real, N> (the thread groups' slice
// states are not supported).
#pragma once

#include <cmath>
#include <type_traits>
#include <utility>

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/integrators/embedded_pair.hpp>
#include <chens/integrators/step_control.hpp>
#include <chens/linalg/dense_solve.hpp>
#include <chens/linalg/dual.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

struct Rodas5PTableau {
  static constexpr int stages = 8, order = 5, embedded_order = 4, dense_terms = 3;
  static constexpr const char* name = "rodas5p";
  CHENS_HD static constexpr double gamma() { return 0.21193756319429014; }
  // a(i, j), c(i, j): the transformed step's matrices (RODAS5PA, RODAS5PC), 0-based, j < i.
  CHENS_HD static constexpr double a(int i, int j) {
    switch (i * 8 + j) {
      case 1 * 8 + 0: return 3.0;
      case 2 * 8 + 0: return 2.849394379747939;
      case 2 * 8 + 1: return 0.45842242204463923;
      case 3 * 8 + 0: return -6.954028509809101;
      case 3 * 8 + 1: return 2.489845061869568;
      case 3 * 8 + 2: return -10.358996098473584;
      case 4 * 8 + 0: return 2.8029986275628964;
      case 4 * 8 + 1: return 0.5072464736228206;
      case 4 * 8 + 2: return -0.3988312541770524;
      case 4 * 8 + 3: return -0.04721187230404641;
      case 5 * 8 + 0: return -7.502846399306121;
      case 5 * 8 + 1: return 2.561846144803919;
      case 5 * 8 + 2: return -11.627539656261098;
      case 5 * 8 + 3: return -0.18268767659942256;
      case 5 * 8 + 4: return 0.030198172008377946;
      case 6 * 8 + 0: return -7.502846399306121;
      case 6 * 8 + 1: return 2.561846144803919;
      case 6 * 8 + 2: return -11.627539656261098;
      case 6 * 8 + 3: return -0.18268767659942256;
      case 6 * 8 + 4: return 0.030198172008377946;
      case 6 * 8 + 5: return 1.0;
      case 7 * 8 + 0: return -7.502846399306121;
      case 7 * 8 + 1: return 2.561846144803919;
      case 7 * 8 + 2: return -11.627539656261098;
      case 7 * 8 + 3: return -0.18268767659942256;
      case 7 * 8 + 4: return 0.030198172008377946;
      case 7 * 8 + 5: return 1.0;
      case 7 * 8 + 6: return 1.0;
      default: return 0.0;
    }
  }
  CHENS_HD static constexpr double c(int i, int j) {
    switch (i * 8 + j) {
      case 1 * 8 + 0: return -14.155112264123755;
      case 2 * 8 + 0: return -17.97296035885952;
      case 2 * 8 + 1: return -2.859693295451294;
      case 3 * 8 + 0: return 147.12150275711716;
      case 3 * 8 + 1: return -1.41221402718213;
      case 3 * 8 + 2: return 71.68940251302358;
      case 4 * 8 + 0: return 165.43517024871676;
      case 4 * 8 + 1: return -0.4592823456491126;
      case 4 * 8 + 2: return 42.90938336958603;
      case 4 * 8 + 3: return -5.961986721573306;
      case 5 * 8 + 0: return 24.854864614690072;
      case 5 * 8 + 1: return -3.0009227002832186;
      case 5 * 8 + 2: return 47.4931110020768;
      case 5 * 8 + 3: return 5.5814197821558125;
      case 5 * 8 + 4: return -0.6610691825249471;
      case 6 * 8 + 0: return 30.91273214028599;
      case 6 * 8 + 1: return -3.1208243349937974;
      case 6 * 8 + 2: return 77.79954646070892;
      case 6 * 8 + 3: return 34.28646028294783;
      case 6 * 8 + 4: return -19.097331116725623;
      case 6 * 8 + 5: return -28.087943162872662;
      case 7 * 8 + 0: return 37.80277123390563;
      case 7 * 8 + 1: return -3.2571969029072276;
      case 7 * 8 + 2: return 112.26918849496327;
      case 7 * 8 + 3: return 66.9347231244047;
      case 7 * 8 + 4: return -40.06618937091002;
      case 7 * 8 + 5: return -54.66780262877968;
      case 7 * 8 + 6: return -9.48861652309627;
      default: return 0.0;
    }
  }
  CHENS_HD static constexpr double node(int i) {
    switch (i) {
      case 1: return 0.6358126895828704;
      case 2: return 0.4095798393397535;
      case 3: return 0.9769306725060716;
      case 4: return 0.4288403609558664;
      case 5: return 1.0;
      case 6: return 1.0;
      case 7: return 1.0;
      default: return 0.0;
    }
  }
  CHENS_HD static constexpr double d(int i) {
    switch (i) {
      case 0: return 0.21193756319429014;
      case 1: return -0.42387512638858027;
      case 2: return -0.3384627126235924;
      case 3: return 1.8046452872882734;
      case 4: return 2.325825639765069;
      default: return 0.0;
    }
  }
  CHENS_HD static constexpr double h(int r, int i) {
    switch (r * 8 + i) {
      case 0 * 8 + 0: return 25.948786856663858;
      case 0 * 8 + 1: return -2.5579724845846235;
      case 0 * 8 + 2: return 10.433815404888879;
      case 0 * 8 + 3: return -2.3679251022685204;
      case 0 * 8 + 4: return 0.524948541321073;
      case 0 * 8 + 5: return 1.1241088310450404;
      case 0 * 8 + 6: return 0.4272876194431874;
      case 0 * 8 + 7: return -0.17202221070155493;
      case 1 * 8 + 0: return -9.91568850695171;
      case 1 * 8 + 1: return -0.9689944594115154;
      case 1 * 8 + 2: return 3.0438037242978453;
      case 1 * 8 + 3: return -24.495224566215796;
      case 1 * 8 + 4: return 20.176138334709044;
      case 1 * 8 + 5: return 15.98066361424651;
      case 1 * 8 + 6: return -6.789040303419874;
      case 1 * 8 + 7: return -6.710236069923372;
      case 2 * 8 + 0: return 11.419903575922262;
      case 2 * 8 + 1: return 2.8879645146136994;
      case 2 * 8 + 2: return 72.92137995996029;
      case 2 * 8 + 3: return 80.12511834622643;
      case 2 * 8 + 4: return -52.072871366152654;
      case 2 * 8 + 5: return -59.78993625266729;
      case 2 * 8 + 6: return -0.15582684282751913;
      case 2 * 8 + 7: return 4.883087185713722;
      default: return 0.0;
    }
  }
  // The solution's weights (row 8 of a, and 1) and the embedded order-4 solution's (row 8 of
  // a, and 0): the error estimate is U_8.
  CHENS_HD static constexpr double b(int i) { return i < 7 ? a(7, i) : 1.0; }
  CHENS_HD static constexpr double b_hat(int i) { return i < 7 ? a(7, i) : 0.0; }
  // Hairer's RODAS controller constants with the exponent of an order-4 estimate, 1/5.
  // (A function, not a static member: device code may call it, not refer to a host object.)
  CHENS_HD static constexpr HairerStepControl control() { return {0.9, 0.2, 6.0, 0.2, 0.0}; }
};

// Whether System provides its own Jacobian, sys.jacobian(z, J) with J a Mat<Real, N>.
template <class System, class Matrix, class = void>
struct has_own_jacobian : std::false_type {};
template <class System, class Matrix>
struct has_own_jacobian<System, Matrix,
                        std::void_t<decltype(std::declval<const System&>().jacobian(
                            std::declval<const typename System::State&>(), std::declval<Matrix&>()))>> : std::true_type {};

template <class Real>
struct Rodas5P {
  using Tableau = Rodas5PTableau;
  static constexpr bool adaptive = true;
  static constexpr bool has_lanes = false;  // step sizes differ per instance
  static constexpr int order = 5;
  static constexpr int embedded_order = 4;
  static constexpr int rhs_per_attempt = 8;        // f at stages 2..8, and f(z_new)
  static constexpr int jacobians_per_attempt = 1;  // one rhs over DualN<Real, N> (or System::jacobian)
  static constexpr int solves_per_attempt = 8;     // with one LU of W
  static constexpr int dense_terms = 3;
  Real rtol;
  Real atol;

  template <class System>
  static constexpr int size_of = System::State::size;

  // J = f'(z), J.a[i][j] = d f_i / d z_j.
  template <class System>
  CHENS_HD static void jacobian(const System& sys, const typename System::State& z, Mat<Real, size_of<System>>& J) {
    constexpr int N = size_of<System>;
    if constexpr (has_own_jacobian<System, Mat<Real, N>>::value) {
      sys.jacobian(z, J);
    } else {
      using D = DualN<Real, N>;
      const auto dsys = dual_system<D>(sys);
      using DState = typename std::decay_t<decltype(dsys)>::State;
      static_assert(DState::size == N, "the dual system's state has the system's components");
      DState zd, fd;
      for (int c = 0; c < N; ++c) {
        zd[c] = D(z[c]);
        zd[c].d[c] = Real(1);
      }
      dsys.rhs(zd, fd);
      for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) J.a[i][j] = fd[i].d[j];
    }
  }

  // The increments U_1..U_8 of a step of size h from z with k1 = f(z), and the eighth stage's
  // argument z_hat = z + sum_{j<8} a_8j U_j (the embedded order-4 solution).
  template <class System>
  CHENS_HD static void stages(const System& sys, const typename System::State& z, const typename System::State& k1, Real h,
                              typename System::State (&U)[8], typename System::State& z_hat) {
    using State = typename System::State;
    using T = Rodas5PTableau;
    constexpr int N = State::size;
    static_assert(std::is_same<State, Vec<Real, N>>::value, "Rodas5P steps states Vec<Real, N>");
    Mat<Real, N> W;
    jacobian(sys, z, W);
    const Real inv_hg = Real(1) / (h * Real(T::gamma()));
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) W.a[i][j] = (i == j ? inv_hg : Real(0)) - W.a[i][j];
    const DensePivotedLu<Real, N> lu = DensePivotedLu<Real, N>::factor(W);
    const Real inv_h = Real(1) / h;
    U[0] = lu.solve(k1);
    for (int i = 1; i < 8; ++i) {
      State zi = z;
      for (int j = 0; j < i; ++j)
        if (T::a(i, j) != 0.0) zi = axpy(zi, Real(T::a(i, j)), U[j]);
      z_hat = zi;  // the last, stage 8's, stays
      State r;
      eval_rhs(sys, zi, r);
      for (int j = 0; j < i; ++j) r = axpy(r, Real(T::c(i, j)) * inv_h, U[j]);
      U[i] = lu.solve(r);
    }
  }

  // The order-5 solution z_new and the embedded order-4 solution z_hat of one step (tests).
  template <class System>
  CHENS_HD void solutions(const System& sys, const typename System::State& z, const typename System::State& k1, Real h,
                          typename System::State& z_new, typename System::State& z_hat) const {
    typename System::State U[8];
    stages(sys, z, k1, h, U, z_hat);
    z_new = z_hat + U[7];
  }

  // One trial step of size h from z with k1 = f(z), as EmbeddedPair::attempt: z_new the order-5
  // solution, k_new = f(z_new) (the next k1), the scaled error norm of U_8 returned (accept
  // when <= 1).
  template <class System>
  CHENS_HD Real attempt(const System& sys, const typename System::State& z, const typename System::State& k1, Real h,
                        typename System::State& z_new, typename System::State& k_new) const {
    using std::sqrt;
    using State = typename System::State;
    State U[8], z_hat;
    stages(sys, z, k1, h, U, z_hat);
    z_new = z_hat + U[7];
    eval_rhs(sys, z_new, k_new);
    Real sum = Real(0);
    for (int c = 0; c < State::size; ++c) {
      const Real q = U[7][c] / error_scale(z, z_new, c, rtol, atol);
      sum = sum + q * q;
    }
    return sqrt(sum / Real(State::size));
  }

  // The dense output's terms K_r = sum_i h(r, i) U_i of an accepted step (its stages taken
  // again as attempt took them).
  template <class System>
  CHENS_HD void dense_correction(const System& sys, const typename System::State& z, const typename System::State& k1,
                                 Real h, typename System::State (&K)[3]) const {
    using State = typename System::State;
    State U[8], z_hat;
    stages(sys, z, k1, h, U, z_hat);
    for (int r = 0; r < 3; ++r) {
      K[r] = State::zero();
      for (int i = 0; i < 8; ++i) K[r] = axpy(K[r], Real(Rodas5PTableau::h(r, i)), U[i]);
    }
  }

  // z(theta) = (1 - theta) z + theta (z_new + (1 - theta) (K_0 + theta (K_1 + theta K_2))).
  template <class State>
  CHENS_HD static State interpolate(const State& z, const State& z_new, const State (&K)[3], Real theta) {
    const Real t1 = Real(1) - theta;
    State r;
    for (int c = 0; c < State::size; ++c)
      r[c] = t1 * z[c] + theta * (z_new[c] + t1 * (K[0][c] + theta * (K[1][c] + theta * K[2][c])));
    return r;
  }

  // Next step size after a trial of size h with error norm err (Hairer's controller with
  // RODAS's constants, Rodas5PTableau::control()). A NaN norm (a singular W, an overflow)
  // counts as an infinite one: the step shrinks by the largest factor.
  CHENS_HD Real next_step(Dopri5Controller<Real>& ctl, Real err, Real h, bool accepted) const {
    if (!(err == err)) err = Real(INFINITY);
    return hairer_next_step(Rodas5PTableau::control(), ctl, err, h, accepted);
  }
};

}  // namespace chens
