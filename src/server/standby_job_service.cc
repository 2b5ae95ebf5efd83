#include "server/standby_job_service.h"

#include <optional>
#include <utility>

#include "fmt/format.h"
#include "server/job_listing.h"

namespace tessera::server {
namespace {

absl::Status AskTheLeader() {
  return absl::UnavailableError("this replica is a standby: ask the leader");
}

// Unavailable until the mirror has listed the store once: until then it knows no job.
absl::Status CheckListed(const JobMirror& mirror) {
  if (mirror.lists() > 0) return absl::OkStatus();
  return absl::UnavailableError("this standby is still reading the jobs from the store; retry");
}

absl::Status NotFound(std::string_view id) {
  return absl::NotFoundError(fmt::format("job {} not found", id));
}

// The record `id` names in `jobs`, if `caller` may see it.
const JobRecord* FindVisible(const std::map<int64_t, JobRecord>& jobs, const Caller& caller,
                             std::string_view id) {
  const std::optional<int64_t> number = ParseJobId(id);
  if (!number.has_value()) return nullptr;
  auto it = jobs.find(*number);
  if (it == jobs.end() || (!caller.admin && it->second.tenant != caller.tenant)) return nullptr;
  return &it->second;
}

}  // namespace

StandbyJobService::StandbyJobService(const JobMirror* mirror, store::Store* store)
    : mirror_(mirror), store_(store) {}

absl::StatusOr<JobView> StandbyJobService::Get(const Caller& caller, std::string_view id) {
  if (absl::Status s = CheckListed(*mirror_); !s.ok()) return s;
  std::optional<JobView> view;
  mirror_->Read([&](const std::map<int64_t, JobRecord>& jobs) {
    if (const JobRecord* record = FindVisible(jobs, caller, id)) view = record->View();
  });
  if (!view.has_value()) return NotFound(id);
  return *std::move(view);
}

absl::StatusOr<ListJobsResult> StandbyJobService::List(const Caller& caller,
                                                       const ListJobsRequest& request) {
  absl::StatusOr<int64_t> after = ListStart(caller, request);
  if (!after.ok()) return after.status();
  if (absl::Status s = CheckListed(*mirror_); !s.ok()) return s;
  ListPage page(request.limit);
  mirror_->Read([&](const std::map<int64_t, JobRecord>& jobs) {
    ForEachInListOrder(jobs, *after, request.order, [&](const JobRecord& record) {
      if (ListsJob(caller, request, record.tenant, record.document.spec, record.status().phase)) {
        page.Offer([&] { return record.View(); });
      }
    });
  });
  return std::move(page).Take();
}

absl::StatusOr<std::vector<JobEvent>> StandbyJobService::Events(const Caller& caller,
                                                                std::string_view id) {
  if (absl::Status s = CheckListed(*mirror_); !s.ok()) return s;
  std::optional<int64_t> number;
  mirror_->Read([&](const std::map<int64_t, JobRecord>& jobs) {
    if (const JobRecord* record = FindVisible(jobs, caller, id)) number = record->id;
  });
  if (!number.has_value()) return NotFound(id);
  return ReadJobEvents(*store_, *number);
}

absl::StatusOr<SubmitResult> StandbyJobService::Submit(const Caller&, spec::JobDocument) {
  return AskTheLeader();
}
absl::StatusOr<SubmitBatchResult> StandbyJobService::SubmitBatch(const Caller&,
                                                                 std::vector<spec::JobDocument>) {
  return AskTheLeader();
}
absl::StatusOr<JobView> StandbyJobService::Cancel(const Caller&, std::string_view) {
  return AskTheLeader();
}
absl::StatusOr<JobExplanation> StandbyJobService::Explain(const Caller&, std::string_view) {
  return AskTheLeader();
}
absl::StatusOr<LogChunk> StandbyJobService::Logs(const Caller&, std::string_view,
                                                 const LogRequest&) {
  return AskTheLeader();
}
absl::StatusOr<std::unique_ptr<EventStream>> StandbyJobService::Watch(const Caller&,
                                                                      const WatchRequest&) {
  return AskTheLeader();
}
absl::StatusOr<std::vector<QueueView>> StandbyJobService::ApplyQueues(const Caller&,
                                                                      std::vector<QueueSpec>) {
  return AskTheLeader();
}
absl::StatusOr<QueueView> StandbyJobService::ApplyQueue(const Caller&, QueueSpec) {
  return AskTheLeader();
}
absl::Status StandbyJobService::DeleteQueue(const Caller&, std::string_view) {
  return AskTheLeader();
}
absl::StatusOr<NodeView> StandbyJobService::ChangeNode(const Caller&, const NodeChange&) {
  return AskTheLeader();
}
absl::Status StandbyJobService::DeleteCluster(const Caller&, std::string_view) {
  return AskTheLeader();
}

}  // namespace tessera::server
