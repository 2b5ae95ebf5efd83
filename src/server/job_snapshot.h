// JobSnapshot: an immutable picture of the jobs the API may read, as the job manager last
// published it (after each loop turn, and as each submission is acknowledged). API threads read
// a snapshot without the manager's lock, so a read never waits for the loop and a long listing
// never holds the loop up.
//
// Shape: jobs by numeric id (ids are dense from 1, in submission order) in fixed blocks of
// kJobsPerBlock; a snapshot shares every block it did not change with the one it was made from,
// so publishing a turn's changes copies the blocks they fall in and the list of blocks (about
// id/kJobsPerBlock pointers), never the jobs that stayed as they were. A job's versions share
// its spec, which does not change after submission: publishing a step of a job copies its
// status alone.
//
// Thread safety: a JobSnapshot is immutable once made; any number of threads may read one, and
// its jobs stay valid while the snapshot (or a copy of a job's pointer) is held.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "server/job_service.h"

namespace tessera::server {

// One published version of a job: its JobView, with the spec shared between versions.
struct PublishedJob {
  std::string tenant;
  spec::JobMetadata metadata;
  std::shared_ptr<const JobSpec> spec;  // never null
  spec::JobStatus status;

  JobView View() const {
    return JobView{.document = {.metadata = metadata, .spec = *spec, .status = status},
                   .tenant = tenant};
  }
};

class JobSnapshot {
 public:
  static constexpr int64_t kJobsPerBlock = 512;

  // A job's new version (published), or nullptr (the job leaves the snapshot).
  struct Change {
    int64_t id = 0;  // >= 1
    std::shared_ptr<const PublishedJob> job;
  };

  // The snapshot without any job.
  JobSnapshot() = default;

  // This snapshot with `changes` applied in order (a later change of one id wins). The blocks
  // no change falls in are shared with this one. REQUIRES: every id >= 1.
  std::shared_ptr<const JobSnapshot> With(std::span<const Change> changes) const;

  // Job `id`; nullptr when the snapshot has none.
  const std::shared_ptr<const PublishedJob>& Find(int64_t id) const;

  // Calls `visit(const PublishedJob&)` for the jobs that follow the id `after` in `order`:
  // ascending ids above it, or descending ids below it (`after` 0: from the first or the last).
  template <typename Visit>
  void ForEachInListOrder(int64_t after, ListOrder order, Visit visit) const {
    const int64_t end = static_cast<int64_t>(blocks_.size()) * kJobsPerBlock;
    if (order == ListOrder::kOldestFirst) {
      for (int64_t id = after + 1; id < end; ++id) {
        if (const auto& job = Find(id)) visit(*job);
      }
      return;
    }
    for (int64_t id = (after == 0 || after > end) ? end - 1 : after - 1; id >= 1; --id) {
      if (const auto& job = Find(id)) visit(*job);
    }
  }

  // Jobs in the snapshot.
  int64_t size() const { return size_; }

 private:
  using Block = std::array<std::shared_ptr<const PublishedJob>, kJobsPerBlock>;

  std::vector<std::shared_ptr<const Block>> blocks_;  // block b: ids b*kJobsPerBlock ...
  int64_t size_ = 0;
};

}  // namespace tessera::server
