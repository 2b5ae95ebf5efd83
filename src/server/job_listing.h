// One page of a job listing (JobService::List), shared by the services that keep their jobs in
// a map by numeric id: the phase filters, the walk in the listing's order, and the page with
// the count of matching jobs after it; and the checks and filters of a request that the services
// over JobRecords share (ListStart, ListsJob).
// Thread-safety: none of its own; callers walk their jobs under their own lock.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/job_phase.h"
#include "server/job_record.h"
#include "server/job_service.h"
#include "spec/job_document.h"
#include "spec/request_error.h"

namespace tessera::server {

// True when a job in `phase` passes the request's `phase` and `state` filters.
inline bool ListsPhase(const ListJobsRequest& request, JobPhase phase) {
  if (request.phase.has_value() && phase != *request.phase) return false;
  switch (request.state) {
    case JobStateFilter::kAll:
      return true;
    case JobStateFilter::kActive:
      return !IsTerminal(phase);
    case JobStateFilter::kTerminal:
      return IsTerminal(phase);
  }
  return true;
}

inline constexpr int32_t kMaxListLimit = 1000;

// The id a listing starts after (0: the beginning; else the page token's), once the request is
// checked: InvalidArgument naming "limit" outside 1..kMaxListLimit or "pageToken" for a token
// that is not a job id; PermissionDenied naming "tenant" when a tenant lists another tenant's
// jobs.
inline absl::StatusOr<int64_t> ListStart(const Caller& caller, const ListJobsRequest& request) {
  if (request.limit < 1 || request.limit > kMaxListLimit) {
    return spec::FieldError(
        "limit", absl::StrCat("must be between 1 and ", kMaxListLimit, ", not ", request.limit));
  }
  int64_t after = 0;
  if (!request.page_token.empty()) {
    const std::optional<int64_t> token = ParseJobId(request.page_token);
    if (!token.has_value()) {
      return spec::FieldError("pageToken", absl::StrCat("\"", request.page_token,
                                                        "\" is not a page token of this API"));
    }
    after = *token;
  }
  if (!request.tenant.empty() && !caller.admin && request.tenant != caller.tenant) {
    return spec::WithField(
        absl::PermissionDeniedError("tenant: only admins may list other tenants' jobs"), "tenant");
  }
  return after;
}

// True when `caller` may see a job of `tenant`, with `spec`, in `phase`, and it passes every
// filter of `request`.
inline bool ListsJob(const Caller& caller, const ListJobsRequest& request, std::string_view tenant,
                     const JobSpec& spec, JobPhase phase) {
  if (!caller.admin && tenant != caller.tenant) return false;
  if (!request.tenant.empty() && tenant != request.tenant) return false;
  if (!ListsPhase(request, phase)) return false;
  if (!request.queue.empty() && spec.queue != request.queue) return false;
  return request.name.empty() || spec.name == request.name;
}

// Calls `visit(job)` for the jobs of `jobs` (a std::map by numeric id) that follow the id
// `after` in `order`: ascending ids above it, or descending ids below it. `after` 0 starts at
// the beginning of the order.
template <typename JobMap, typename Visit>
void ForEachInListOrder(const JobMap& jobs, int64_t after, ListOrder order, Visit visit) {
  if (order == ListOrder::kOldestFirst) {
    for (auto it = jobs.upper_bound(after); it != jobs.end(); ++it) visit(it->second);
    return;
  }
  const auto below = after == 0 ? jobs.end() : jobs.lower_bound(after);
  for (auto it = std::make_reverse_iterator(below); it != jobs.rend(); ++it) visit(it->second);
}

// Collects one page: the first `limit` (>= 1) matching jobs offered, then counts the others, so
// that the result says how many more match.
class ListPage {
 public:
  explicit ListPage(int32_t limit) : limit_(limit) {}

  // A matching job, in listing order. `make_view()` returns its JobView; it is called only
  // while the page has room.
  template <typename MakeView>
  void Offer(MakeView make_view) {
    if (static_cast<int32_t>(result_.jobs.size()) < limit_) {
      result_.jobs.push_back(make_view());
      return;
    }
    if (result_.remaining++ == 0) {
      result_.next_page_token = result_.jobs.back().document.metadata.id;
    }
  }

  ListJobsResult Take() && { return std::move(result_); }

 private:
  int32_t limit_;
  ListJobsResult result_;
};

}  // namespace tessera::server
