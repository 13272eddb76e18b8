// The one reduction order of every backend and every split of an ensemble: the statistics
// of the blocks of cpu_block_size instances (ensemble_spec.hpp) are merged along a fixed
// binary tree over the global block indices. Node (s, len), len a power of two and s a
// multiple of len, covers blocks [s, s + len) of [0, B); its value is the merge of its left
// child and then its right child (an empty child is the identity, exactly: Accumulator::
// merge). The root is (0, P), P the smallest power of two >= B.
//
// Because the tree is fixed by B alone, any contiguous share of the blocks (an MPI rank's
// shard) can evaluate the largest nodes that lie inside it (tree_nodes), and the root can
// be completed from those nodes (tree_root) with the same floating-point operations in the
// same order as one process evaluating the whole tree (tree_merge): results are bitwise
// identical for any number of ranks, and a rank sends O(log B) nodes per sample time, not
// its blocks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/ensemble/accumulator.hpp>

namespace chens {

// A node of the tree with the merged statistics of its blocks, one Accumulator per metric.
struct TreeNode {
  std::uint64_t start = 0, len = 0;
  Accumulator acc[metric_count];
};

inline std::uint64_t tree_width(std::uint64_t blocks) {
  std::uint64_t p = 1;
  while (p < blocks) p *= 2;
  return p;
}

namespace detail {

// Node (s, len) from the leaves of blocks [first, first + n) (leaf[(b - first) * metric_count
// + m]), which must contain [s, s + len) ∩ [0, total).
inline void tree_eval_leaves(const Accumulator* leaf, std::uint64_t first, std::uint64_t total, std::uint64_t s,
                             std::uint64_t len, Accumulator* out) {
  for (int m = 0; m < metric_count; ++m) out[m] = Accumulator{};
  if (s >= total) return;
  if (len == 1) {
    for (int m = 0; m < metric_count; ++m) out[m] = leaf[(s - first) * metric_count + m];
    return;
  }
  Accumulator right[metric_count];
  tree_eval_leaves(leaf, first, total, s, len / 2, out);
  tree_eval_leaves(leaf, first, total, s + len / 2, len / 2, right);
  for (int m = 0; m < metric_count; ++m) out[m].merge(right[m]);
}

inline void tree_collect(const Accumulator* leaf, std::uint64_t first, std::uint64_t n, std::uint64_t total, std::uint64_t s,
                         std::uint64_t len, std::vector<TreeNode>& out) {
  const std::uint64_t end = std::min(s + len, total);
  if (s >= total || end <= first || s >= first + n) return;  // no block of the share
  if (s >= first && end <= first + n) {                      // inside the share
    TreeNode node;
    node.start = s;
    node.len = len;
    tree_eval_leaves(leaf, first, total, s, len, node.acc);
    out.push_back(node);
    return;
  }
  tree_collect(leaf, first, n, total, s, len / 2, out);
  tree_collect(leaf, first, n, total, s + len / 2, len / 2, out);
}

// Node (s, len) from nodes that cover [0, total) without overlap, sorted by start.
inline void tree_eval_nodes(const std::vector<TreeNode>& nodes, std::uint64_t total, std::uint64_t s, std::uint64_t len,
                            Accumulator* out) {
  for (int m = 0; m < metric_count; ++m) out[m] = Accumulator{};
  if (s >= total) return;
  const auto it =
      std::lower_bound(nodes.begin(), nodes.end(), s, [](const TreeNode& a, std::uint64_t x) { return a.start < x; });
  if (it != nodes.end() && it->start == s && it->len == len) {
    for (int m = 0; m < metric_count; ++m) out[m] = it->acc[m];
    return;
  }
  Accumulator right[metric_count];
  tree_eval_nodes(nodes, total, s, len / 2, out);
  tree_eval_nodes(nodes, total, s + len / 2, len / 2, right);
  for (int m = 0; m < metric_count; ++m) out[m].merge(right[m]);
}

}  // namespace detail

// The whole tree over blocks [0, total): leaf[b * metric_count + m].
inline void tree_merge(const Accumulator* leaf, std::uint64_t total, Accumulator* out) {
  detail::tree_eval_leaves(leaf, 0, total, 0, tree_width(total), out);
}

// The largest nodes inside the share [first, first + n) of [0, total), from its leaves
// leaf[(b - first) * metric_count + m], in order of start.
inline std::vector<TreeNode> tree_nodes(const Accumulator* leaf, std::uint64_t first, std::uint64_t n, std::uint64_t total) {
  std::vector<TreeNode> out;
  detail::tree_collect(leaf, first, n, total, 0, tree_width(total), out);
  return out;
}

// The root from the nodes of shares that together cover [0, total) (any order).
inline void tree_root(std::vector<TreeNode> nodes, std::uint64_t total, Accumulator* out) {
  std::sort(nodes.begin(), nodes.end(), [](const TreeNode& a, const TreeNode& b) { return a.start < b.start; });
  detail::tree_eval_nodes(nodes, total, 0, tree_width(total), out);
}

}  // namespace chens
