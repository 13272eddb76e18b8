// What every ensemble backend is asked to run, and the block size both backends reduce
// statistics in (C++17-clean: nvcc compiles it).
#pragma once

#include <cstdint>

namespace chens {

struct EnsembleSpec {
  std::uint64_t size = 1;
  std::uint64_t seed = 0;
  double perturbation = 0.0;
  bool record_trajectory = false;
  int threads = 0;  // CPU backend: 0 = OpenMP's default
};

// Statistics are accumulated per block of this many consecutive instances, sequentially
// in instance order, and blocks are merged in index order, on the CPU and on the GPU:
// results do not depend on thread counts or launch shapes.
inline constexpr std::uint64_t cpu_block_size = 64;

}  // namespace chens
