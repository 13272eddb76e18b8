// The block tree (host/backends/block_tree.hpp): the reduction order of every backend and
// of MPI shards. Any split of the blocks into contiguous shares completes to the same root,
// bit for bit, as one process merging all blocks; and the tree's statistics are those of
// the values (long double brute force).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backends/block_tree.hpp"

namespace chens {
namespace {

bool same_bits(const Accumulator& a, const Accumulator& b) {
  return a.count == b.count && std::memcmp(&a.mean, &b.mean, sizeof(double)) == 0 &&
         std::memcmp(&a.scale, &b.scale, sizeof(double)) == 0 && std::memcmp(&a.ssq, &b.ssq, sizeof(double)) == 0 &&
         std::memcmp(&a.min, &b.min, sizeof(double)) == 0 && std::memcmp(&a.max, &b.max, sizeof(double)) == 0;
}

// Leaves of `blocks` blocks of up to 64 log-normal values each (some blocks empty), and the
// values themselves per metric.
struct Data {
  std::vector<Accumulator> leaf;
  std::vector<std::vector<double>> values;
};

Data make_data(std::uint64_t blocks, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> v(-10.0, 4.0);
  std::uniform_int_distribution<int> count(0, 64);
  Data d;
  d.leaf.resize(blocks * metric_count);
  d.values.resize(metric_count);
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const int c = b % 7 == 3 ? 0 : count(rng);  // lost instances leave blocks empty
    for (int m = 0; m < metric_count; ++m)
      for (int i = 0; i < c; ++i) {
        const double x = v(rng);
        d.leaf[b * metric_count + m].add(x);
        d.values[static_cast<std::size_t>(m)].push_back(x);
      }
  }
  return d;
}

TEST(BlockTree, AnySplitGivesTheSameRootBitForBit) {
  for (std::uint64_t blocks : {1ull, 2ull, 3ull, 7ull, 64ull, 100ull, 1000ull, 4097ull}) {
    const std::uint64_t seed = 1000 + blocks;
    SCOPED_TRACE("blocks = " + std::to_string(blocks) + ", seed = " + std::to_string(seed));
    const Data d = make_data(blocks, seed);
    Accumulator whole[metric_count];
    tree_merge(d.leaf.data(), blocks, whole);
    std::mt19937_64 rng(seed);
    for (int ranks : {1, 2, 3, 5, 8, 13}) {
      if (static_cast<std::uint64_t>(ranks) > blocks) continue;
      for (int trial = 0; trial < 4; ++trial) {
        // Contiguous shares: the even split of chens' MPI layer first, then random cuts.
        std::vector<std::uint64_t> cut = {0};
        for (int r = 1; r < ranks; ++r)
          cut.push_back(blocks * static_cast<std::uint64_t>(r) / static_cast<std::uint64_t>(ranks));
        if (trial > 0) {
          std::uniform_int_distribution<std::uint64_t> at(1, blocks - 1);
          for (int r = 1; r < ranks; ++r) cut[static_cast<std::size_t>(r)] = at(rng);
          std::sort(cut.begin(), cut.end());
          cut.erase(std::unique(cut.begin(), cut.end()), cut.end());
        }
        cut.push_back(blocks);
        std::vector<TreeNode> nodes;
        std::size_t most = 0;
        for (std::size_t r = 0; r + 1 < cut.size(); ++r) {
          const std::uint64_t first = cut[r], n = cut[r + 1] - cut[r];
          const auto mine = tree_nodes(d.leaf.data() + first * metric_count, first, n, blocks);
          most = std::max(most, mine.size());
          nodes.insert(nodes.end(), mine.rbegin(), mine.rend());  // any order
        }
        // A share sends O(log B) nodes: at most two per level of the tree.
        EXPECT_LE(most, 2 * static_cast<std::size_t>(std::log2(static_cast<double>(tree_width(blocks)))) + 1);
        Accumulator root[metric_count];
        tree_root(nodes, blocks, root);
        for (int m = 0; m < metric_count; ++m)
          EXPECT_TRUE(same_bits(root[m], whole[m])) << ranks << " shares, trial " << trial << ", metric " << m;
      }
    }
  }
}

TEST(BlockTree, StatisticsAreThoseOfTheValues) {
  const Data d = make_data(1000, 7);
  Accumulator whole[metric_count];
  tree_merge(d.leaf.data(), 1000, whole);
  for (int m = 0; m < metric_count; ++m) {
    const auto& v = d.values[static_cast<std::size_t>(m)];
    long double sum = 0, sq = 0;
    double lo = v[0], hi = v[0];
    for (double x : v) {
      sum += x;
      sq += static_cast<long double>(x) * x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    ASSERT_EQ(whole[m].count, v.size());
    EXPECT_NEAR(whole[m].mean, static_cast<double>(sum / v.size()), 1e-13 * static_cast<double>(sum / v.size()));
    EXPECT_NEAR(whole[m].rms(), std::sqrt(static_cast<double>(sq / v.size())),
                1e-13 * std::sqrt(static_cast<double>(sq / v.size())));
    EXPECT_EQ(whole[m].min, lo);
    EXPECT_EQ(whole[m].max, hi);
  }
}

}  // namespace
}  // namespace chens
