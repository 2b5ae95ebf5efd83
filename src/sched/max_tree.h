// MaxTree: a tournament tree over per-node totals that finds the best total, how many nodes
// share it, and the k-th of them in node order.
//
// The framework keeps one per task equivalence class, so choosing a node costs a few short
// scans after the changed nodes are re-scored, instead of a scan of every node (which dominates
// at 100k nodes). Each inner node summarises kFanout children (their best value and how many
// leaves hold it), so a tree over 10,000 nodes is four levels of contiguous 16-entry scans:
// an update touches a handful of cache lines and stops as soon as a summary is unchanged.
// Picking the k-th tied leaf in index order gives exactly the node a linear scan would.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace tessera {

class MaxTree {
 public:
  static constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  static constexpr size_t kFanout = 16;

  // Grows to hold at least `n` leaves; new leaves are kNone.
  void Resize(int32_t n);
  int32_t size() const { return static_cast<int32_t>(leaves_.size()); }

  // Sets one leaf and updates the summaries above it.
  void Set(int32_t index, int64_t value);
  // Sets many leaves cheaply: SetLeaf each, then Rebuild once.
  void SetLeaf(int32_t index, int64_t value) { leaves_[static_cast<size_t>(index)] = value; }
  void Rebuild();
  int64_t Leaf(int32_t index) const { return leaves_[static_cast<size_t>(index)]; }
  // A hint that leaf `index` will be set soon (a software prefetch of its memory).
  void PrefetchLeaf(int32_t index) const {
    __builtin_prefetch(&leaves_[static_cast<size_t>(index)]);
  }

  int64_t Best() const { return levels_.empty() ? kNone : levels_.back().best[0]; }
  // The number of leaves equal to Best().
  int64_t BestCount() const { return levels_.empty() ? 0 : levels_.back().count[0]; }
  // The index of the k-th leaf (0-based, in index order) equal to Best().
  // REQUIRES: Best() != kNone and 0 <= k < BestCount().
  int32_t KthBest(int64_t k) const;

 private:
  struct Level {
    std::vector<int64_t> best;
    std::vector<int64_t> count;
  };
  // Recomputes summary `i` of level `l` (0 = the first level above the leaves).
  // Returns whether it changed.
  bool Summarise(size_t l, size_t i);

  std::vector<int64_t> leaves_;
  std::vector<Level> levels_;  // levels_.back() has exactly one summary: the root
};

}  // namespace tessera
