#include "sched/max_tree.h"

#include <utility>

namespace tessera {

void MaxTree::Resize(int32_t n) {
  if (n <= n_) return;
  size_t leaves = 1;
  while (leaves < static_cast<size_t>(n)) leaves <<= 1;
  if (leaves != leaves_) {
    std::vector<int64_t> old(best_.begin() + static_cast<ptrdiff_t>(leaves_), best_.end());
    best_.assign(2 * leaves, kNone);
    count_.assign(2 * leaves, 0);
    leaves_ = leaves;
    for (size_t i = 0; i < old.size(); ++i) {
      best_[leaves_ + i] = old[i];
      count_[leaves_ + i] = 1;
    }
    for (size_t i = old.size(); i < leaves_; ++i) count_[leaves_ + i] = 1;
    Rebuild();
  }
  n_ = n;
}

void MaxTree::Rebuild() {
  for (size_t v = leaves_ - 1; v >= 1; --v) Pull(v);
}

void MaxTree::Set(int32_t index, int64_t value) {
  size_t v = leaves_ + static_cast<size_t>(index);
  if (best_[v] == value) return;
  best_[v] = value;
  // Walk up while the summaries change; above the first unchanged one nothing changes.
  for (v >>= 1; v >= 1; v >>= 1) {
    const int64_t old_best = best_[v];
    const int64_t old_count = count_[v];
    Pull(v);
    if (best_[v] == old_best && count_[v] == old_count) return;
  }
}

void MaxTree::Pull(size_t v) {
  const size_t l = 2 * v, r = 2 * v + 1;
  if (best_[l] > best_[r]) {
    best_[v] = best_[l];
    count_[v] = count_[l];
  } else if (best_[r] > best_[l]) {
    best_[v] = best_[r];
    count_[v] = count_[r];
  } else {
    best_[v] = best_[l];
    count_[v] = count_[l] + count_[r];
  }
}

int32_t MaxTree::KthBest(int64_t k) const {
  const int64_t best = best_[1];
  size_t v = 1;
  while (v < leaves_) {
    const size_t l = 2 * v;
    if (best_[l] == best && k < count_[l]) {
      v = l;
    } else {
      if (best_[l] == best) k -= count_[l];
      v = l + 1;
    }
  }
  return static_cast<int32_t>(v - leaves_);
}

}  // namespace tessera
