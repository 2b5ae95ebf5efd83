// QueueSpec: one queue of the hierarchical queue tree, as configured.
//
// Tenants submit jobs to leaf queues; parents group them (an organisation, a team). Per resource
// a queue has a guaranteed quota (what it may always use), a borrowing limit (how far above its
// guarantee it may go by borrowing what others leave unused) and a lending limit (how much of its
// own unused guarantee others may borrow). Resources are named:
//   "cpu"          millicores
//   "memory"       bytes
//   "gpu"          milli-GPU (1000 = one whole GPU)
//   "gpu:<MODEL>"  milli-GPU of one GPU model ("gpu:A100-80GB")
// A key left out of `borrowing_limit` or `lending_limit` means unbounded; left out of
// `guaranteed`, it is 0 for a leaf and the sum of the children's guarantees for a parent.
// Semantics of admission and fair share: queue_tree.h. A value type.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace tessera {

using ResourceList = std::map<std::string, int64_t, std::less<>>;

// How a queue orders its own jobs when the first cannot start (docs/policies/ordering.md).
enum class QueueOrdering {
  kBestEffortFifo,  // a job that cannot be admitted or placed is skipped; later ones may start
  kStrictFifo,      // a job that cannot be admitted or placed blocks the queue's later jobs
};

struct QueueSpec {
  std::string name;
  std::string parent;  // empty for a root
  ResourceList guaranteed;
  ResourceList borrowing_limit;
  ResourceList lending_limit;
  int32_t weight = 1;    // fair-share weight, >= 1
  int32_t priority = 0;  // queues of higher priority are served first among siblings
  QueueOrdering ordering = QueueOrdering::kBestEffortFifo;
};

}  // namespace tessera
