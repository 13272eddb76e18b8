// Floating-point operation counts per instance-step of the two benchmarked kernels
// (bench/bench_gpu_instances.cpp): the pendulum and the N = 7 chain, Hamilton-Dirac
// equations (002 eq. 31; pendulum 002 eqs. 35-36) integrated by classical RK4, with the
// tolerance-triggered momentum projection of 002 §11 / 001 §6 after each step.
//
// How they were obtained: tests/test_flop_counts.cpp instantiates the library's own code
// (HamiltonDirac<Model>::rhs, ExplicitRk<Rk4Tableau>::step, apply_projections,
// momentum_project, and the kernels' per-step loop advance_fixed_to_sample) with a counting
// scalar (tests/support/flop_counter.hpp) in place of double, runs it once, and asserts
// exact equality with every number below; it also checks that the counted computation gives
// the double one bit for bit. A change to the numerics that changes a count fails that test
// until the numbers here are updated.
//
// Convention:
//  - adds (additions and subtractions) and muls are 1 flop each; fmas, explicit fused
//    multiply-adds in the source, are 2 (there are none in these kernels). Compilers fuse
//    a mul and an add into one FMA instruction (nvcc by default), which leaves the flop
//    count unchanged and lowers the instruction count.
//  - divs and sqrts are counted separately and as 1 flop each in total(), as is customary
//    for rooflines. They cost more: on the GPU a double division or reciprocal is a
//    MUFU.RCP64H approximation refined by Newton steps (DFMAs) with a slow-path check, about
//    10 FP64-pipe instructions; on x86 divsd has ~4x the latency of mulsd. There are no
//    square roots in these kernels.
//  - sign flips (unary minus, fabs) are 0 flops and not listed (max|psi| flips signs
//    depending on the data); comparisons are 0 flops, listed as compares.
//  - The main numbers count distinct operations: each operation once per value it computes,
//    after the rewrites an optimising compiler makes without changing any result (common
//    subexpressions such as the chain's bond vectors q_{a+1} - q_a, which several primitives
//    recompute; the psi of the tolerance check, which the projection recomputes; the exact
//    identities x * 1 and x - 0 with literal 1 and 0, e.g. h * a_32 with a_32 = 1 and the
//    pendulum's dp_x - dV/dx with dV/dx = 0). These are what compiled code executes: nvcc
//    13.0 -O3 -arch=sm_90 turns one ExplicitRk::step (with its finiteness check) of the
//    pendulum into PTX with 77 mul + 40 fma + 28 sub + 4 div + 1 rcp .f64 = 190 flops =
//    pendulum_dirac_rk4_step + pendulum_finite_check + the step's 3 invariant operations;
//    the chain's rhs into 335 mul + 95 fma + 232 sub + 98 add + 27 rcp = 882 flops =
//    chain7_dirac_rhs + its 7 invariant operations. The *_as_written numbers count every
//    operation each time the source performs it.
//  - Operations whose operands are all model parameters or literals (the pendulum's 1/m,
//    m g, 1/m^2; the chain's w_a + w_{a+1} and 12 eps) give the same value at every step
//    and are hoisted out of the step loop (the compiled CPU loop of the pendulum has 4
//    divisions per step, one m / |q|^2 per stage: docs/performance.md). They are not in the
//    per-step numbers; *_instance_step_invariant lists them (distinct, per step of the loop).
// C++17: nvcc compiles the benchmark sources.
#pragma once

namespace chens::bench {

struct FlopCount {
  int adds = 0;      // additions and subtractions
  int muls = 0;      // multiplications
  int fmas = 0;      // explicit fused multiply-adds (2 flops each)
  int divs = 0;      // divisions (and reciprocals)
  int sqrts = 0;     // square roots
  int compares = 0;  // comparisons: not flops

  constexpr int total() const { return adds + muls + 2 * fmas + divs + sqrts; }
};

constexpr FlopCount operator+(const FlopCount& a, const FlopCount& b) {
  return FlopCount{a.adds + b.adds, a.muls + b.muls,   a.fmas + b.fmas,
                   a.divs + b.divs, a.sqrts + b.sqrts, a.compares + b.compares};
}
constexpr FlopCount operator*(int k, const FlopCount& a) {
  return FlopCount{k * a.adds, k * a.muls, k * a.fmas, k * a.divs, k * a.sqrts, k * a.compares};
}
constexpr bool operator==(const FlopCount& a, const FlopCount& b) {
  return a.adds == b.adds && a.muls == b.muls && a.fmas == b.fmas && a.divs == b.divs && a.sqrts == b.sqrts &&
         a.compares == b.compares;
}

// Field order: {adds, muls, fmas, divs, sqrts, compares}.

// ---- Pendulum<double>, HamiltonDirac, ExplicitRk<Rk4Tableau> ----------------------------
// One right-hand side: v = M^-1 p (2 mul); |q|^2 (2 mul, 1 add) and the Gram factor
// m / |q|^2 (the one division); psi (3 mul, 1 add) and nu (1 mul); {psi, H} (4 mul, 2 add)
// and lambda (1 mul); q' = M^-1 (p - J^T nu) (4 mul, 2 sub); p' (4 mul, 3 add).
inline constexpr FlopCount pendulum_dirac_rhs{9, 21, 0, 1, 0, 0};
inline constexpr FlopCount pendulum_dirac_rhs_as_written{10, 21, 0, 1, 0, 0};
// One RK4 step without its finiteness check: 4 right-hand sides, 3 stage inputs and the
// 4-term update (7 axpys over the 4 components: 28 add, 28 mul) and the coefficient products
// h/2, h/3, h/6 (7 as written: h/2, h/3, h/6 twice each, h * 1).
inline constexpr FlopCount pendulum_dirac_rk4_step{64, 115, 0, 4, 0, 0};
inline constexpr FlopCount pendulum_dirac_rk4_step_as_written{68, 119, 0, 4, 0, 0};
// StepStatus::finite = all_finite(z_new) (linalg/vec.hpp): x == x && x - x == x - x per
// component, x - x written twice. After a projection the loop checks again; only the
// momenta are new then (2 adds, 4 compares distinct).
inline constexpr FlopCount pendulum_finite_check{4, 0, 0, 0, 0, 8};
inline constexpr FlopCount pendulum_finite_check_as_written{8, 0, 0, 0, 0, 8};
// The projection trigger max|psi(z_new)| > tol (projections/policy.hpp): psi = (x px + y py)(1/m).
inline constexpr FlopCount pendulum_psi_check{1, 3, 0, 0, 0, 2};
inline constexpr FlopCount pendulum_psi_check_as_written{1, 3, 0, 0, 0, 2};
// What a firing momentum projection adds (projections/momentum.hpp, 002 eq. 68):
// m / |q|^2 (2 mul, 1 add, 1 div), lambda (1 mul), p - lambda q (2 mul, 2 sub); distinct
// reuses the check's psi, as written recomputes it (and subtracts the target 0).
inline constexpr FlopCount pendulum_momentum_projection{3, 5, 0, 1, 0, 0};
inline constexpr FlopCount pendulum_momentum_projection_as_written{5, 8, 0, 1, 0, 0};
// One step of the kernel loop with the projection enabled and not firing:
// 183 + 4 + 4 = 191 flops (203 as written); 187 without the trigger (projection off).
inline constexpr FlopCount pendulum_dirac_rk4_instance_step =
    pendulum_dirac_rk4_step + pendulum_finite_check + pendulum_psi_check;
inline constexpr FlopCount pendulum_dirac_rk4_instance_step_as_written =
    pendulum_dirac_rk4_step_as_written + pendulum_finite_check_as_written + pendulum_psi_check_as_written;
// Loop-invariant operations of that step (1/m, m g, 1/m^2), hoisted by the compiler.
inline constexpr FlopCount pendulum_dirac_rk4_instance_step_invariant{0, 2, 0, 1, 0, 0};

static_assert(pendulum_dirac_rhs.total() == 31, "");
static_assert(pendulum_dirac_rk4_step.total() == 183, "");
static_assert(pendulum_dirac_rk4_instance_step.total() == 191, "");
static_assert(pendulum_dirac_rk4_instance_step_as_written.total() == 203, "");

// ---- Chain<double, 7>, HamiltonDirac, ExplicitRk<Rk4Tableau> ----------------------------
// One right-hand side: the Lennard-Jones gradient, 21 pairs of (8 adds, 9 muls, 1 division
// s = 1 / r^2) = 168 adds, 189 muls, 21 divs, O(N^2); the constraint part (psi, the
// tridiagonal Gram factorisation with one division 1/d_a per pivot, three solves, S nu,
// {psi, H}, J^T, Hess phi) = 251 adds, 240 muls, 6 divs, O(N) (002 §7).
inline constexpr FlopCount chain7_dirac_rhs{419, 429, 0, 27, 0, 0};
inline constexpr FlopCount chain7_dirac_rhs_as_written{532, 528, 0, 27, 0, 0};
// One RK4 step: 4 right-hand sides, 7 axpys over the 28 components (196 add, 196 mul) and
// the 3 (7 as written) coefficient products.
inline constexpr FlopCount chain7_dirac_rk4_step{1872, 1915, 0, 108, 0, 0};
inline constexpr FlopCount chain7_dirac_rk4_step_as_written{2324, 2315, 0, 108, 0, 0};
// all_finite of the 28 components (after a projection: of the 14 momenta, 14 adds, 28 compares).
inline constexpr FlopCount chain7_finite_check{28, 0, 0, 0, 0, 56};
inline constexpr FlopCount chain7_finite_check_as_written{56, 0, 0, 0, 0, 56};
// max_a |psi_a| > tol: psi = J M^-1 p (14 mul; 6 bonds x (4 sub, 2 mul, 1 add)).
inline constexpr FlopCount chain7_psi_check{30, 26, 0, 0, 0, 12};
inline constexpr FlopCount chain7_psi_check_as_written{30, 26, 0, 0, 0, 12};
// What a firing momentum projection adds: the Gram factorisation (6 divisions) and one
// solve, p - J^T lambda; distinct reuses psi and the bond vectors of the check.
inline constexpr FlopCount chain7_momentum_projection{64, 71, 0, 6, 0, 0};
inline constexpr FlopCount chain7_momentum_projection_as_written{141, 112, 0, 6, 0, 0};
// One step of the kernel loop, projection enabled and not firing: 3895 + 28 + 56 = 3979
// flops (4859 as written); a firing projection adds 141 + 14 (finite check of the momenta).
inline constexpr FlopCount chain7_dirac_rk4_instance_step = chain7_dirac_rk4_step + chain7_finite_check + chain7_psi_check;
inline constexpr FlopCount chain7_dirac_rk4_instance_step_as_written =
    chain7_dirac_rk4_step_as_written + chain7_finite_check_as_written + chain7_psi_check_as_written;
// Loop-invariant: w_a + w_{a+1} (6 adds) and 12 eps.
inline constexpr FlopCount chain7_dirac_rk4_instance_step_invariant{6, 1, 0, 0, 0, 0};

static_assert(chain7_dirac_rhs.total() == 875, "");
static_assert(chain7_dirac_rk4_step.total() == 3895, "");
static_assert(chain7_dirac_rk4_instance_step.total() == 3979, "");
static_assert(chain7_dirac_rk4_instance_step_as_written.total() == 4859, "");

// ---- Chain<double, N> of any size: Hamilton-Dirac + RK4 (issue 20) ----------------------
// Distinct operations, as above, of the one-thread code (ChainSlice with G = 1; the lean loop
// of ensemble/chain_group_steps.hpp, whose finiteness test is integer work), with
// P = N (N - 1) / 2 Lennard-Jones pairs: per right-hand side P pairs of (8 adds, 9 muls,
// 1 division), O(N^2), and the constraint part (43 N - 50 adds, 42 N - 54 muls, N - 1
// divisions), O(N) (002 §7); RK4 adds 7 axpys over the 4N components and 3 coefficient
// products; the projection check psi = J M^-1 p (5N - 5 adds, 4N - 2 muls, N - 1
// comparisons: the lean loop's any_exceeds, one per bond). tests/test_flop_counts.cpp counts N = 7, 16, 32, 64 and asserts these.
// A thread group (G >= 2 lanes) evaluates each pair on both of its atoms' lanes instead of
// once (no writes to another lane's atoms): 4 adds, 9 muls and 1 division more per pair and
// right-hand side, executed but not counted as work here; the rates quoted for the group
// kernels are of the work above.
constexpr int chain_pairs(int n) { return n * (n - 1) / 2; }
constexpr FlopCount chain_dirac_rhs(int n) {
  return FlopCount{8 * chain_pairs(n) + 43 * n - 50, 9 * chain_pairs(n) + 42 * n - 54, 0, chain_pairs(n) + n - 1, 0, 0};
}
constexpr FlopCount chain_dirac_rk4_step(int n) {
  return 4 * chain_dirac_rhs(n) + FlopCount{28 * n, 28 * n + 3, 0, 0, 0, 0};
}
constexpr FlopCount chain_psi_check(int n) { return FlopCount{5 * n - 5, 4 * n - 2, 0, 0, 0, n - 1}; }
// One step of the lean loop, projection checked and not firing (finiteness: integer work).
constexpr FlopCount chain_dirac_rk4_lean_step(int n) { return chain_dirac_rk4_step(n) + chain_psi_check(n); }
// What the group kernels execute beyond it per step: the second side of every pair, 4 times.
constexpr FlopCount chain_group_redundant_pairs(int n) {
  return 4 * FlopCount{4 * chain_pairs(n), 9 * chain_pairs(n), 0, chain_pairs(n), 0, 0};
}

static_assert(chain_dirac_rhs(7) == chain7_dirac_rhs, "the formula reproduces the counted N = 7");
static_assert(chain_dirac_rk4_step(7) == chain7_dirac_rk4_step, "");
static_assert(chain_psi_check(7).total() == chain7_psi_check.total(),
              "the same flops (the lean check compares once per bond)");
static_assert(chain_dirac_rk4_lean_step(16).total() == 14760, "");
static_assert(chain_dirac_rk4_lean_step(64).total() == 170904, "");

}  // namespace chens::bench
