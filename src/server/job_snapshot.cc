#include "server/job_snapshot.h"

namespace tessera::server {

std::shared_ptr<const JobSnapshot> JobSnapshot::With(std::span<const Change> changes) const {
  auto next = std::make_shared<JobSnapshot>(*this);
  // The blocks copied for this snapshot, by block index: written in place after the first copy.
  std::vector<Block*> copied(next->blocks_.size(), nullptr);
  for (const Change& change : changes) {
    const size_t b = static_cast<size_t>(change.id / kJobsPerBlock);
    if (b >= next->blocks_.size()) {
      next->blocks_.resize(b + 1);
      copied.resize(b + 1, nullptr);
    }
    if (copied[b] == nullptr) {
      auto block = next->blocks_[b] ? std::make_shared<Block>(*next->blocks_[b])
                                    : std::make_shared<Block>();
      copied[b] = block.get();
      next->blocks_[b] = std::move(block);
    }
    std::shared_ptr<const PublishedJob>& slot = (*copied[b])[change.id % kJobsPerBlock];
    next->size_ += (change.job != nullptr) - (slot != nullptr);
    slot = change.job;
  }
  return next;
}

const std::shared_ptr<const PublishedJob>& JobSnapshot::Find(int64_t id) const {
  static const std::shared_ptr<const PublishedJob> kNone;
  if (id < 1) return kNone;
  const size_t b = static_cast<size_t>(id / kJobsPerBlock);
  if (b >= blocks_.size() || blocks_[b] == nullptr) return kNone;
  return (*blocks_[b])[id % kJobsPerBlock];
}

}  // namespace tessera::server
