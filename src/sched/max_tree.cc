#include "sched/max_tree.h"

#include <algorithm>

namespace tessera {

void MaxTree::Resize(int32_t n) {
  if (static_cast<size_t>(n) <= leaves_.size()) return;
  leaves_.resize(static_cast<size_t>(n), kNone);
  levels_.clear();
  size_t width = leaves_.size();
  do {
    width = (width + kFanout - 1) / kFanout;
    levels_.push_back(Level{std::vector<int64_t>(width, kNone), std::vector<int64_t>(width, 0)});
  } while (width > 1);
  Rebuild();
}

bool MaxTree::Summarise(size_t l, size_t i) {
  const size_t begin = i * kFanout;
  int64_t best = kNone;
  int64_t count = 0;
  if (l == 0) {
    const size_t end = std::min(begin + kFanout, leaves_.size());
    for (size_t c = begin; c < end; ++c) best = std::max(best, leaves_[c]);
    for (size_t c = begin; c < end; ++c) count += (leaves_[c] == best);
  } else {
    const Level& below = levels_[l - 1];
    const size_t end = std::min(begin + kFanout, below.best.size());
    for (size_t c = begin; c < end; ++c) best = std::max(best, below.best[c]);
    for (size_t c = begin; c < end; ++c) count += below.best[c] == best ? below.count[c] : 0;
  }
  Level& level = levels_[l];
  if (level.best[i] == best && level.count[i] == count) return false;
  level.best[i] = best;
  level.count[i] = count;
  return true;
}

void MaxTree::Rebuild() {
  for (size_t l = 0; l < levels_.size(); ++l) {
    for (size_t i = 0; i < levels_[l].best.size(); ++i) Summarise(l, i);
  }
}

void MaxTree::Set(int32_t index, int64_t value) {
  size_t i = static_cast<size_t>(index);
  int64_t old_best = leaves_[i];
  if (old_best == value) return;
  leaves_[i] = value;
  // The child that changed, before and after: (best, count of leaves holding it).
  int64_t old_count = 1;
  int64_t new_best = value;
  int64_t new_count = 1;
  for (size_t l = 0; l < levels_.size(); ++l) {
    i /= kFanout;
    Level& level = levels_[l];
    const int64_t best = level.best[i];
    const int64_t count = level.count[i];
    // Most updates adjust the summary without looking at the siblings; only a summary that
    // loses its last best leaf is rescanned.
    const int64_t kept = count - (old_best == best ? old_count : 0);
    if (new_best > best) {
      level.best[i] = new_best;
      level.count[i] = new_count;
    } else if (new_best == best) {
      level.count[i] = kept + new_count;
    } else if (kept > 0) {
      level.count[i] = kept;
    } else {
      Summarise(l, i);
    }
    if (level.best[i] == best && level.count[i] == count) return;
    old_best = best;
    old_count = count;
    new_best = level.best[i];
    new_count = level.count[i];
  }
}

int32_t MaxTree::KthBest(int64_t k) const {
  const int64_t best = Best();
  size_t i = 0;  // summary index at the current level
  for (size_t l = levels_.size() - 1; l > 0; --l) {
    const Level& below = levels_[l - 1];
    size_t c = i * kFanout;
    for (;; ++c) {
      if (below.best[c] != best) continue;
      if (k < below.count[c]) break;
      k -= below.count[c];
    }
    i = c;
  }
  for (size_t c = i * kFanout;; ++c) {
    if (leaves_[c] == best && k-- == 0) return static_cast<int32_t>(c);
  }
}

}  // namespace tessera
