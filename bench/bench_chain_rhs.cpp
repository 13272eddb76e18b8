// Cost of one right-hand-side evaluation of the planar chain molecule (docs/performance.md,
// "Chain molecule: cost of one right-hand side vs N"), split into its parts.
//
// Model: chens::Chain<double, N>::uniform(1.0, 0.1) (unit masses, bond length 1,
// Lennard-Jones eps = 0.1), N = 7, 8, 16, 32, 64, 128, 256 atoms. State: the model's
// default_initial data (the hexagon of 002 Fig. 3 for N = 7, a zig-zag otherwise), every
// component moved by 1e-3 * u, u uniform in [-1, 1) from a fixed-seed generator, so that
// no coordinate or momentum is exactly 0 or equal to another (the constraints are then
// violated by ~1e-3, which changes no operation count).
//
//   BM_DiracRhs<N>             HamiltonDirac<Chain>::rhs(z, dz): the whole Dirac rhs.
//   BM_NaiveRhs<N>             Naive<Chain>::rhs(z, dz): the whole naive rhs.
//   BM_LennardJonesGradient<N> model.grad_potential(q) alone: the O(N^2) part.
//   BM_DiracConstraintPart<N>  the Dirac rhs with the Lennard-Jones gradient precomputed:
//                              psi, gram(q) factorisation, three tridiagonal solves, s_mul,
//                              psi_h_bracket(z, gradV), jac_t_mul (twice), hess_phi_mul,
//                              minv_mul: the O(N) part. The rhs of hamilton_dirac.hpp is
//                              replicated below (dirac_rhs_given_gradient) for this split;
//                              main() checks that, fed grad_potential(q), it gives the
//                              library's rhs bit for bit, and exits with status 1 otherwise.
//   BM_GramFactorSolve<N>      model.gram(q) (tridiagonal factorisation) + one solve.
//
// Each reports the time of one call (CPU time per iteration, ns) and items_per_second =
// calls per second. Nothing is hoisted out of the timing loop: the inputs are passed through
// benchmark::DoNotOptimize (an asm barrier with a "+m" operand and a memory clobber) at the
// start of every iteration, so the compiler must assume they changed and recompute; the
// outputs go through DoNotOptimize after every call, so they must be computed. The model
// is laundered once before the loop, so that, as in `chens run`, the masses, bond length
// and eps are run-time values (the unit masses cannot be folded away).
//
// The scaling exponents (log t vs log N, N = 32..256) are fitted by bench/fit_chain_scaling.py
// from this binary's --benchmark_format=json output.
//
// --one-pass=<benchmark name without <N>> --n=<N> [--calls=K] makes K untimed calls of one
// kernel and exits (for valgrind --tool=callgrind instruction counts, which this shared
// machine cannot disturb; see docs/performance.md). --one-pass=none: set-up only.

#include <benchmark/benchmark.h>

#include "bench_args.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <chens/formulations/hamilton_dirac.hpp>
#include <chens/formulations/naive.hpp>
#include <chens/models/chain.hpp>

namespace {

template <int N>
using Model = chens::Chain<double, N>;

constexpr double kPerturbation = 1e-3;
constexpr std::uint64_t kSeed = 1;

// splitmix64: a fixed, portable sequence (the values only need to be generic).
std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
double uniform_pm1(std::uint64_t& s) { return 2.0 * static_cast<double>(splitmix64(s) >> 11) * 0x1p-53 - 1.0; }

template <int N>
struct Setup {
  Model<N> model = Model<N>::uniform(1.0, 0.1);
  typename Model<N>::State z;
  Setup() {
    z = Model<N>::default_initial(model);
    std::uint64_t s = kSeed * 1000003u + static_cast<std::uint64_t>(N);
    for (int i = 0; i < Model<N>::state_size; ++i) z[i] = z[i] + kPerturbation * uniform_pm1(s);
  }
};

template <int N>
const Setup<N>& setup() {
  static const Setup<N> s;
  return s;
}

// HamiltonDirac<Model>::rhs (include/chens/formulations/hamilton_dirac.hpp) replicated line
// for line, with the Lennard-Jones gradient gV passed in instead of computed: everything in
// the Dirac rhs except grad_potential. Keep in step with hamilton_dirac.hpp; main() checks
// that the two agree bit for bit.
template <class M>
CHENS_FORCEINLINE void dirac_rhs_given_gradient(const M& model, const typename M::State& z, const typename M::Coords& gV,
                                                typename M::State& dz) {
  const auto q = M::q_of(z);
  const auto p = M::p_of(z);
  const auto v = model.minv_mul(p);
  const auto Q = model.gram(q);
  const auto nu = Q.solve(model.psi(z));
  const auto lam = Q.solve(model.psi_h_bracket(z, gV));
  typename M::Multipliers rhs_l;
  if constexpr (M::constraints == 1) {
    rhs_l[0] = -lam[0];
  } else {
    rhs_l = Q.solve(model.s_mul(z, nu));
    for (int a = 0; a < M::constraints; ++a) rhs_l[a] = rhs_l[a] - lam[a];
  }
  const auto dq = model.minv_mul(p - model.jac_t_mul(q, nu));
  const auto dp = model.jac_t_mul(q, rhs_l) + model.hess_phi_mul(q, nu, v) - gV;
  dz = M::join(dq, dp);
}

// The five measured calls. Each kernel holds its inputs; operator() launders them (the
// compiler must assume they changed), makes the call and passes the result through
// DoNotOptimize (it must be computed). The model is laundered once, at construction.
enum class Part { dirac, naive, lj, constraint, gram };

template <int N, Part P>
struct Kernel {
  using M = Model<N>;
  M model = setup<N>().model;
  chens::HamiltonDirac<M> dirac{setup<N>().model};
  chens::Naive<M> naive{setup<N>().model};
  typename M::State z = setup<N>().z;
  typename M::Coords q = M::q_of(setup<N>().z);
  typename M::Coords gV = setup<N>().model.grad_potential(M::q_of(setup<N>().z));
  typename M::Multipliers r = setup<N>().model.psi(setup<N>().z);

  Kernel() {
    benchmark::DoNotOptimize(model);
    benchmark::DoNotOptimize(dirac);
    benchmark::DoNotOptimize(naive);
  }

  CHENS_FORCEINLINE void operator()() {
    if constexpr (P == Part::dirac || P == Part::naive) {
      benchmark::DoNotOptimize(z);
      typename M::State dz;
      if constexpr (P == Part::dirac) dirac.rhs(z, dz);
      else naive.rhs(z, dz);
      benchmark::DoNotOptimize(dz);
    } else if constexpr (P == Part::lj) {
      benchmark::DoNotOptimize(q);
      auto g = model.grad_potential(q);
      benchmark::DoNotOptimize(g);
    } else if constexpr (P == Part::constraint) {
      benchmark::DoNotOptimize(z);
      benchmark::DoNotOptimize(gV);
      typename M::State dz;
      dirac_rhs_given_gradient(model, z, gV, dz);
      benchmark::DoNotOptimize(dz);
    } else {
      benchmark::DoNotOptimize(q);
      benchmark::DoNotOptimize(r);
      auto x = model.gram(q).solve(r);
      benchmark::DoNotOptimize(x);
    }
  }
};

template <int N, Part P>
void run(benchmark::State& st) {
  Kernel<N, P> k;
  for (auto _ : st) k();
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));  // items = rhs calls
  st.counters["N"] = benchmark::Counter(N);
}

template <int N>
void BM_DiracRhs(benchmark::State& st) {
  run<N, Part::dirac>(st);
}
template <int N>
void BM_NaiveRhs(benchmark::State& st) {
  run<N, Part::naive>(st);
}
template <int N>
void BM_LennardJonesGradient(benchmark::State& st) {
  run<N, Part::lj>(st);
}
template <int N>
void BM_DiracConstraintPart(benchmark::State& st) {
  run<N, Part::constraint>(st);
}
template <int N>
void BM_GramFactorSolve(benchmark::State& st) {
  run<N, Part::gram>(st);
}

// --one-pass=<benchmark> --n=<N> --calls=<K>: K untimed calls of one kernel, then exit
// (for valgrind --tool=callgrind instruction counts; see docs/performance.md).
template <int N, Part P>
void calls(long long k) {
  Kernel<N, P> kernel;
  for (long long i = 0; i < k; ++i) kernel();
}

template <int N>
bool one_pass_n(const std::string& name, long long k) {
  if (name == "BM_DiracRhs") calls<N, Part::dirac>(k);
  else if (name == "BM_NaiveRhs") calls<N, Part::naive>(k);
  else if (name == "BM_LennardJonesGradient") calls<N, Part::lj>(k);
  else if (name == "BM_DiracConstraintPart") calls<N, Part::constraint>(k);
  else if (name == "BM_GramFactorSolve") calls<N, Part::gram>(k);
  else if (name != "none") return false;  // "none": set-up only
  return true;
}

using chens::bench::arg_value;

int one_pass(const std::string& name, int argc, char** argv) {
  const long long n = arg_value(argc, argv, "--n", 7), k = arg_value(argc, argv, "--calls", 1000);
  bool ok = false;
  switch (n) {
    case 7: ok = one_pass_n<7>(name, k); break;
    case 8: ok = one_pass_n<8>(name, k); break;
    case 16: ok = one_pass_n<16>(name, k); break;
    case 32: ok = one_pass_n<32>(name, k); break;
    case 64: ok = one_pass_n<64>(name, k); break;
    case 128: ok = one_pass_n<128>(name, k); break;
    case 256: ok = one_pass_n<256>(name, k); break;
    default: break;
  }
  if (!ok) {
    std::fprintf(stderr, "unknown --one-pass=%s or --n=%lld (N = 7, 8, 16, 32, 64, 128, 256)\n", name.c_str(), n);
    return 2;
  }
  std::printf("%s<%lld>: %lld calls\n", name.c_str(), n, k);
  return 0;
}

// The split is only meaningful if the replicated rhs is the library's: compare bit for bit.
template <int N>
bool check_split() {
  const Setup<N>& s = setup<N>();
  const chens::HamiltonDirac<Model<N>> sys{s.model};
  typename Model<N>::State a, b;
  sys.rhs(s.z, a);
  dirac_rhs_given_gradient(s.model, s.z, s.model.grad_potential(Model<N>::q_of(s.z)), b);
  const bool ok = std::memcmp(&a, &b, sizeof a) == 0;
  if (!ok) std::fprintf(stderr, "N = %d: the replicated Dirac rhs differs from HamiltonDirac::rhs\n", N);
  return ok;
}

}  // namespace

#define CHENS_CHAIN_BENCH(n)                                                    \
  BENCHMARK_TEMPLATE(BM_DiracRhs, n)->Unit(benchmark::kNanosecond);             \
  BENCHMARK_TEMPLATE(BM_NaiveRhs, n)->Unit(benchmark::kNanosecond);             \
  BENCHMARK_TEMPLATE(BM_LennardJonesGradient, n)->Unit(benchmark::kNanosecond); \
  BENCHMARK_TEMPLATE(BM_DiracConstraintPart, n)->Unit(benchmark::kNanosecond);  \
  BENCHMARK_TEMPLATE(BM_GramFactorSolve, n)->Unit(benchmark::kNanosecond)

CHENS_CHAIN_BENCH(7);
CHENS_CHAIN_BENCH(8);
CHENS_CHAIN_BENCH(16);
CHENS_CHAIN_BENCH(32);
CHENS_CHAIN_BENCH(64);
CHENS_CHAIN_BENCH(128);
CHENS_CHAIN_BENCH(256);

int main(int argc, char** argv) {
  for (int a = 1; a < argc; ++a)
    if (std::strncmp(argv[a], "--one-pass=", 11) == 0) return one_pass(argv[a] + 11, argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const bool ok = check_split<7>() & check_split<8>() & check_split<16>() & check_split<32>() & check_split<64>() &
                  check_split<128>() & check_split<256>();
  if (!ok) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
