#include "sched/backfill/release_schedule.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace tessera {
namespace {

bool Before(const NodeRelease& a, const NodeRelease& b) {
  return std::tie(a.end, a.job, a.task) < std::tie(b.end, b.job, b.task);
}

}  // namespace

bool ReleaseSchedule::Ends(const PlannedRelease& release) {
  if (release.end == TimePoint::max() || release.tasks.size() != release.placements.size()) {
    return false;
  }
  return std::all_of(release.placements.begin(), release.placements.end(), [](const Placement& p) {
    return p.node_index >= 0 &&
           std::all_of(p.gpus.begin(), p.gpus.end(), [](int32_t d) { return d >= 0; });
  });
}

void ReleaseSchedule::Set(PlannedRelease release) {
  Remove(release.job);
  const int64_t job = release.job;
  const PlannedRelease& kept = jobs_.emplace(job, std::move(release)).first->second;
  if (!Ends(kept)) return;
  by_end_.emplace(std::pair(kept.end, job), &kept);
  for (size_t k = 0; k < kept.tasks.size(); ++k) {
    const auto node = static_cast<size_t>(kept.placements[k].node_index);
    if (node >= by_node_.size()) by_node_.resize(node + 1);
    std::vector<NodeRelease>& list = by_node_[node];
    const NodeRelease entry{kept.end, job, &kept.tasks[k], &kept.placements[k]};
    list.insert(std::upper_bound(list.begin(), list.end(), entry, Before), entry);
  }
}

void ReleaseSchedule::Remove(int64_t job) {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return;
  Unlink(it->second);
  jobs_.erase(it);
}

void ReleaseSchedule::Clear() {
  jobs_.clear();
  by_end_.clear();
  by_node_.clear();
}

void ReleaseSchedule::Unlink(const PlannedRelease& release) {
  if (!Ends(release)) return;
  by_end_.erase({release.end, release.job});
  for (const Placement& p : release.placements) {
    std::vector<NodeRelease>& list = by_node_[static_cast<size_t>(p.node_index)];
    std::erase_if(list, [&](const NodeRelease& r) { return r.job == release.job; });
  }
}

const PlannedRelease* ReleaseSchedule::Find(int64_t job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? nullptr : &it->second;
}

const std::vector<NodeRelease>& ReleaseSchedule::on_node(int32_t node) const {
  static const std::vector<NodeRelease> kNone;
  if (node < 0 || static_cast<size_t>(node) >= by_node_.size()) return kNone;
  return by_node_[static_cast<size_t>(node)];
}

}  // namespace tessera
