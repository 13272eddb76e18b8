// Chains on thread groups on the device (kernels/chain_group.cu; issue 20) against the CPU
// running the same per-instance code in one thread (ensemble/chain_group_steps.hpp,
// SerialGroup): for every size with group kernels, an ensemble of perturbed chains with
// non-uniform masses, Hamilton-Dirac + RK4 with the tolerance-triggered momentum projection.
//   - the -fmad=false kernels: final states, steps, projection counts and losses equal bit
//     for bit (the sliced arithmetic is the one-thread arithmetic, tests/test_chain_slice.cpp;
//     without fused multiply-adds the GPU rounds as the CPU does);
//   - the fast kernels (nvcc's fused multiply-adds): states within a bound derived from the
//     run itself. A fused multiply-add changes a result by at most one rounding (u = 2^-53
//     relative), so the fast run is the exact one with perturbations of a few u injected at
//     every step. The CPU measures how far a perturbation of relative size u in every
//     component of the initial state carries over the run (D = the largest resulting
//     difference); the bound allows 64 such perturbations (the right-hand side's longest
//     chain of dependent operations on one component is ~60 for N <= 64) at each step:
//     64 * steps * D. Projection counts may then differ only where max|psi| sits within
//     rounding of the tolerance: they must agree for at least 99 % of the instances.
// Skipped, with the reason, without a usable CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <chens/ensemble/chain_group_steps.hpp>

#include "backends/cuda_backend.hpp"
#include "chain_group.hpp"

namespace chens {
namespace {

constexpr std::uint64_t kSeed = 20261127;

class ChainGroupGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const CudaDeviceInfo dev = cuda_device_info();
    if (!dev.available) GTEST_SKIP() << "skipped: " << dev.description;
  }
};

struct Ensemble {
  std::vector<double> w, z;
  double L = 1.0, eps = 0.1;
};

// count instances of the default initial data (zig-zag, end atoms moving), positions
// perturbed by up to 1e-3 L and momenta by up to 1e-2 (off the constraint manifold by that
// much: the first steps' projections fire), non-uniform masses in [0.3, 3].
template <int N>
Ensemble ensemble(std::int64_t count, std::mt19937_64& rng) {
  Ensemble e;
  std::uniform_real_distribution<double> mass(0.3, 3.0), unit(-1.0, 1.0);
  Chain<double, N> c = Chain<double, N>::uniform(e.L, e.eps);
  for (int i = 0; i < N; ++i) c.w[i] = 1.0 / mass(rng);
  e.w.assign(c.w.v, c.w.v + N);
  const auto z0 = Chain<double, N>::default_initial(c, 0.25);
  e.z.resize(static_cast<std::size_t>(count) * 4 * N);
  for (std::int64_t n = 0; n < count; ++n) {
    for (int i = 0; i < 4 * N; ++i) {
      e.z[static_cast<std::size_t>(n * 4 * N + i)] = z0[i] + (i < 2 * N ? 1e-3 * e.L : 1e-2) * unit(rng);
    }
  }
  return e;
}

struct CpuRun {
  std::vector<double> z;
  std::vector<std::uint32_t> steps, projections;
  std::vector<std::uint8_t> lost;
};

template <int N>
CpuRun cpu_run(const Ensemble& e, std::int64_t count, int steps, double h, double tol) {
  Chain<double, N> c = Chain<double, N>::uniform(e.L, e.eps);
  for (int i = 0; i < N; ++i) c.w[i] = e.w[static_cast<std::size_t>(i)];
  CpuRun r;
  r.z = e.z;
  r.steps.resize(static_cast<std::size_t>(count));
  r.projections.resize(r.steps.size());
  r.lost.resize(r.steps.size());
  chain_group_advance_cpu(c, r.z.data(), count, steps, h, tol, r.steps.data(), r.projections.data(), r.lost.data());
  return r;
}

template <int N>
void expect_gpu_matches_cpu() {
  const std::int64_t count = 2001;  // not a multiple of a block's instances (4, 8 or 16): idle tiles at the end
  const int steps = 400;
  const double h = 2e-3, tol = 1e-10;
  std::mt19937_64 rng(kSeed + N);
  SCOPED_TRACE(::testing::Message() << "N = " << N << ", seed " << kSeed + N);
  const Ensemble e = ensemble<N>(count, rng);
  const CpuRun cpu = cpu_run<N>(e, count, steps, h, tol);
  std::uint64_t fired = 0;
  for (auto p : cpu.projections) fired += p;
  EXPECT_GT(fired, 0u) << "the projection never fired: the comparison would not cover it";

  // Exact kernels: bit for bit.
  std::vector<double> z = e.z;
  ChainGroupLaunch exact;
  ASSERT_EQ(chain_group_dirac_rk4_gpu(N, e.w.data(), e.L, e.eps, z.data(), count, steps, h, tol, true, exact), "");
  EXPECT_EQ(exact.lanes, chain_group_lanes(N));
  EXPECT_EQ(std::memcmp(z.data(), cpu.z.data(), z.size() * sizeof(double)), 0) << "final states (-fmad=false)";
  EXPECT_EQ(exact.steps, cpu.steps);
  EXPECT_EQ(exact.projections, cpu.projections);
  EXPECT_EQ(exact.lost, cpu.lost);

  // Fast kernels: within 64 * steps * D, D the run's response to a perturbation of u.
  Ensemble nudged = e;
  const double u = std::ldexp(1.0, -53);
  for (double& x : nudged.z) x = x * (1.0 + u);
  const CpuRun ref2 = cpu_run<N>(nudged, count, steps, h, tol);
  double D = 0;
  for (std::size_t i = 0; i < z.size(); ++i) D = std::max(D, std::fabs(ref2.z[i] - cpu.z[i]));
  std::vector<double> zf = e.z;
  ChainGroupLaunch fast;
  ASSERT_EQ(chain_group_dirac_rk4_gpu(N, e.w.data(), e.L, e.eps, zf.data(), count, steps, h, tol, false, fast), "");
  double worst = 0;
  for (std::size_t i = 0; i < zf.size(); ++i) worst = std::max(worst, std::fabs(zf[i] - cpu.z[i]));
  EXPECT_LE(worst, 64.0 * steps * std::max(D, u)) << "fast kernels vs CPU; D = " << D;
  std::int64_t same = 0;
  for (std::size_t n = 0; n < fast.projections.size(); ++n) same += fast.projections[n] == cpu.projections[n];
  EXPECT_GE(same, count * 99 / 100) << "instances whose projection count differs from the CPU's";
  EXPECT_EQ(fast.lost, cpu.lost);
}

TEST_F(ChainGroupGpu, EverySizeEqualsTheCpuBitwiseWithoutFmaAndWithinRoundingWithIt) {
  for (int n : chain_group_sizes()) {
    switch (n) {
      case 16: expect_gpu_matches_cpu<16>(); break;
      case 32: expect_gpu_matches_cpu<32>(); break;
      case 64: expect_gpu_matches_cpu<64>(); break;
      case 128: expect_gpu_matches_cpu<128>(); break;
      case 256: expect_gpu_matches_cpu<256>(); break;
      default: ADD_FAILURE() << "a group size this test does not instantiate: " << n; break;
    }
  }
}

}  // namespace
}  // namespace chens
