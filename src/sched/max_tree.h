// MaxTree: a tournament tree over per-node totals that finds the best total, how many nodes
// share it, and the k-th of them in node order, in O(log n).
//
// The framework keeps one per task equivalence class, so choosing a node costs O(log n) after
// the changed nodes are re-scored, instead of a scan of every node (which dominates at 100k
// nodes). Picking the k-th tied node in index order gives exactly the node a linear scan would.
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

  // Grows to hold at least `n` leaves; new leaves are kNone.
  void Resize(int32_t n);
  int32_t size() const { return n_; }

  void Set(int32_t index, int64_t value);
  // Sets many leaves cheaply: SetLeaf each, then Rebuild once (O(n) instead of O(n log n)).
  void SetLeaf(int32_t index, int64_t value) {
    best_[leaves_ + static_cast<size_t>(index)] = value;
  }
  void Rebuild();
  int64_t Best() const { return best_.empty() ? kNone : best_[1]; }
  // The number of leaves equal to Best().
  int64_t BestCount() const { return count_.empty() ? 0 : count_[1]; }
  // The index of the k-th leaf (0-based, in index order) equal to Best().
  // REQUIRES: 0 <= k < BestCount().
  int32_t KthBest(int64_t k) const;

 private:
  void Pull(size_t v);

  int32_t n_ = 0;
  size_t leaves_ = 0;          // a power of two >= n_
  std::vector<int64_t> best_;  // 1-based heap layout; leaves at [leaves_, 2 * leaves_)
  std::vector<int64_t> count_;
};

}  // namespace tessera
