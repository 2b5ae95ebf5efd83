// The Scheduler's answers to "can this job ever run here?" (satisfiability) and "when would it
// start?" (Estimate: a dry run of the backfill planner, with the quota the job waits for).
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "sched/scheduler_internal.h"

namespace tessera {
namespace {

constexpr std::string_view kBlockerNoFit = "NoFit";

// What a blocker code of StartEstimate is, from a pending reason code.
std::string BlockerOf(std::string_view code) {
  if (code == kReasonQuotaExceeded) return "Quota";
  if (code == kReasonGangIncomplete) return "Gang";
  if (code == kReasonReservation) return "Reservation";
  if (code == kReasonPriority) return "Position";
  if (code == kReasonBackoff) return "Backoff";
  if (code.empty()) return "";
  return "Capacity";
}

}  // namespace

std::optional<std::string> Scheduler::NeverFits(ClusterState& state, const Entry& entry,
                                                std::set<std::string>* fitting) {
  for (size_t i = 0; i < entry.tasks.size(); ++i) {
    // Node shapes do not change within a cycle: one check per task class and cycle.
    if (!fitting->insert(entry.tasks[i].EquivalenceKey()).second) continue;
    TaskAttempt attempt = framework_->PlaceTask(state, entry.tasks[i], MatchMode::kSatisfiability);
    if (attempt.placement.has_value() || attempt.status.code() == SchedStatus::Code::kError) {
      continue;
    }
    fitting->erase(entry.tasks[i].EquivalenceKey());
    return fmt::format("task {} fits no node even on an empty cluster: {}", entry.task_names[i],
                       attempt.diagnosis.ToString());
  }
  return std::nullopt;
}

std::optional<std::string> Scheduler::GangNeverFits(const ClusterState& state, const Entry& entry) {
  const int32_t size = entry.spec.GangSize();
  if (size <= 1) return std::nullopt;
  if (fitting_gangs_.uid != state.uid() ||
      fitting_gangs_.inventory_version != state.inventory_version()) {
    fitting_gangs_ = {.uid = state.uid(), .inventory_version = state.inventory_version()};
  }
  const std::span<const TaskRequest> tasks = GangOf(entry);
  std::string classes;
  for (const TaskRequest& task : tasks) classes += task.EquivalenceKey() + '\n';
  if (fitting_gangs_.gangs.contains(classes)) return std::nullopt;
  ClusterState empty = EmptiedState(state);
  const GangAttempt gang =
      satisfiability_->ScheduleGang(empty, entry.name, tasks, size, MatchMode::kWithoutAllocating);
  if (gang.status.code() == SchedStatus::Code::kError) return std::nullopt;  // cannot judge
  if (gang.status.ok() && static_cast<int32_t>(gang.placements.size()) >= size) {
    fitting_gangs_.gangs.insert(std::move(classes));
    return std::nullopt;
  }
  std::string why;
  if (gang.failed_task >= 0) {
    why = fmt::format("task {}: {}", entry.task_names[gang.failed_task], gang.diagnosis.ToString());
  } else {
    why = fmt::format("{} of {} gang tasks fit", gang.placements.size(), size);
  }
  if (!gang.note.empty()) why += "; " + gang.note;
  return fmt::format("its gang of {} tasks fits no cluster even when every node is empty: {}", size,
                     why);
}

TimePoint Scheduler::QuotaFreesAt(const Entry& target, std::span<const Reservation> plan,
                                  TimePoint now) const {
  std::map<int64_t, TimePoint> planned_end;
  for (const Reservation& r : plan) planned_end[r.job] = r.End();
  std::vector<std::pair<TimePoint, const Entry*>> holders;  // (when it releases, job)
  for (const auto& [id, e] : by_id_) {
    if (!e->charged || e == &target) continue;
    TimePoint end = TimePoint::max();
    if (e->state == Entry::State::kAdmitted) {
      if (auto it = planned_end.find(id); it != planned_end.end()) end = it->second;
    } else {
      end = EndOf(*e);
    }
    holders.emplace_back(end, e);
  }
  std::stable_sort(holders.begin(), holders.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  QueueTree quota = *tree_;  // released into a copy: the live tree is left as it is
  for (const auto& [end, holder] : holders) {
    if (end == TimePoint::max()) break;
    quota.Release(holder->leaf, holder->charge);
    if (quota.CanAdmit(target.leaf, target.charge).fits) return std::max(end, now);
  }
  return TimePoint::max();
}

absl::StatusOr<StartEstimate> Scheduler::Estimate(std::string_view job, ClusterState& state) {
  Entry* target = Find(job);
  if (target == nullptr ||
      (target->state != Entry::State::kPending && target->state != Entry::State::kAdmitted)) {
    return absl::NotFoundError(fmt::format("job {} is not pending", job));
  }
  StartEstimate estimate;
  estimate.position = std::max<int64_t>(admission_->Position(target->id), 0);
  std::set<std::string> fitting;
  if (std::optional<std::string> unfit = NeverFits(state, *target, &fitting)) {
    estimate.blocker = kBlockerNoFit;  // no start to foresee until a cluster that can hold it joins
    estimate.message = *std::move(unfit);
    return estimate;
  }
  if (target->has_reason) {
    estimate.blocker = BlockerOf(target->reason.code);
    estimate.message = target->reason.message;
  }
  // Ahead of it: every admitted job, then the pending jobs ahead of it in its own queue.
  constexpr size_t kMaxAhead = 64;
  std::vector<BlockedJob> blocked;
  for (Entry* e : AdmittedInOrder()) {
    if (e != target && blocked.size() < kMaxAhead) blocked.push_back(AsBlocked(*e));
  }
  for (auto& [id, e] : by_id_) {
    if (blocked.size() >= kMaxAhead) break;
    if (e == target || e->state != Entry::State::kPending || e->leaf != target->leaf) continue;
    const int64_t position = admission_->Position(e->id);
    if (position >= 0 && position < estimate.position) blocked.push_back(AsBlocked(*e));
  }
  blocked.push_back(AsBlocked(*target));
  const TimePoint now = env_.clock->Now();
  std::vector<Reservation> plan = planner_->Plan(state, now, releases_, blocked);
  TimePoint start = plan.back().start;
  if (start == TimePoint::max()) {
    // No start from the time limits: the gang may never fit, or wait on jobs without one.
    if (std::optional<std::string> unfit = GangNeverFits(state, *target)) {
      estimate.blocker = kBlockerNoFit;
      estimate.message = *std::move(unfit);
    }
    return estimate;
  }
  // The planner foresees capacity; the quota a pending job waits for frees as its holders end.
  if (target->state == Entry::State::kPending &&
      !tree_->CanAdmit(target->leaf, target->charge).fits) {
    const TimePoint quota_free = QuotaFreesAt(*target, plan, now);
    if (quota_free == TimePoint::max()) return estimate;  // held by jobs without a time limit
    if (quota_free > start)
      start = planner_->Plan(state, quota_free, releases_, blocked).back().start;
  }
  if (start == TimePoint::max()) return estimate;
  estimate.start = std::max(start, target->not_before);
  return estimate;
}

}  // namespace tessera
