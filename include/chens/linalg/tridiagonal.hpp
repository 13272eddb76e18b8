// Tridiagonal systems A x = r of fixed size M, solved by Thomas elimination (LU without
// pivoting, O(M)). Used for the chain molecule's Gram matrix Q = J M^-1 J^T (002 eq. 42),
// which is symmetric positive definite, so elimination without pivoting is stable
// (Golub & Van Loan, Matrix Computations, §4.3), and for RATTLE's Newton matrix
// J(q') M^-1 J(q)^T, a small perturbation of Q for small steps.
// The factorisation is computed once and reused for every right-hand side at the same
// point (the Hamilton-Dirac equations solve with Q three times per evaluation).
#pragma once

#include <chens/config.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

// Thomas elimination written once, over arrays anywhere: a factor's own members (one
// thread holds the whole system) or a thread group's shared memory (models/chain_lanes.hpp,
// where one lane eliminates for the group). Same operations, same order, same bits.
// A = L U with L unit lower bidiagonal (sub-diagonal l[1..M-1]) and U upper bidiagonal
// (diagonal 1/dinv[a], super-diagonal e[a], a = 0..M-2); sub[a] = A(a+1, a),
// diag[a] = A(a, a), super[a] = A(a, a+1), sub[M-1] and super[M-1] unused.
template <int M, class Real>
CHENS_HD CHENS_FORCEINLINE void tridiagonal_factor(const Real* sub, const Real* diag, const Real* super, Real* l, Real* e,
                                                   Real* dinv) {
  Real d = diag[0];
  dinv[0] = Real(1) / d;
  l[0] = Real(0);
  for (int a = 1; a < M; ++a) {
    e[a - 1] = super[a - 1];
    l[a] = sub[a - 1] * dinv[a - 1];
    d = diag[a] - l[a] * super[a - 1];
    dinv[a] = Real(1) / d;
  }
  e[M - 1] = Real(0);
}

// x = A^-1 r from the factor; x may be r itself (each r[a] is read before x[a] is written).
template <int M, class Real>
CHENS_HD CHENS_FORCEINLINE void tridiagonal_solve(const Real* l, const Real* e, const Real* dinv, const Real* r, Real* x) {
  x[0] = r[0];
  for (int a = 1; a < M; ++a) x[a] = r[a] - l[a] * x[a - 1];
  x[M - 1] = x[M - 1] * dinv[M - 1];
  for (int a = M - 2; a >= 0; --a) x[a] = (x[a] - e[a] * x[a + 1]) * dinv[a];
}

template <class Real, int M>
struct TridiagonalFactor {
  Real l[M];
  Real e[M];
  Real dinv[M];

  CHENS_HD CHENS_FORCEINLINE static TridiagonalFactor factor(const Real* sub, const Real* diag, const Real* super) {
    TridiagonalFactor f;
    tridiagonal_factor<M>(sub, diag, super, f.l, f.e, f.dinv);
    return f;
  }

  CHENS_HD CHENS_FORCEINLINE Vec<Real, M> solve(const Vec<Real, M>& r) const {
    Vec<Real, M> x;
    tridiagonal_solve<M>(l, e, dinv, r.v, x.v);
    return x;
  }
};

}  // namespace chens
