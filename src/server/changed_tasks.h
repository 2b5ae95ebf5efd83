// ChangedTasks: the indices of a job's tasks that may have changed since they were last taken,
// each once, in the order they were first marked. A job record keeps two (one for its task
// writes, one for its API status) so that a step of a job with thousands of tasks looks at the
// tasks it changed instead of at all of them.
//
// Marking a task that did not change is harmless (its reader compares and skips it); a change
// left unmarked is not seen. Value type; not thread-safe.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace tessera::server {

class ChangedTasks {
 public:
  // REQUIRES: index >= 0.
  void Mark(int32_t index) {
    if (static_cast<size_t>(index) >= marked_.size()) marked_.resize(index + 1, false);
    if (marked_[index]) return;
    marked_[index] = true;
    indices_.push_back(index);
  }
  // Marks every index in [0, count).
  void MarkAll(int32_t count) {
    for (int32_t i = 0; i < count; ++i) Mark(i);
  }
  // The marked indices; none is marked afterwards.
  std::vector<int32_t> Take() {
    for (int32_t index : indices_) marked_[index] = false;
    return std::exchange(indices_, {});
  }
  bool empty() const { return indices_.empty(); }

 private:
  std::vector<int32_t> indices_;
  std::vector<bool> marked_;
};

}  // namespace tessera::server
