// Small dense solves for the user models (models/auto_model.hpp, issue 19), m <= 6 or so,
// per instance, in registers: no pivoting, no branches on values, so that the same code
// runs on the CPU, on the GPU and over the CPU lanes' D2 (two instances per register); and
// Rodas5P's pivoted LU (DensePivotedLu, below).
//
//  - DenseCholesky: Q = J M^-1 J^T (002 eq. 28) is symmetric positive definite wherever the
//    constraints are independent (J of full rank, M > 0), so its Cholesky factorisation
//    exists without pivoting and is backward stable (Higham, Accuracy and Stability of
//    Numerical Algorithms, 2nd ed., Thm. 10.3). The reciprocals of the pivots are stored:
//    a solve is multiplications and subtractions alone.
//  - DenseLu: RATTLE's Newton matrix J(q_k) M^-1 J(q_n)^T (integrators/rattle.hpp) is Q at
//    q_n plus O(h): not symmetric, but within O(h) of an SPD matrix, where Gaussian
//    elimination without pivoting is stable for h small enough that it stays positive
//    definite in its symmetric part (Higham Thm. 9.9 and §10.4); its Newton iteration
//    tolerates the rest (the iteration count is reported per step).
// Singular or indefinite matrices give non-finite results, which the steps report as
// non-finite (lost instances), never a silent wrong answer.
#pragma once

#include <cmath>

#include <chens/config.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

// A dense m x m matrix, row-major.
template <class Real, int M>
struct Mat {
  Real a[M][M];
};

template <class Real, int M>
struct DenseCholesky {
  Real l[M][M];  // the lower factor, L L^T = A; l[i][i] holds 1 / L_ii
  CHENS_HD static DenseCholesky factor(const Mat<Real, M>& A) {
    using std::sqrt;
    DenseCholesky f;
    for (int j = 0; j < M; ++j) {
      Real d = A.a[j][j];
      for (int k = 0; k < j; ++k) d = d - f.l[j][k] * f.l[j][k];
      const Real inv = Real(1) / sqrt(d);
      f.l[j][j] = inv;
      for (int i = j + 1; i < M; ++i) {
        Real s = A.a[i][j];
        for (int k = 0; k < j; ++k) s = s - f.l[i][k] * f.l[j][k];
        f.l[i][j] = s * inv;
      }
    }
    return f;
  }
  CHENS_HD CHENS_FORCEINLINE Vec<Real, M> solve(const Vec<Real, M>& r) const {
    Vec<Real, M> y;
    for (int i = 0; i < M; ++i) {  // L y = r
      Real s = r[i];
      for (int k = 0; k < i; ++k) s = s - l[i][k] * y[k];
      y[i] = s * l[i][i];
    }
    for (int i = M - 1; i >= 0; --i) {  // L^T x = y
      Real s = y[i];
      for (int k = i + 1; k < M; ++k) s = s - l[k][i] * y[k];
      y[i] = s * l[i][i];
    }
    return y;
  }
};

// One constraint: the factorisation is the reciprocal (no square root).
template <class Real>
struct DenseCholesky<Real, 1> {
  Real inv;
  CHENS_HD static DenseCholesky factor(const Mat<Real, 1>& A) { return DenseCholesky{Real(1) / A.a[0][0]}; }
  CHENS_HD CHENS_FORCEINLINE Vec<Real, 1> solve(const Vec<Real, 1>& r) const { return Vec<Real, 1>{{r[0] * inv}}; }
};

template <class Real, int M>
struct DenseLu {
  Real lu[M][M];  // unit lower L below the diagonal, U on and above; lu[i][i] holds 1 / U_ii
  CHENS_HD static DenseLu factor(const Mat<Real, M>& A) {
    DenseLu f;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < M; ++j) f.lu[i][j] = A.a[i][j];
    for (int k = 0; k < M; ++k) eliminate(f.lu, k);
    return f;
  }
  // Step k of the elimination, in place: the pivot lu[k][k] replaced by its reciprocal, the
  // multipliers l_ik below it, and the rows below updated.
  CHENS_HD CHENS_FORCEINLINE static void eliminate(Real (&lu)[M][M], int k) {
    const Real inv = Real(1) / lu[k][k];
    lu[k][k] = inv;
    for (int i = k + 1; i < M; ++i) {
      const Real lik = lu[i][k] * inv;
      lu[i][k] = lik;
      for (int j = k + 1; j < M; ++j) lu[i][j] = lu[i][j] - lik * lu[k][j];
    }
  }
  CHENS_HD CHENS_FORCEINLINE Vec<Real, M> solve(const Vec<Real, M>& r) const {
    Vec<Real, M> y;
    for (int i = 0; i < M; ++i) {
      Real s = r[i];
      for (int k = 0; k < i; ++k) s = s - lu[i][k] * y[k];
      y[i] = s;
    }
    for (int i = M - 1; i >= 0; --i) {
      Real s = y[i];
      for (int k = i + 1; k < M; ++k) s = s - lu[i][k] * y[k];
      y[i] = s * lu[i][i];
    }
    return y;
  }
};

// Gaussian elimination with partial pivoting (Golub & Van Loan, Matrix Computations, 4th ed.,
// Alg. 3.4.1): at step k the entry of largest magnitude on or below the diagonal of column k
// becomes the pivot, so |L_ik| <= 1 and a zero or tiny leading entry of A ends nothing (Higham
// §9.3: backward stable with growth factors that are small in practice). For Rosenbrock's
// W = I/(h gamma) - J (integrators/rodas5p.hpp), which for large h |J| is far from
// diagonally dominant and need not be near a symmetric positive definite matrix. It branches
// on values: the one-instance paths only, not the CPU lanes. DenseLu's elimination and solve
// on the rows of P A.
template <class Real, int M>
struct DensePivotedLu {
  DenseLu<Real, M> pa;  // the factors of P A
  int perm[M];          // row i of P A is row perm[i] of A
  CHENS_HD static DensePivotedLu factor(const Mat<Real, M>& A) {
    using std::fabs;
    DensePivotedLu f;
    for (int i = 0; i < M; ++i) {
      f.perm[i] = i;
      for (int j = 0; j < M; ++j) f.pa.lu[i][j] = A.a[i][j];
    }
    for (int k = 0; k < M; ++k) {
      int p = k;
      for (int i = k + 1; i < M; ++i)
        if (fabs(f.pa.lu[i][k]) > fabs(f.pa.lu[p][k])) p = i;
      if (p != k) {
        for (int j = 0; j < M; ++j) {
          const Real t = f.pa.lu[k][j];
          f.pa.lu[k][j] = f.pa.lu[p][j];
          f.pa.lu[p][j] = t;
        }
        const int t = f.perm[k];
        f.perm[k] = f.perm[p];
        f.perm[p] = t;
      }
      DenseLu<Real, M>::eliminate(f.pa.lu, k);
    }
    return f;
  }
  CHENS_HD CHENS_FORCEINLINE Vec<Real, M> solve(const Vec<Real, M>& r) const {
    Vec<Real, M> pr;
    for (int i = 0; i < M; ++i) pr[i] = r[perm[i]];
    return pa.solve(pr);
  }
};

// The 2-norm condition number of a symmetric positive definite matrix by cyclic Jacobi
// rotations (host only: `chens check` and `chens run` refuse initial data whose Q is
// singular or worse than 1e12). Infinity when an eigenvalue is not positive.
template <int M>
double spd_condition_number(const Mat<double, M>& A) {
  double a[M][M];
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < M; ++j) a[i][j] = A.a[i][j];
  for (int sweep = 0; sweep < 60; ++sweep) {
    double off = 0.0, diag = 0.0;
    for (int i = 0; i < M; ++i) {
      diag += a[i][i] * a[i][i];
      for (int j = i + 1; j < M; ++j) off += a[i][j] * a[i][j];
    }
    if (!(off > 1e-36 * diag)) break;
    for (int p = 0; p < M; ++p)
      for (int q = p + 1; q < M; ++q) {
        if (a[p][q] == 0.0) continue;
        const double theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
        for (int k = 0; k < M; ++k) {  // A <- A G
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < M; ++k) {  // A <- G^T A
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
      }
  }
  double lo = a[0][0], hi = a[0][0];
  for (int i = 1; i < M; ++i) {
    lo = a[i][i] < lo ? a[i][i] : lo;
    hi = a[i][i] > hi ? a[i][i] : hi;
  }
  if (!(lo > 0.0) || !std::isfinite(hi)) return INFINITY;
  return hi / lo;
}

}  // namespace chens
