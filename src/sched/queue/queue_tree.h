// QueueTree: the hierarchical queue tree with admission quota and fair share.
//
// Tenants submit jobs to leaf queues; parents group them. Before a job is placed it is ADMITTED:
// its whole CHARGE (JobCharge below) is reserved in its leaf and in every ancestor. Quotas are
// per resource R ("cpu" millicores, "memory" bytes, "gpu" milli-GPU, "gpu:<MODEL>" milli-GPU of
// one model; see queue_spec.h). A resource that no queue of the tree mentions is not managed:
// it is unlimited and only counted. For a managed resource, per queue q:
//   G(q)  guaranteed: explicit, else for a parent the sum of its children's G, else 0
//   B(q)  borrowing limit, L(q) lending limit: absent = unbounded
//   U(q)  admitted use of q's subtree
//   occupy(s) = max(U(s), G(s) - L(s))     a queue never lends more than L of its unused G
//   maxU(top) = G(top) + B(top) capped by the cohort (below);
//   maxU(c)   = min(G(c) + B(c), maxU(parent) - sum over siblings s != c of occupy(s))
// A charge r fits leaf q iff U(a) + r <= maxU(a) for every queue a on the path q..root
// (Kueue's cohorts: what a queue leaves unused may be borrowed by its siblings' subtrees, up to
// their borrowing limits and its lending limit). The top-level queues (several roots are
// allowed) form one implicit cohort whose capacity is the sum of their guarantees, so with a
// single root maxU(root) = G(root). Guarantees may add up to more than the cluster: admission
// reserves quota, placement still needs capacity. A queue is BORROWING resource R when
// U(q,R) > G(q,R), and borrowing when it borrows some managed resource; a job may reclaim a
// resource its leaf stays within G for from the queues that borrow that resource, even while
// it borrows another one (the Scheduler picks the victims).
//
// Fair share is hierarchical dominant-resource fairness (DRF: Ghodsi et al., NSDI 2011;
// hierarchical: Bhattacharya et al. 2013, H-DRF): Share(q) = (D(q) + H(q)) / weight(q), where
// D(q) = max over resources with a capacity (SetCapacity) of U(q,R) / total_R, and H(q) is the
// usage-history term: an exponential moving average of D(q) over time with the configured
// half-life (Slurm's PriorityDecayHalfLife), 0 when the half-life is 0. Admission order
// (admission_queue.h) walks siblings by queue priority, then Share, then name.
//
// Numbers are in the units above; messages show them in user units (cores, GiB, GPUs).
// Quotas are summed in 128-bit arithmetic, so no sum of int64 quantities overflows.
// Complexity: with d the depth of a leaf and r the entries of a charge, CanAdmit, Admit, Release
// and WithinGuarantee are O(d * r) plus one hash lookup per charge entry; Share is O(C) for C
// capacity resources; AdvanceTime is O(queues * C); IsBorrowing(q, R) and WithinOwnGuarantee
// are one hash lookup.
//
// Not thread-safe: the Scheduler calls it from its loop only. Errors: Create returns
// InvalidArgument naming "queues[i].field" (i the index in the given specs).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/numeric/int128.h"
#include "absl/status/statusor.h"
#include "core/job.h"
#include "sched/queue/queue_spec.h"
#include "sched/scheduling_policy.h"
#include "tessera/common/clock.h"

namespace tessera {

// The charge of a job for admission: the sum over all `tasks` (one element per task) of "cpu",
// "memory", "gpu" (gpu_count * gpu_milli) and "gpu:<M>" for tasks whose gpu_models is exactly
// {M}. Zero entries are omitted. A task allowed on several models is charged to "gpu" only
// (documented limitation: per-model quota cannot know which model it will get).
ResourceList JobCharge(std::span<const TaskRequest> tasks);
// The same for a whole job: each group's request counted `replicas` times.
ResourceList JobCharge(const JobSpec& spec);

// "gpu 8 GPUs", "cpu 2.5 cores", "memory 16 GiB": a quantity of `resource` in user units.
std::string FormatQuantity(std::string_view resource, int64_t value);

class QueueTree {
 public:
  // Validates `specs` and builds the tree; queue q is specs[q]. Specs may come in any order
  // (a parent after its children). Errors (InvalidArgument), e.g.:
  //   "queues: at least one queue is required"
  //   "queues[0].name: required"        "queues[4].name: \"a\" given twice"
  //   "queues[3].parent: unknown queue \"org\""
  //   "queues[2].parent: cycle a -> b -> a"
  //   "queues[2].weight: must be >= 1"
  //   "queues[1].guaranteed.gpuu: unknown resource (cpu, memory, gpu, gpu:<model>)"
  //   "queues[1].lending_limit.cpu: must be >= 0"
  // Children's guarantees may add up to more than an explicit parent guarantee.
  static absl::StatusOr<QueueTree> Create(std::span<const QueueSpec> specs);

  int32_t size() const { return static_cast<int32_t>(specs_.size()); }
  // The index of the queue named `name`; -1 when unknown.
  int32_t Find(std::string_view name) const;
  const QueueSpec& spec(int32_t q) const { return specs_[q]; }
  // The parent of q; -1 for a root.
  int32_t parent(int32_t q) const;
  const std::vector<int32_t>& children(int32_t q) const { return children_[q]; }
  bool IsLeaf(int32_t q) const { return children_[q].empty(); }
  // Every queue, parents before children (roots in spec order, then depth-first).
  std::vector<int32_t> TreeOrder() const;
  // The queues from q's root down to q.
  const std::vector<int32_t>& PathFromRoot(int32_t q) const { return paths_[q]; }
  // The effective guarantee of q for every managed resource (explicit or summed).
  ResourceList Guaranteed(int32_t q) const;

  // The cluster totals that dominant shares divide by; resources absent or 0 count for no share.
  void SetCapacity(const ResourceList& total);
  // Fair-share mode (for callers that order by it) and the half-life of the history term
  // (0: current use only). Resets the history.
  void Configure(FairShareMode mode, Duration half_life);
  FairShareMode fair_share() const { return mode_; }

  struct Verdict {
    bool fits = true;
    // When !fits: names the queue, the resource and the numbers, e.g.
    // "queue \"team-a\" gpu: needs 8 GPUs, 4 GPUs available (12 GPUs admitted, may use 16 GPUs
    // now: guaranteed 16 GPUs, borrowing limit 0 GPUs)".
    std::string message;
  };
  // Whether `charge` may be admitted to `leaf` now (the maxU rule above).
  Verdict CanAdmit(int32_t leaf, const ResourceList& charge) const;
  // Whether `charge` could be admitted to `leaf` with nothing else admitted anywhere; a job that
  // fails this is refused at submission.
  Verdict CanEverAdmit(int32_t leaf, const ResourceList& charge) const;
  // Adds `charge` to the use of leaf and its ancestors. Does not check: call CanAdmit first.
  void Admit(int32_t leaf, const ResourceList& charge);
  // Gives back what Admit took. REQUIRES: the same charge was admitted to the same leaf.
  void Release(int32_t leaf, const ResourceList& charge);
  // The admitted use of q's subtree (every resource charged, managed or not; no zero entries).
  const ResourceList& Usage(int32_t q) const { return usage_[q]; }
  // True when U(q) > G(q) for some managed resource.
  bool IsBorrowing(int32_t q) const;
  // Whether some queue of the tree mentions `resource` (it is limited and may be borrowed).
  bool Manages(std::string_view resource) const { return ManagedIndex(resource) >= 0; }
  // True when U(q, resource) > G(q, resource); false for a resource the tree does not manage.
  bool IsBorrowing(int32_t q, std::string_view resource) const;
  // True when q's own use of `resource`, with `amount` added, stays within G(q, resource): the
  // per-resource condition for reclaiming it from borrowers. False for a resource the tree does
  // not manage (nothing of it is guaranteed, nobody borrows it).
  bool WithinOwnGuarantee(int32_t q, std::string_view resource, int64_t amount) const;
  // True when, with `charge` added, every queue on the path leaf..root stays within its
  // guarantee for every managed resource (the condition for reclaiming from borrowers).
  bool WithinGuarantee(int32_t leaf, const ResourceList& charge) const;

  // Integrates and decays the usage history up to `now`; idempotent for the same `now`.
  // REQUIRES: now is not before the previous call.
  void AdvanceTime(TimePoint now);
  // The weighted dominant share of q (with the history term when a half-life is configured).
  double Share(int32_t q) const;

 private:
  using Int = absl::int128;
  // One value per queue of a path (no allocation for trees up to 8 deep).
  using PathValues = absl::InlinedVector<Int, 8>;

  QueueTree() = default;
  absl::Status Build();
  // Index of a managed resource; -1 when not managed.
  int ManagedIndex(std::string_view resource) const;
  Int& At(std::vector<Int>& v, int32_t q, int r) const { return v[q * managed_.size() + r]; }
  Int At(const std::vector<Int>& v, int32_t q, int r) const { return v[q * managed_.size() + r]; }
  Int Occupy(int32_t q, int r) const;
  // maxU of every queue on the path to `leaf` (root first) for resource r; `empty`: with
  // nothing admitted.
  void MaxUse(int32_t leaf, int r, bool empty, PathValues& out) const;
  Verdict Check(int32_t leaf, const ResourceList& charge, bool empty) const;
  void Add(int32_t leaf, const ResourceList& charge, int64_t sign);
  double DominantShare(int32_t q) const;
  void RebuildCapacityUse();

  std::vector<QueueSpec> specs_;
  absl::flat_hash_map<std::string, int32_t> by_name_;
  std::vector<int32_t> parent_;                 // the cohort node (size()) for a root
  std::vector<std::vector<int32_t>> children_;  // size() + 1 entries: the last lists the roots
  std::vector<std::vector<int32_t>> paths_;     // root first

  // Managed resources: columns of the per-queue arrays below (size() + 1 rows, the last is the
  // cohort of the roots).
  std::vector<std::string> managed_;
  absl::flat_hash_map<std::string, int> managed_index_;
  std::vector<Int> guaranteed_;    // G
  std::vector<Int> cap_;           // G + B
  std::vector<Int> lending_;       // L
  std::vector<Int> used_;          // U
  std::vector<Int> child_occupy_;  // sum over children of occupy
  std::vector<Int> empty_max_;     // maxU with nothing admitted
  std::vector<ResourceList> usage_;

  // Fair share.
  FairShareMode mode_ = FairShareMode::kDrf;
  Duration half_life_{0};
  std::vector<std::string> capacity_names_;
  std::vector<double> capacity_;  // totals, > 0
  absl::flat_hash_map<std::string, int> capacity_index_;
  std::vector<int64_t> capacity_use_;  // [q * capacity_.size() + c]
  std::vector<double> history_;        // H(q)
  bool has_time_ = false;
  TimePoint last_time_{};
};

}  // namespace tessera
