// AdmissionQueue: the jobs waiting for admission, and one scheduling cycle's admission order.
//
// Order (docs/policies/ordering.md): the walk starts at the top of the queue tree; at each level
// the children are taken by higher queue priority first, then lower QueueTree::Share (only with
// fair share kDrf; with kNone shares are not used), then name; inside a leaf, by effective
// priority then submission sequence. Effective priority with aging: priority + waited / aging,
// so the order key priority - submit_time / aging is the same at every instant (every job ages
// at the same rate): the leaves keep static orders (exact integer keys, no rounding). Aging 0:
// priority only. Since shares move as jobs are admitted, Next re-reads the shares of the path of
// each job answered Admitted (or Blocked: its caller may have admitted and released).
//
// One cycle: StartCycle, then Next until nullopt, answering each job with Admitted or Blocked.
// A Blocked job stays queued and is not returned again in this cycle; in a kStrictFifo leaf it
// also ends that leaf's turn for the cycle (BlockQueue does so for any leaf). Jobs added during a
// cycle wait for the next cycle; jobs removed during a cycle are never returned.
//
// Complexity, for Q queues of depth d, fanout f and n jobs in a leaf: Add, Remove and Position
// O(log n); StartCycle O(Q log f) (AdvanceTime of the tree included); Next O(d + log n)
// amortised (an exhausted subtree is dropped from its parent's order once); Admitted and Blocked
// O(d (log f + C)) for C capacity resources. Memory: about 150 bytes per job.
//
// Not thread-safe: the Scheduler's loop owns it. A Cycle is valid until the next StartCycle or
// the queue's destruction. Add/Remove misuse (a job added twice, a non-leaf) is an assert.
#pragma once

#include <cstdint>
#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/numeric/int128.h"
#include "sched/queue/queue_tree.h"
#include "tessera/common/clock.h"

namespace tessera {

class AdmissionQueue {
 public:
  using JobId = int64_t;

  // `tree` outlives this queue; its leaves receive jobs. `priority_aging`: one priority point per
  // this much waiting; zero: no aging.
  AdmissionQueue(QueueTree* tree, Duration priority_aging);

  // Queues `job` in `leaf` (REQUIRES: tree->IsLeaf(leaf), job not queued). `sequence` breaks
  // ties (the submission order; unique per job).
  void Add(JobId job, int32_t leaf, int32_t priority, int64_t sequence, TimePoint submit_time);
  // Removes `job`; no-op when absent.
  void Remove(JobId job);
  bool Contains(JobId job) const { return jobs_.contains(job); }
  size_t size() const { return jobs_.size(); }
  // The jobs queued in `leaf`.
  size_t size(int32_t leaf) const { return leaves_[leaf].size(); }
  // Position of a job within its leaf's order (0 = head); -1 when absent.
  int64_t Position(JobId job) const;
  // The leaf `job` is queued in; -1 when absent.
  int32_t LeafOf(JobId job) const;

  class Cycle {
   public:
    // The next job in admission order, or nullopt when every leaf is done for this cycle.
    // A job returned and not answered before the next call counts as Blocked.
    std::optional<JobId> Next() { return queue_->Next(); }
    // The job Next returned was admitted (the caller already called tree->Admit): it leaves the
    // queue and the shares of its path are re-read.
    void Admitted() { queue_->Answer(true); }
    // It was not admitted (or its admission was released): it stays queued; in a kStrictFifo
    // leaf the rest of that leaf is skipped for this cycle.
    void Blocked() { queue_->Answer(false); }
    // Skips `leaf` for the rest of the cycle (strict FIFO with an admitted head still unplaced).
    void BlockQueue(int32_t leaf) { queue_->Deactivate(leaf); }

   private:
    friend class AdmissionQueue;
    explicit Cycle(AdmissionQueue* queue) : queue_(queue) {}
    AdmissionQueue* queue_;
  };
  // Starts a cycle at `now`: advances the tree's usage history to `now` and orders the queues
  // by their current shares. Ends any previous cycle.
  Cycle StartCycle(TimePoint now);

 private:
  // The order of jobs inside a leaf: higher `rank` first (priority * aging - submit time, in
  // milliseconds), then lower sequence.
  struct JobKey {
    absl::int128 rank;
    int64_t sequence;
    JobId job;
    uint64_t added_in_cycle;  // cycle_ when added (not part of the order)
    bool operator<(const JobKey& o) const {
      if (rank != o.rank) return rank > o.rank;
      if (sequence != o.sequence) return sequence < o.sequence;
      return job < o.job;
    }
  };
  using LeafOrder =
      __gnu_pbds::tree<JobKey, __gnu_pbds::null_type, std::less<JobKey>, __gnu_pbds::rb_tree_tag,
                       __gnu_pbds::tree_order_statistics_node_update>;
  struct JobEntry {
    JobKey key;
    int32_t leaf;
  };
  // The order of active children: higher queue priority, lower share, then name.
  struct ChildKey {
    int64_t neg_priority;
    double share;
    int32_t name_rank;
    int32_t queue;
    bool operator<(const ChildKey& o) const {
      if (neg_priority != o.neg_priority) return neg_priority < o.neg_priority;
      if (share != o.share) return share < o.share;
      return name_rank < o.name_rank;
    }
  };
  using ChildOrder = __gnu_pbds::tree<ChildKey, __gnu_pbds::null_type, std::less<ChildKey>,
                                      __gnu_pbds::rb_tree_tag, __gnu_pbds::null_node_update>;

  std::optional<JobId> Next();
  void Answer(bool admitted);
  ChildKey KeyOf(int32_t q) const;
  void Activate(int32_t q);
  // Drops q (and every ancestor left without active children) from the cycle's order.
  void Deactivate(int32_t q);
  // Re-keys the active queues on the path to `leaf` with their current shares.
  void Refresh(int32_t leaf);
  int32_t Parent(int32_t q) const;  // the cohort node for a root

  QueueTree* tree_;
  Duration aging_;
  absl::flat_hash_map<JobId, JobEntry> jobs_;
  std::vector<LeafOrder> leaves_;  // per queue (empty for non-leaves)
  std::vector<int32_t> name_rank_;

  // The current cycle. Node tree_->size() is the cohort of the roots.
  uint64_t cycle_ = 0;
  std::vector<ChildOrder> active_children_;
  std::vector<std::optional<ChildKey>> active_key_;  // set while q is in its parent's order
  std::vector<std::optional<JobKey>> cursor_;        // per leaf: the last job returned
  std::optional<JobId> last_;                        // returned by Next, not yet answered
};

}  // namespace tessera
