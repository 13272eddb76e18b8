// The CUDA ensemble backend: the same per-instance driver as the CPU backend
// (include/chens/ensemble/instance.hpp), one thread per instance, with the ensemble
// statistics reduced on the device. The run is cut into segments of sample times
// (segment_rows, host/backends/ensemble_spec.hpp), as on the CPU: per segment one launch
// advances every instance through the segment's samples, keeping its state in the thread,
// and writes each sample's metrics (structure of arrays); a second launch reduces them into
// the accumulators of fixed blocks of cpu_block_size instances, each block accumulated
// sequentially in instance order by one thread; a third bins them into the quantile
// histograms (quantiles.hpp; integer counts in shared memory, then global integer
// atomics: exact in any order); the host merges the blocks along the block tree
// (backends/block_tree.hpp). That is the CPU
// backend's reduction order exactly, with no floating-point atomics: statistics are bitwise
// reproducible from run to run, and equal to the CPU's up to the per-instance differences
// that fused multiply-adds cause. Between segments instances live in global memory as a
// structure of arrays of 8-byte words (word w of instance i at w * n + i), so that the
// loads and stores of a warp are coalesced, and a thread holds in registers only what
// stepping needs (ensemble/soa_segment.hpp). Integer counters are summed with atomics.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/accumulator.hpp>
#include <chens/ensemble/instance.hpp>
#include <chens/ensemble/quantiles.hpp>
#include <chens/ensemble/soa_segment.hpp>

#include "backends/checkpoint.hpp"
#include "backends/cuda_backend.hpp"
#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"
#include "backends/instance_records.hpp"
#include "device_buffer.cuh"

namespace chens::cuda {

template <class System, class Reference>
__global__ void init_instances(System sys, RunParams<typename System::Real> rp, ModelStateOf<System> z0,
                               typename System::Real perturbation, std::uint64_t seed, std::uint64_t first,
                               const std::uint64_t* only, std::uint64_t n, std::uint64_t* inst) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const InstanceOf<System, Reference> in =
      make_instance<System, Reference>(sys, z0, perturbation, seed, only ? only[i] : first + i, rp);  // global index
  soa_store(inst, n, i, in, 0, soa_words<InstanceOf<System, Reference>>);
}

// Samples k0 .. k1-1 of every instance (advance_segment_soa, ensemble/soa_segment.hpp);
// metrics[(k - k0) * metric_count + m][i] (structure of arrays: consecutive instances are
// adjacent), valid[(k - k0) * n + i] = measured. The recorded
// instances (record, ascending, R of them) leave their physical state, reference state and
// metrics at every sample in row (k - k0) * R + slot of `snapshot` (record_row's layout,
// host/backends/instance_records.hpp): what the statistics saw, measured here, not a second
// evaluation on the host that would differ by FMA and libm rounding. The first `keep`
// instances leave their metrics at the last sample in kept_metrics.
template <class System, class Method, class Inst>
__global__ void advance_segment(System sys, Method method, RunParams<typename System::Real> rp, std::uint64_t n,
                                std::uint64_t* inst, index_t k0, index_t k1, double* metrics, unsigned char* valid,
                                std::uint64_t first, const std::uint64_t* only, const std::uint64_t* record,
                                std::uint64_t R, double* snapshot,
                                std::uint64_t keep, double* kept_metrics) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint64_t g = only ? only[i] : first + i;  // global index: record holds global indices
  std::int64_t slot = -1;             // binary search, once per segment
  if (R > 0 && g >= record[0] && g <= record[R - 1]) {
    std::uint64_t lo = 0, hi = R;
    while (lo < hi) {
      const std::uint64_t mid = (lo + hi) / 2;
      if (record[mid] < g) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (record[lo] == g) slot = static_cast<std::int64_t>(lo);
  }
  advance_segment_soa<System, Method, Inst>(
      sys, method, rp, inst, n, i, k0, k1, [&](index_t k, bool ok, const Metrics<double>& m, const Inst& in) {
        const std::uint64_t row = static_cast<std::uint64_t>(k - k0);
        for (int c = 0; c < metric_count; ++c) metrics[(row * metric_count + c) * n + i] = ok ? m.v[c] : 0.0;
        valid[row * n + i] = ok ? 1 : 0;
        if (slot >= 0)
          fill_recorded_row(sys, rp, in, k, ok, m,
                            snapshot + (row * R + static_cast<std::uint64_t>(slot)) * recorded_row_width(physical_state_size_v<System>));
        if (k == rp.samples && i < keep)
          for (int c = 0; c < metric_count; ++c) kept_metrics[i * metric_count + c] = ok ? m.v[c] : 0.0;
      });
}

// One thread per (sample row, block, metric): the block's accumulator, in instance order.
__global__ inline void reduce_blocks(const double* metrics, const unsigned char* valid, std::uint64_t n,
                                     std::int64_t rows, std::int64_t blocks, std::uint64_t block_size,
                                     Accumulator* acc) {
  const std::uint64_t t = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint64_t total = static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(blocks) * metric_count;
  if (t >= total) return;
  const int m = static_cast<int>(t % metric_count);
  const std::uint64_t b = (t / metric_count) % static_cast<std::uint64_t>(blocks);
  const std::uint64_t row = t / metric_count / static_cast<std::uint64_t>(blocks);
  Accumulator a;
  const std::uint64_t lo = b * block_size, hi = lo + block_size < n ? lo + block_size : n;
  for (std::uint64_t i = lo; i < hi; ++i)
    if (valid[row * n + i]) a.add(metrics[(row * metric_count + m) * n + i]);
  acc[t] = a;  // layout ((row * blocks + b) * metric_count + m), as the CPU backend's
}

// Quantile histograms of one segment, hist[(row * metric_count + m) * LogBins::count + bin]:
// block (x, row) bins a grid-strided share of the instances of sample row `row` in shared
// memory, then adds its non-zero counts to the global histograms.
inline constexpr unsigned histogram_threads = 256;
inline constexpr std::size_t histogram_shared_bytes = sizeof(std::uint32_t) * metric_count * LogBins::count;

__global__ inline void histogram_rows(const double* metrics, const unsigned char* valid, std::uint64_t n,
                                      std::uint32_t* hist) {
  extern __shared__ std::uint32_t h[];
  constexpr int cells = metric_count * LogBins::count;
  const std::uint64_t row = blockIdx.y;
  for (int c = threadIdx.x; c < cells; c += blockDim.x) h[c] = 0;
  __syncthreads();
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if (!valid[row * n + i]) continue;
    for (int m = 0; m < metric_count; ++m)
      atomicAdd(&h[m * LogBins::count + LogBins::index(metrics[(row * metric_count + m) * n + i])], 1u);
  }
  __syncthreads();
  std::uint32_t* out = hist + row * cells;
  for (int c = threadIdx.x; c < cells; c += blockDim.x)
    if (h[c]) atomicAdd(&out[c], h[c]);
}

// Work counters, lost reasons and projected references summed over instances (integers:
// atomics are exact).
template <class Inst>
__global__ void sum_counters(const std::uint64_t* inst, std::uint64_t n, unsigned long long* out) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Inst in;
  soa_load(inst, n, i, in, 0, soa_words<Inst>);
  constexpr int fields = sizeof(Counters) / sizeof(std::uint64_t);
  std::uint64_t c[fields];
  std::memcpy(c, &in.c, sizeof c);
  for (int f = 0; f < fields; ++f)
    if (c[f]) atomicAdd(&out[f], static_cast<unsigned long long>(c[f]));
  atomicAdd(&out[fields + in.lost], 1ull);
  if (in.ref.projected) atomicAdd(&out[fields + lost_reason_count], 1ull);
}

// Device memory one instance needs during a run with segments of `rows` samples.
template <class Inst>
constexpr std::size_t device_bytes_per_instance(std::int64_t rows) {
  return sizeof(Inst) + static_cast<std::size_t>(rows) * (metric_count * sizeof(double) + 1) +
         static_cast<std::size_t>(rows) * metric_count * sizeof(Accumulator) / cpu_block_size + 1;
}

inline constexpr std::size_t segment_metric_bytes = std::size_t(512) << 20;    // metrics of one segment
inline constexpr std::size_t segment_snapshot_bytes = std::size_t(256) << 20;  // recorded instances' copies

template <class System, class Method, class Reference>
EnsembleResult run_cuda_ensemble(const System& sys, const Method& method, const RunParams<typename System::Real>& rp,
                                 const ModelStateOf<System>& z0, const EnsembleSpec& spec) {
  using Inst = InstanceOf<System, Reference>;
  constexpr int S = System::State::size;
  constexpr int P = physical_state_size_v<System>;  // kept and recorded states
  constexpr int W = soa_words<Inst>;
  const auto t_start = std::chrono::steady_clock::now();
  const CudaDeviceInfo dev = cuda_device_info();
  if (!dev.available) throw std::runtime_error(dev.description);
  const std::uint64_t n = spec.size;
  const std::uint64_t keep = std::min<std::uint64_t>(spec.keep_instances, n);
  const index_t samples = rp.samples;
  const std::int64_t blocks = static_cast<std::int64_t>((n + cpu_block_size - 1) / cpu_block_size);
  const std::size_t per_row = n * (metric_count * sizeof(double) + 1);
  // Rows per segment: metrics under segment_metric_bytes, the recorded instances' snapshots
  // under segment_snapshot_bytes, and within a grid's y extent.
  const std::size_t snap_row = spec.record.size() * recorded_row_width(P) * sizeof(double);
  const index_t seg =
      spec.segment_rows > 0
          ? spec.segment_rows
          : segment_rows(samples,
                         std::min<index_t>({65535, static_cast<index_t>(segment_metric_bytes / std::max<std::size_t>(1, per_row)),
                                            static_cast<index_t>(segment_snapshot_bytes / std::max<std::size_t>(1, snap_row))}));
  constexpr std::size_t hist_row = static_cast<std::size_t>(metric_count) * LogBins::count;
  {  // refuse what does not fit, before anything is launched
    std::size_t free_b = 0, total_b = 0;
    check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    const double need = static_cast<double>(n) * static_cast<double>(device_bytes_per_instance<Inst>(seg)) +
                        static_cast<double>(seg) * static_cast<double>(hist_row * sizeof(std::uint32_t) + snap_row) +
                        static_cast<double>(keep) * metric_count * sizeof(double);
    if (need > 0.9 * static_cast<double>(free_b))
      throw DeviceMemoryError("ensemble.size = " + std::to_string(n) + " needs about " + std::to_string(need / 1e9) +
                              " GB of device memory, more than 90% of the " + std::to_string(free_b / 1e9) +
                              " GB free on " + dev.description + "; use a smaller ensemble");
  }

  EnsembleResult res;
  res.backend = "cuda";
  res.device = dev.description;
  res.threads = 1;
  res.instances = n;
  res.reference_available = Reference::available && rp.reference;
  res.momentum_metrics = decltype(sys.model)::has_momentum_integrals;
  res.wedge_metric = has_tangents_v<System>;
  res.series.resize(static_cast<std::size_t>(samples + 1));
  res.kept = PerInstanceResult::sized(keep, P);
  res.recorded = recorded_sized(spec.record, spec.first_instance, n, spec.only, P, res.reference_available, samples);
  const std::uint64_t R = res.recorded.instances.size();

  DeviceBuffer<std::uint64_t> d_inst(static_cast<std::size_t>(W) * n);
  DeviceBuffer<double> d_metrics(static_cast<std::size_t>(seg) * n * metric_count);
  DeviceBuffer<unsigned char> d_valid(static_cast<std::size_t>(seg) * n);
  DeviceBuffer<double> d_snap(static_cast<std::size_t>(seg) * R * recorded_row_width(P));
  DeviceBuffer<std::uint64_t> d_record(R);
  DeviceBuffer<std::uint64_t> d_only(spec.only.size());  // ensemble.only's indices
  if (!spec.only.empty())
    check(cudaMemcpy(d_only.ptr, spec.only.data(), spec.only.size() * sizeof(std::uint64_t), cudaMemcpyHostToDevice),
          "cudaMemcpy");
  const std::uint64_t* only = spec.only.empty() ? nullptr : d_only.ptr;
  if (R > 0)
    check(cudaMemcpy(d_record.ptr, res.recorded.instances.data(), R * sizeof(std::uint64_t), cudaMemcpyHostToDevice),
          "cudaMemcpy");
  DeviceBuffer<Accumulator> d_acc(static_cast<std::size_t>(seg * blocks * metric_count));
  DeviceBuffer<std::uint32_t> d_hist(static_cast<std::size_t>(seg) * hist_row);
  DeviceBuffer<double> d_kept_metrics(keep * metric_count);
  const unsigned threads = S <= 16 ? 128 : 64;
  const unsigned grid = static_cast<unsigned>((n + threads - 1) / threads);
  // Histogram blocks per row: each thread bins up to 16 instances.
  const unsigned hist_grid_x = static_cast<unsigned>(
      std::max<std::uint64_t>(1, std::min<std::uint64_t>(65535, (n + 16 * histogram_threads - 1) / (16 * histogram_threads))));

  // A resumed run (checkpoint.hpp) starts from the saved structure of arrays instead.
  const std::size_t inst_bytes = static_cast<std::size_t>(W) * n * sizeof(std::uint64_t);
  const CheckpointState* from = spec.resume_from;
  if (from) {
    check_resumable(*from, "cuda", W * sizeof(std::uint64_t), n, samples);
    check(cudaMemcpy(d_inst.ptr, from->instances.data(), inst_bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  } else {
    init_instances<System, Reference><<<grid, threads>>>(sys, rp, z0, static_cast<typename System::Real>(spec.perturbation),
                                                         spec.seed, spec.first_instance, only, n, d_inst.ptr);
    check(cudaGetLastError(), "init_instances launch");
  }
  const index_t start = from ? from->done : 0;
  const double earlier_wall = from ? from->wall_seconds : 0.0;
  auto wall = [&] {
    return earlier_wall + std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  };
  // The first `count` instances, out of the structure of arrays into a structure of arrays
  // of `count` instances (their initial states now, their final states at the end).
  auto fetch_first = [&](std::uint64_t count) {
    std::vector<std::uint64_t> words(static_cast<std::size_t>(W) * count);
    check(cudaMemcpy2D(words.data(), count * sizeof(std::uint64_t), d_inst.ptr, n * sizeof(std::uint64_t),
                       count * sizeof(std::uint64_t), W, cudaMemcpyDeviceToHost),
          "cudaMemcpy2D");
    return words;
  };
  auto instance = [](const std::vector<std::uint64_t>& words, std::uint64_t count, std::uint64_t i) {
    Inst in;
    soa_load(words.data(), count, i, in, 0, W);
    return in;
  };
  if (from) {
    restore_common(res, *from);
  } else if (keep > 0) {
    const std::vector<std::uint64_t> words = fetch_first(keep);
    for (std::uint64_t i = 0; i < keep; ++i) keep_initial(res.kept, sys, i, instance(words, keep, i));
  }
  std::vector<Accumulator> acc(static_cast<std::size_t>(seg * blocks * metric_count));
  std::vector<double> snap(static_cast<std::size_t>(seg) * R * recorded_row_width(P));
  std::vector<std::uint32_t> hist(static_cast<std::size_t>(seg) * hist_row);
  for (index_t k0 = start; k0 <= samples; k0 += seg) {
    const index_t k1 = std::min<index_t>(samples + 1, k0 + seg);
    const std::int64_t rows = k1 - k0;
    advance_segment<System, Method, Inst><<<grid, threads>>>(sys, method, rp, n, d_inst.ptr, k0, k1, d_metrics.ptr,
                                                             d_valid.ptr, spec.first_instance, only, d_record.ptr, R, d_snap.ptr, keep,
                                                             d_kept_metrics.ptr);
    check(cudaGetLastError(), "advance_segment launch");
    const std::uint64_t work = static_cast<std::uint64_t>(rows * blocks * metric_count);
    reduce_blocks<<<static_cast<unsigned>((work + 127) / 128), 128>>>(d_metrics.ptr, d_valid.ptr, n, rows, blocks,
                                                                       cpu_block_size, d_acc.ptr);
    check(cudaGetLastError(), "reduce_blocks launch");
    check(cudaMemset(d_hist.ptr, 0, static_cast<std::size_t>(rows) * hist_row * sizeof(std::uint32_t)), "cudaMemset");
    histogram_rows<<<dim3(hist_grid_x, static_cast<unsigned>(rows)), histogram_threads, histogram_shared_bytes>>>(
        d_metrics.ptr, d_valid.ptr, n, d_hist.ptr);
    check(cudaGetLastError(), "histogram_rows launch");
    check(cudaDeviceSynchronize(), "advance_segment / reduce_blocks / histogram_rows");
    check(cudaMemcpy(acc.data(), d_acc.ptr, work * sizeof(Accumulator), cudaMemcpyDeviceToHost), "cudaMemcpy");
    check(cudaMemcpy(hist.data(), d_hist.ptr, static_cast<std::size_t>(rows) * hist_row * sizeof(std::uint32_t),
                     cudaMemcpyDeviceToHost),
          "cudaMemcpy");
    if (R > 0)
      check(cudaMemcpy(snap.data(), d_snap.ptr, static_cast<std::size_t>(rows) * R * recorded_row_width(P) * sizeof(double),
                       cudaMemcpyDeviceToHost),
            "cudaMemcpy");
    for (index_t k = k0; k < k1; ++k) res.series[static_cast<std::size_t>(k)].t = rp.reference_time(k);
    if (spec.reduce_segment) {
      spec.reduce_segment(k0, k1, acc.data(), blocks, hist.data(), res.series);
    } else {
      reduce_rows(res.series, k0, k1, acc.data(), blocks, hist.data());
    }
    for (index_t k = k0; k < k1; ++k) {
      for (std::uint64_t r = 0; r < R; ++r) {
        const std::size_t at = static_cast<std::size_t>(k - k0) * R + r;
        record_row(res.recorded, static_cast<std::size_t>(r), k, rp.reference_time(k),
                   &snap[at * static_cast<std::size_t>(recorded_row_width(P))]);
      }
    }
    if (spec.progress) spec.progress(k1, samples + 1);
    if (spec.checkpoint && k1 <= samples) {
      const CheckpointRequest q = spec.checkpoint(k1, samples + 1);
      if (q.save && spec.save_checkpoint) {
        std::vector<unsigned char> bytes(inst_bytes);
        check(cudaMemcpy(bytes.data(), d_inst.ptr, inst_bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
        CheckpointState c = checkpoint_of(res, "cuda", W * sizeof(std::uint64_t), n, samples, k1, wall());
        c.instances_view = bytes.data();
        spec.save_checkpoint(c);
      }
      if (q.stop) {
        res.stopped_at = k1;
        res.wall_seconds = wall();
        return res;
      }
    }
  }

  constexpr int fields = sizeof(Counters) / sizeof(std::uint64_t);
  DeviceBuffer<unsigned long long> d_sum(fields + lost_reason_count + 1);
  check(cudaMemset(d_sum.ptr, 0, (fields + lost_reason_count + 1) * sizeof(unsigned long long)), "cudaMemset");
  sum_counters<Inst><<<grid, threads>>>(d_inst.ptr, n, d_sum.ptr);
  check(cudaGetLastError(), "sum_counters launch");
  std::vector<unsigned long long> sum(fields + lost_reason_count + 1);
  d_sum.to_host(sum);
  auto* totals = reinterpret_cast<std::uint64_t*>(&res.totals);
  for (int f = 0; f < fields; ++f) totals[f] = sum[static_cast<std::size_t>(f)];
  for (int r = 0; r < lost_reason_count; ++r) res.lost[r] = sum[static_cast<std::size_t>(fields + r)];
  res.reference_projected = sum[static_cast<std::size_t>(fields + lost_reason_count)];

  // The first lost instances: the word holding each instance's lost reason, scanned on the
  // host (n words; only when some instance is lost).
  if (res.lost_total() > 0) {
    constexpr std::size_t at = offsetof(Inst, lost);
    std::vector<std::uint64_t> row(n);
    check(cudaMemcpy(row.data(), d_inst.ptr + (at / sizeof(std::uint64_t)) * n, n * sizeof(std::uint64_t),
                     cudaMemcpyDeviceToHost),
          "cudaMemcpy");
    for (std::uint64_t i = 0; i < n && res.lost_examples.size() < lost_examples_max; ++i) {
      int lost = 0;
      std::memcpy(&lost, reinterpret_cast<const unsigned char*>(&row[i]) + at % sizeof(std::uint64_t), sizeof lost);
      if (lost != int(LostReason::none)) {
        res.lost_examples.push_back(spec.global_index(i));
        res.lost_example_reasons.push_back(lost);
      }
    }
  }
  // Instance 0 and the kept instances, final.
  const std::uint64_t fetch = std::max<std::uint64_t>(keep, 1);
  const std::vector<std::uint64_t> words = fetch_first(fetch);
  for (std::uint64_t i = 0; i < keep; ++i) keep_final(res.kept, sys, i, instance(words, fetch, i));
  if (keep > 0) d_kept_metrics.to_host(res.kept.metrics);
  record_instance0_final(res, sys, instance(words, fetch, 0));
  res.wall_seconds = wall();
  return res;
}

}  // namespace chens::cuda
