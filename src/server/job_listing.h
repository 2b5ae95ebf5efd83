// One page of a job listing (JobService::List), shared by the services that keep their jobs in
// a map by numeric id: the phase filters, the walk in the listing's order, and the page with
// the count of matching jobs after it.
// Thread-safety: none of its own; callers walk their jobs under their own lock.
#pragma once

#include <cstdint>
#include <iterator>
#include <utility>

#include "core/job_phase.h"
#include "server/job_service.h"

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
