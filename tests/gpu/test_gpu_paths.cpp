// The GPU backend's fast paths against its general ones, on the device (skipped, with the
// reason, where no CUDA device is usable):
//   - the device statistics (kernels/device_statistics.cuh): block accumulators and the
//     block tree on the device equal the host's accumulation and tree_merge bit for bit;
//   - the lean step kernel (ensemble/lean_steps.hpp) against the general kernel, and the
//     unit pendulum (m = l = g = 1 at compile time) against the general model: the same
//     states, counters, lost instances and statistics. Bit for bit where the formula fixes
//     its fused multiply-adds (Hamilton-Dirac pendulum, hamilton_dirac.hpp; every RK stage,
//     vec.hpp's axpy); elsewhere ptxas may fuse differently in the two kernels, so there
//     the states agree to rounding (as CPU and GPU do) and the difference is printed.
#include <gtest/gtest.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/accumulator.hpp>
#include <chens/ensemble/quantiles.hpp>

#include "backends/block_tree.hpp"
#include "backends/cuda_backend.hpp"
#include "device_statistics.cuh"
#include "dispatch/run_study.hpp"
#include "study/study.hpp"
#include "support/random_states.hpp"

namespace chens {
namespace {

class GpuPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    const CudaDeviceInfo dev = cuda_device_info();
    if (!dev.available) GTEST_SKIP() << "skipped: " << dev.description;
  }
};

template <class T>
struct Dev {
  T* p = nullptr;
  explicit Dev(std::size_t n) { EXPECT_EQ(cudaMalloc(&p, std::max<std::size_t>(1, n) * sizeof(T)), cudaSuccess); }
  ~Dev() { cudaFree(p); }
};

bool same_bits(const Accumulator& a, const Accumulator& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Metrics spread over many octaves (as errors are), some instances not measured.
TEST_F(GpuPaths, DeviceStatisticsEqualTheHostsBitForBit) {
  const std::uint64_t seed = test::default_seed + 90;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> expo(-30, 2), u(0, 1);
  for (const std::uint64_t n : {1ull, 63ull, 64ull, 65ull, 32768ull, 32769ull, 2000003ull}) {
    const std::int64_t rows = n > 100000 ? 1 : 3;
    const std::int64_t blocks = static_cast<std::int64_t>((n + cpu_block_size - 1) / cpu_block_size);
    std::vector<double> metrics(static_cast<std::size_t>(rows) * metric_count * n);
    std::vector<unsigned char> valid(static_cast<std::size_t>(rows) * n);
    for (auto& v : metrics) v = std::pow(10.0, expo(rng));
    // A signed metric (the Lyapunov exponent, quantiles.hpp's SignedLogBins) takes either sign and zero.
    for (std::int64_t row = 0; row < rows; ++row)
      for (int m = 0; m < metric_count; ++m)
        if (metric_signed(m))
          for (std::uint64_t i = 0; i < n; ++i) {
            double& v = metrics[(static_cast<std::size_t>(row) * metric_count + static_cast<std::size_t>(m)) * n + i];
            const double r = u(rng);
            v = r < 0.05 ? 0.0 : r < 0.5 ? -v : v;
          }
    for (auto& v : valid) v = u(rng) < 0.97 ? 1 : 0;
    Dev<double> d_metrics(metrics.size());
    Dev<unsigned char> d_valid(valid.size());
    Dev<Accumulator> d_leaves(static_cast<std::size_t>(rows * blocks) * metric_count);
    Dev<Accumulator> d_scratch(cuda::tree_scratch_count(rows, blocks));
    Dev<Accumulator> d_roots(static_cast<std::size_t>(rows) * metric_count);
    Dev<std::uint32_t> d_hist(static_cast<std::size_t>(rows) * metric_count * LogBins::count);
    ASSERT_EQ(cudaMemcpy(d_metrics.p, metrics.data(), metrics.size() * sizeof(double), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d_valid.p, valid.data(), valid.size(), cudaMemcpyHostToDevice), cudaSuccess);
    cuda::launch_block_leaves(d_metrics.p, d_valid.p, n, rows, blocks, d_leaves.p, nullptr);
    cuda::launch_block_tree(d_leaves.p, rows, blocks, d_scratch.p, d_roots.p, nullptr);
    cuda::launch_histograms(d_metrics.p, d_valid.p, n, rows, d_hist.p, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<Accumulator> leaves(static_cast<std::size_t>(rows * blocks) * metric_count), roots(rows * metric_count);
    std::vector<std::uint32_t> hist(static_cast<std::size_t>(rows) * metric_count * LogBins::count);
    ASSERT_EQ(cudaMemcpy(leaves.data(), d_leaves.p, leaves.size() * sizeof(Accumulator), cudaMemcpyDeviceToHost),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpy(roots.data(), d_roots.p, roots.size() * sizeof(Accumulator), cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(hist.data(), d_hist.p, hist.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost), cudaSuccess);
    for (std::int64_t row = 0; row < rows; ++row) {
      std::vector<Accumulator> host_leaves(static_cast<std::size_t>(blocks) * metric_count);
      std::vector<std::uint32_t> host_hist(static_cast<std::size_t>(metric_count) * LogBins::count, 0);
      for (std::uint64_t i = 0; i < n; ++i) {
        if (!valid[static_cast<std::size_t>(row) * n + i]) continue;
        for (int m = 0; m < metric_count; ++m) {
          const double v = metrics[(static_cast<std::size_t>(row) * metric_count + m) * n + i];
          host_leaves[(i / cpu_block_size) * metric_count + static_cast<std::size_t>(m)].add(v);
          host_hist[static_cast<std::size_t>(m) * LogBins::count +
                    static_cast<std::size_t>(histogram_bin(metric_signed(m), v))] += 1;
        }
      }
      for (std::size_t j = 0; j < host_leaves.size(); ++j)
        ASSERT_TRUE(same_bits(host_leaves[j], leaves[static_cast<std::size_t>(row * blocks) * metric_count + j]))
            << "n = " << n << ", row " << row << ", leaf " << j;
      Accumulator root[metric_count];
      tree_merge(host_leaves.data(), static_cast<std::uint64_t>(blocks), root);
      for (int m = 0; m < metric_count; ++m)
        ASSERT_TRUE(same_bits(root[m], roots[static_cast<std::size_t>(row) * metric_count + static_cast<std::size_t>(m)]))
            << "n = " << n << ", row " << row << ", metric " << m;
      ASSERT_EQ(0, std::memcmp(host_hist.data(), hist.data() + static_cast<std::size_t>(row) * host_hist.size(),
                               host_hist.size() * sizeof(std::uint32_t)))
          << "n = " << n << ", row " << row;
    }
  }
}

struct Paths {
  EnsembleResult fast, general;
};

// The study twice: fast paths allowed, and the general kernel alone (gpu_lean = gpu_unit = false).
Paths both_paths(const Study& s, bool unit_only = false) {
  const RunParams<double> rp = resolve(s);
  EnsembleSpec spec = ensemble_spec(s);
  spec.keep_instances = spec.size;
  EnsembleSpec general = spec;
  if (unit_only) {
    general.gpu_unit = false;  // the lean kernel with the general model
  } else {
    general.gpu_lean = general.gpu_unit = false;
  }
  return {run_study_cuda(s, rp, spec), run_study_cuda(s, rp, general)};
}

// Largest relative difference of the final states; counters and lost flags must agree.
double compare(const Paths& p, int S, const std::string& what) {
  const PerInstanceResult& a = p.fast.kept;
  const PerInstanceResult& b = p.general.kept;
  double worst = 0;
  for (std::size_t i = 0; i < a.lost.size(); ++i) {
    EXPECT_EQ(a.lost[i], b.lost[i]) << what << ": instance " << i;
    EXPECT_EQ(0, std::memcmp(&a.counters[i], &b.counters[i], sizeof(Counters))) << what << ": counters of instance " << i;
    for (int c = 0; c < S; ++c) {
      const double x = a.final_state[i * static_cast<std::size_t>(S) + static_cast<std::size_t>(c)];
      const double y = b.final_state[i * static_cast<std::size_t>(S) + static_cast<std::size_t>(c)];
      worst = std::max(worst, std::abs(x - y) / (1 + std::abs(x)));
    }
  }
  EXPECT_EQ(0, std::memcmp(&p.fast.totals, &p.general.totals, sizeof(Counters))) << what;
  std::printf("[ compare  ] %s: fast vs general path, largest relative state difference %.3g\n", what.c_str(), worst);
  return worst;
}

bool same_statistics(const Paths& p) {
  for (std::size_t k = 0; k < p.fast.series.size(); ++k)
    for (int m = 0; m < metric_count; ++m)
      if (!same_bits(p.fast.series[k].metric[m], p.general.series[k].metric[m])) return false;
  return true;
}

Study pendulum(FormulationId f, MethodId m) {
  Study s;
  s.formulation = f;
  s.method = m;
  s.h = m == MethodId::euler ? 0.002 : 0.02;
  s.t_end = 7.3;  // a short last step
  s.sample_dt = 0.5;
  s.size = 5000;
  s.perturbation = 1e-3;
  s.momentum = f != FormulationId::impetus && f != FormulationId::impetus_modified;
  s.projection_tol = 1e-9;  // fires now and then
  return s;
}

TEST_F(GpuPaths, LeanKernelIsTheGeneralKernel) {
  for (const MethodId m : {MethodId::euler, MethodId::rk2, MethodId::rk4}) {
    for (const FormulationId f : {FormulationId::naive, FormulationId::total, FormulationId::extended, FormulationId::dirac,
                                  FormulationId::impetus, FormulationId::impetus_modified, FormulationId::baumgarte}) {
      const std::string what = std::string(formulation_name(f)) + " + " + method_name(m);
      Study s = pendulum(f, m);
      s.mass = 1.7;  // general parameters: the lean kernel with the general model
      s.gravity = 9.81;
      const Paths p = both_paths(s);
      EXPECT_GT(p.fast.totals.steps, 0u);
      const double worst = compare(p, 4, what);
      if (f == FormulationId::dirac) {
        EXPECT_EQ(worst, 0.0) << what << ": the fused multiply-adds are written out; the paths must agree bit for bit";
        EXPECT_TRUE(same_statistics(p)) << what;
      } else {
        EXPECT_LT(worst, 1e-11) << what;
      }
    }
  }
}

// m = l = g = 1: the unit model in the lean kernel, bit for bit the general model's, in
// double and float, with projections firing.
TEST_F(GpuPaths, UnitPendulumIsTheGeneralPendulum) {
  for (const Precision p : {Precision::double_precision, Precision::single_precision}) {
    const char* precision = precision_name(p);
    Study s = pendulum(FormulationId::dirac, MethodId::rk4);
    s.precision = p;
    // RK4 keeps |psi| under 1e-9 (double) and 1e-5 (float) here: tolerances near rounding,
    // so that the projection fires.
    s.projection_tol = p == Precision::single_precision ? 1e-7 : 1e-12;
    const Paths unit = both_paths(s, true);
    EXPECT_EQ(compare(unit, 4, std::string("unit vs general model, ") + precision), 0.0);
    EXPECT_TRUE(same_statistics(unit)) << precision;
    EXPECT_GT(unit.fast.totals.momentum_projections, 0u) << precision << ": the projection should fire";
    const Paths all = both_paths(s);
    EXPECT_EQ(compare(all, 4, std::string("unit lean vs general kernel, ") + precision), 0.0);
    EXPECT_TRUE(same_statistics(all)) << precision;
  }
}

// A diverging ensemble: instances lost at the same step with the same reasons on both paths.
TEST_F(GpuPaths, LostInstancesAreLostAlike) {
  Study s;
  s.formulation = FormulationId::naive;
  s.method = MethodId::euler;
  s.h = 1.5;  // Euler multiplies the energy by about 1 + h^2 w^2 per step: Inf, then NaN
  s.t_end = 1500.0;
  s.sample_dt = 150.0;
  s.size = 3000;
  s.perturbation = 0.3;
  const Paths p = both_paths(s);
  EXPECT_GT(p.general.lost_total(), 0u) << "the study should lose instances";
  for (int r = 0; r < lost_reason_count; ++r) EXPECT_EQ(p.fast.lost[r], p.general.lost[r]) << lost_reason_name(r);
  EXPECT_EQ(p.fast.lost_examples, p.general.lost_examples);
  compare(p, 4, "naive + euler, diverging");
}

// The chain: the lean kernel inlines the right-hand side, where ptxas fuses its own way;
// the states agree to rounding over this horizon, the counters exactly.
TEST_F(GpuPaths, ChainLeanKernelAgreesWithTheGeneralKernel) {
  Study s;
  s.model_kind = ModelKind::chain;
  set_key(s, "model.atoms=" + std::to_string(cuda_chain_sizes().front()));
  s.h = 0.02;
  s.t_end = 2.0;
  s.sample_dt = 0.5;
  s.size = 700;
  s.perturbation = 1e-3;
  s.momentum = true;
  s.projection_tol = 1e-6;
  s.reference = "none";
  const Paths p = both_paths(s);
  EXPECT_LT(compare(p, 4 * model_key(s).atoms, "chain dirac + rk4"), 1e-10);
}

}  // namespace
}  // namespace chens
