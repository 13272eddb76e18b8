// Dense reference implementation of the Hamilton-Dirac equations, the naive index-reduced
// equations and the impetus-striction equations for ANY small constrained Hamiltonian
// system with n degrees of freedom (state z = (q, p), 2n numbers) and k holonomic
// constraints phi(q) = 0. It is given only two generic callables,
//   H(q, p)  -> T                 the Hamiltonian,
//   phi(q)   -> std::vector<T>    the k position constraints,
// with q, p as std::vector<T> and T any scalar type (double or the nested forward-mode
// duals of tests/support/dual.hpp), and derives everything else from the papers' general
// definitions, with all derivatives by automatic differentiation and all linear algebra
// dense (Eigen, full-pivoting LU):
//   {F, G}  = F_q . G_p - F_p . G_q = grad F^T Omega grad G,  Omega = [[0, I], [-I, 0]],
//   X_F     = {z, F} = Omega grad F                              (the Hamiltonian vector field)
//   psi     = {phi, H}                                           (001 eq. 2; 002 eq. 41)
//   chi     = (phi, psi),  C = {chi, chi}  (2k x 2k, inverted densely, not by blocks)
//   dirac:   z' = X_H - X_chi_a (C^-1)^ab {chi_b, H}                    (002 eqs. 13, 17)
//   naive:   q' = H_p,  p' = -H_q + lambda_a grad_q phi_a,
//            {psi, phi} lambda = {psi, H}                               (002 eqs. 26-27)
//            (then d psi / dt = {psi, H} - {psi, phi} lambda = 0 along the flow, i.e.
//            d^2 phi / dt^2 = 0; since {psi, phi} = -Q^T this is Q^T lambda = -{psi, H})
//   impetus: at an impetus state z* = (q*, p*), strictions lambda from
//            {phi, psi}(z*) lambda = psi(z*)  (= Q lambda = J M^-1 p*, 000 eq. 32),
//            z*' = Omega grad H*(z*),  H*(q*, p*) = H(q*, p* - grad_q phi_a(q*) lambda_a)
//            with lambda frozen (000 eqs. 27-28: its derivatives multiply psi(q, p) = 0),
//            physical state (q*, p* - grad_q phi_a(q*) lambda_a)                (000 eq. 26)
// psi is differentiated as a function in its own right (nested duals: the inner level forms
// the bracket, the outer one its gradient), so grad psi, Q = {phi, psi}, S = {psi, psi} and
// {psi, H} contain no hand-derived formula. None of chens' structured formulas is used.
//
// Cost: one evaluation of H in Dual<Dual<double, 2n>, 2n> per point (O((2n)^2) per
// arithmetic operation); fine for the small systems the tests use (2n <= 64 or so).
#pragma once

#include <array>
#include <cassert>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include "support/dual.hpp"

namespace chens::test {

template <int n, class HFn, class PhiFn>
class DenseDiracOracle {
 public:
  static_assert(n > 0, "at least one degree of freedom");
  static constexpr int dofs = n;
  static constexpr int dim = 2 * n;
  using Vector = Eigen::VectorXd;
  using Matrix = Eigen::MatrixXd;

  // Everything the formulations need at one point z, from first and (through psi) second
  // derivatives of H and phi. Gradients are stored as rows.
  struct Point {
    Vector z;
    double H = 0.0;
    Vector grad_H;    // dim
    Vector phi;       // k
    Vector psi;       // k, = {phi, H}
    Matrix grad_phi;  // k x dim
    Matrix grad_psi;  // k x dim
    int constraints() const { return static_cast<int>(phi.size()); }
  };

  DenseDiracOracle(HFn h, PhiFn phi) : h_(std::move(h)), phi_(std::move(phi)) {}

  Point at(const Vector& z) const {
    assert(z.size() == dim);
    Point P;
    P.z = z;
    const std::vector<double> zs(z.data(), z.data() + dim);
    const auto h = seeded(h_of_z(), zs);
    P.H = h[0].v;
    P.grad_H = row(h[0].d);
    const auto f = seeded(phi_of_z(), zs);
    const int k = static_cast<int>(f.size());
    P.phi.resize(k);
    P.grad_phi.resize(k, dim);
    for (int a = 0; a < k; ++a) {
      P.phi[a] = f[a].v;
      P.grad_phi.row(a) = row(f[a].d).transpose();
    }
    // psi(z) evaluated on first-order duals seeded with z: values and gradients at once.
    using D1 = Dual<double, dim>;
    std::vector<D1> zd(dim);
    for (int i = 0; i < dim; ++i) zd[i] = D1::variable(z[i], i);
    const std::vector<D1> s = psi_generic(zd);
    assert(static_cast<int>(s.size()) == k);
    P.psi.resize(k);
    P.grad_psi.resize(k, dim);
    for (int a = 0; a < k; ++a) {
      P.psi[a] = s[a].v;
      P.grad_psi.row(a) = row(s[a].d).transpose();
    }
    return P;
  }

  // ---- Poisson brackets --------------------------------------------------------------
  static Matrix omega() {
    Matrix w = Matrix::Zero(dim, dim);
    w.topRightCorner(n, n).setIdentity();
    w.bottomLeftCorner(n, n) = -Matrix::Identity(n, n);
    return w;
  }
  // {F_a, G_b} for gradients stored as rows of gF and gG.
  static Matrix bracket(const Matrix& gF, const Matrix& gG) { return gF * omega() * gG.transpose(); }
  static Vector hamiltonian_field(const Vector& grad) { return omega() * grad; }

  // Q = {phi, psi} (k x k; = J M^-1 J^T for H = p^T M^-1 p / 2 + V).
  static Matrix Q(const Point& P) { return bracket(P.grad_phi, P.grad_psi); }
  // S = {psi, psi} (k x k, skew).
  static Matrix S(const Point& P) { return bracket(P.grad_psi, P.grad_psi); }
  // {psi, H} (k).
  static Vector psi_H(const Point& P) { return P.grad_psi * omega() * P.grad_H; }
  // chi = (phi, psi): gradients (2k x dim), C = {chi, chi} (2k x 2k), {chi, H} (2k).
  static Matrix grad_chi(const Point& P) {
    Matrix g(2 * P.constraints(), dim);
    g << P.grad_phi, P.grad_psi;
    return g;
  }
  static Matrix C(const Point& P) { return bracket(grad_chi(P), grad_chi(P)); }
  static Vector chi_H(const Point& P) { return grad_chi(P) * omega() * P.grad_H; }

  // ---- vector fields -----------------------------------------------------------------
  // Hamilton-Dirac (002 eq. 17): z' = X_H - X_chi_a (C^-1)^ab {chi_b, H}.
  static Vector dirac(const Point& P) {
    const Vector coeff = C(P).fullPivLu().solve(chi_H(P));
    return hamiltonian_field(P.grad_H) - omega() * grad_chi(P).transpose() * coeff;
  }
  // Naive index reduction (002 eqs. 26-27): {psi, phi} lambda = {psi, H}.
  static Vector naive_multipliers(const Point& P) { return bracket(P.grad_psi, P.grad_phi).fullPivLu().solve(psi_H(P)); }
  static Vector naive(const Point& P) {
    Vector r = hamiltonian_field(P.grad_H);
    r.tail(n) += P.grad_phi.leftCols(n).transpose() * naive_multipliers(P);
    return r;
  }
  // Impetus-striction (000 eqs. 26-32) at an impetus state P.z = (q*, p*).
  static Vector strictions(const Point& P) { return Q(P).fullPivLu().solve(P.psi); }
  static Vector impetus_physical(const Point& P) {
    Vector r = P.z;
    r.tail(n) -= P.grad_phi.leftCols(n).transpose() * strictions(P);
    return r;
  }
  Vector impetus(const Point& P) const {
    const Vector lam = strictions(P);
    const int k = P.constraints();
    auto hstar = [this, &lam, k](const auto& w) {
      using S1 = typename std::decay_t<decltype(w)>::value_type;
      const auto f = seeded(phi_of_z(), w);  // grad phi(q*) with q* itself differentiable
      std::vector<S1> q(w.begin(), w.begin() + n), p(w.begin() + n, w.end());
      for (int a = 0; a < k; ++a)
        for (int i = 0; i < n; ++i) p[i] = p[i] - lam[a] * f[a].d[i];
      return std::vector<S1>{h_(q, p)};
    };
    const std::vector<double> zs(P.z.data(), P.z.data() + dim);
    const auto h = seeded(hstar, zs);
    return hamiltonian_field(row(h[0].d));
  }

  // Rates of change of phi and psi along a vector field zdot: grad phi . zdot, grad psi . zdot.
  static Vector phi_rate(const Point& P, const Vector& zdot) { return P.grad_phi * zdot; }
  static Vector psi_rate(const Point& P, const Vector& zdot) { return P.grad_psi * zdot; }

 private:
  HFn h_;
  PhiFn phi_;

  static Vector row(const std::array<double, dim>& d) { return Eigen::Map<const Vector>(d.data(), dim); }

  // f applied to z seeded as the independent variables of a Dual<T, dim> (T = value type
  // of z): the outputs carry f(z) in .v and grad f(z) in .d.
  template <class F, class T>
  static auto seeded(const F& f, const std::vector<T>& z) {
    using D = Dual<T, dim>;
    std::vector<D> zd(dim);
    for (int i = 0; i < dim; ++i) zd[i] = D::variable(z[i], i);
    return f(zd);
  }

  auto h_of_z() const {
    return [this](const auto& z) {
      using S1 = typename std::decay_t<decltype(z)>::value_type;
      const std::vector<S1> q(z.begin(), z.begin() + n), p(z.begin() + n, z.end());
      return std::vector<S1>{h_(q, p)};
    };
  }
  auto phi_of_z() const {
    return [this](const auto& z) {
      using S1 = typename std::decay_t<decltype(z)>::value_type;
      const std::vector<S1> q(z.begin(), z.begin() + n);
      return phi_(q);
    };
  }

  template <class T>
  static T poisson(const std::array<T, dim>& gf, const std::array<T, dim>& gg) {
    T s(0.0);
    for (int i = 0; i < n; ++i) s = s + gf[i] * gg[n + i] - gf[n + i] * gg[i];
    return s;
  }

  // psi = {phi, H} for any scalar T (one more dual level is added inside).
  template <class T>
  std::vector<T> psi_generic(const std::vector<T>& z) const {
    const auto h = seeded(h_of_z(), z);
    const auto f = seeded(phi_of_z(), z);
    std::vector<T> r;
    r.reserve(f.size());
    for (const auto& fa : f) r.push_back(poisson(fa.d, h[0].d));
    return r;
  }
};

// DenseDiracOracle with n degrees of freedom for the callables h(q, p) and phi(q).
template <int n, class HFn, class PhiFn>
DenseDiracOracle<n, HFn, PhiFn> make_dense_dirac_oracle(HFn h, PhiFn phi) {
  return DenseDiracOracle<n, HFn, PhiFn>(std::move(h), std::move(phi));
}

}  // namespace chens::test
