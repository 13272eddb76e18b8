// Dense reference implementation of every pendulum formulation, built only from the
// Hamiltonian H, the constraint phi and the papers' general definitions, with all
// derivatives by (nested) automatic differentiation and the linear algebra by Eigen:
//   psi = {phi, H}                                  (001 eq. 2)
//   naive:     p' = -grad_q H + lambda grad_q phi, {psi,H} - lambda {psi,phi} = 0 (002 eqs. 26-27)
//   total:     z' = J grad(H + mu phi), {psi,phi} mu = {H,psi}                      (001 eqs. 3, 5)
//   extended:  z' = J grad(H - chi_a (C^-1)^ab {chi_b, H})                          (002 eqs. 19-24)
//   dirac:     z' = J grad H - (J grad chi_a) (C^-1)^ab {chi_b, H}                  (002 eqs. 13, 17)
//   impetus:   z' = J grad H*(q*, p*) with H* = H(q*, p* - lambda grad phi(q*)),
//              lambda frozen at <grad phi, grad phi>_M lambda = <grad phi, p*>_M    (000 eqs. 27-28, 32)
//   impetus-modified: the same with Hbar = |q|^2 |p|^2 / (2 m l^2) + m g y          (000 eq. 52)
// with J = [[0, I], [-I, 0]] and chi = (phi, psi). None of chens' structured formulas
// is used, so agreement tests both the derivations and the code.
#pragma once

#include <array>

#include <Eigen/Dense>

#include "support/dual.hpp"

namespace chens::test {

template <class T>
using Z = std::array<T, 4>;

template <class T, class F>
Z<T> grad(const F& f, const Z<T>& z) {
  using D = Dual<T, 4>;
  Z<D> zd;
  for (int i = 0; i < 4; ++i) zd[i] = D::variable(z[i], i);
  const D r = f(zd);
  return r.d;
}

template <class T>
T poisson(const Z<T>& gf, const Z<T>& gg) {  // {F, G} = F_q . G_p - F_p . G_q
  return gf[0] * gg[2] + gf[1] * gg[3] - gf[2] * gg[0] - gf[3] * gg[1];
}

struct PendulumOracle {
  double m = 1, l = 1, g = 1;

  template <class T>
  T H(const Z<T>& z) const {
    return (z[2] * z[2] + z[3] * z[3]) / (2.0 * m) + m * g * z[1];
  }
  template <class T>
  T Hbar(const Z<T>& z) const {
    return (z[0] * z[0] + z[1] * z[1]) * (z[2] * z[2] + z[3] * z[3]) / (2.0 * m * l * l) + m * g * z[1];
  }
  template <class T>
  T phi(const Z<T>& z) const {
    return (z[0] * z[0] + z[1] * z[1] - l * l) / 2.0;
  }
  template <class T>
  T psi(const Z<T>& z) const {
    return poisson(grad([this](const auto& w) { return phi(w); }, z), grad([this](const auto& w) { return H(w); }, z));
  }
  // {A, B} for members A, B evaluated at z.
  template <class T, class FA, class FB>
  T bracket(const FA& a, const FB& b, const Z<T>& z) const {
    return poisson(grad(a, z), grad(b, z));
  }
  auto fH() const {
    return [this](const auto& w) { return H(w); };
  }
  auto fphi() const {
    return [this](const auto& w) { return phi(w); };
  }
  auto fpsi() const {
    return [this](const auto& w) { return psi(w); };
  }

  // 2x2 C = {chi_a, chi_b} and b = {chi_a, H}, generic in the scalar.
  template <class T>
  void constraint_matrix(const Z<T>& z, T c[2][2], T hb[2]) const {
    const Z<T> gx[2] = {grad(fphi(), z), grad(fpsi(), z)};
    const Z<T> gh = grad(fH(), z);
    for (int a = 0; a < 2; ++a) {
      for (int b = 0; b < 2; ++b) c[a][b] = poisson(gx[a], gx[b]);
      hb[a] = poisson(gx[a], gh);
    }
  }

  static Eigen::Vector4d symplectic(const Z<double>& gradient) {  // J grad
    return Eigen::Vector4d(gradient[2], gradient[3], -gradient[0], -gradient[1]);
  }

  Eigen::Vector4d naive(const Z<double>& z) const {
    const double lam = bracket(fpsi(), fH(), z) / bracket(fpsi(), fphi(), z);
    const Z<double> gh = grad(fH(), z), gp = grad(fphi(), z);
    return Eigen::Vector4d(gh[2], gh[3], -gh[0] + lam * gp[0], -gh[1] + lam * gp[1]);
  }

  Eigen::Vector4d total(const Z<double>& z) const {
    auto ht = [this](const auto& w) {
      const auto mu = bracket(fH(), fpsi(), w) / bracket(fpsi(), fphi(), w);
      return H(w) + mu * phi(w);
    };
    return symplectic(grad(ht, z));
  }

  Eigen::Vector4d extended(const Z<double>& z) const {
    auto he = [this](const auto& w) {
      using T = std::decay_t<decltype(w[0])>;
      T c[2][2], hb[2];
      constraint_matrix(w, c, hb);
      const T det = c[0][0] * c[1][1] - c[0][1] * c[1][0];
      const T ci[2][2] = {{c[1][1] / det, -c[0][1] / det}, {-c[1][0] / det, c[0][0] / det}};
      const T chi[2] = {phi(w), psi(w)};
      T corr = T(0.0);
      for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b) corr = corr + chi[a] * ci[a][b] * hb[b];
      return H(w) - corr;
    };
    return symplectic(grad(he, z));
  }

  Eigen::Vector4d dirac(const Z<double>& z) const {
    double c[2][2], hb[2];
    constraint_matrix(z, c, hb);
    Eigen::Matrix2d C;
    C << c[0][0], c[0][1], c[1][0], c[1][1];
    const Eigen::Vector2d v = C.fullPivLu().solve(Eigen::Vector2d(hb[0], hb[1]));
    Eigen::Matrix<double, 4, 2> X;
    X.col(0) = symplectic(grad(fphi(), z));
    X.col(1) = symplectic(grad(fpsi(), z));
    return symplectic(grad(fH(), z)) - X * v;
  }

  // Strictions of 000 eq. 32 at an impetus state (q*, p*), mass metric M = m I.
  double striction(const Z<double>& z) const {
    const Z<double> gp = grad(fphi(), z);
    const Eigen::Vector2d n(gp[0], gp[1]), ps(z[2], z[3]);
    return (n.dot(ps) / m) / (n.dot(n) / m);
  }

  template <class FH>
  Eigen::Vector4d impetus_with(const FH& h, const Z<double>& z) const {
    const double lam = striction(z);
    auto hstar = [this, &h, lam](const auto& w) {
      using T = std::decay_t<decltype(w[0])>;
      const Z<T> gp = grad(fphi(), w);
      const Z<T> moved = {w[0], w[1], w[2] - lam * gp[0], w[3] - lam * gp[1]};
      return h(moved);
    };
    return symplectic(grad(hstar, z));
  }
  Eigen::Vector4d impetus(const Z<double>& z) const { return impetus_with(fH(), z); }
  Eigen::Vector4d impetus_modified(const Z<double>& z) const {
    return impetus_with([this](const auto& w) { return Hbar(w); }, z);
  }
  Eigen::Vector4d impetus_physical(const Z<double>& z) const {
    const double lam = striction(z);
    const Z<double> gp = grad(fphi(), z);
    return Eigen::Vector4d(z[0], z[1], z[2] - lam * gp[0], z[3] - lam * gp[1]);
  }
};

}  // namespace chens::test
