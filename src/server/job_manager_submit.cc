// JobManager's submission path: Submit and SubmitBatch. A submission is checked, given its id
// and record, committed to the store and only then acknowledged and handed to the loop. The
// jobs of one batch share their store transaction (one commit and one sync for the whole batch)
// and their hand-over to the loop (one wake-up).
#include <future>
#include <memory>
#include <utility>

#include "fmt/format.h"
#include "server/job_manager.h"
#include "server/job_manager_internal.h"

namespace tessera::server {
namespace {

// One store transaction of a batch and how much of the store's limits it uses.
struct BatchTxn {
  store::Txn txn;
  size_t entries = 0;  // compares and ops
  size_t bytes = 0;    // keys and values
};

// Adds one job's compare and ops to the last transaction of `txns`, or to a new one when they
// would take it over `limits`. Returns the index of the transaction that holds them.
size_t AddToTxns(std::vector<BatchTxn>& txns, store::Compare compare, std::vector<store::Op> ops,
                 const store::TxnLimits& limits) {
  const size_t entries = 1 + ops.size();
  size_t bytes = compare.key.size() + compare.value.size();
  for (const store::Op& op : ops) bytes += op.key.size() + op.value.size();
  if (txns.empty() || txns.back().entries + entries > limits.max_entries ||
      txns.back().bytes + bytes > limits.max_total_bytes) {
    txns.emplace_back();
  }
  BatchTxn& last = txns.back();
  last.txn.compares.push_back(std::move(compare));
  for (store::Op& op : ops) last.txn.success.push_back(std::move(op));
  last.entries += entries;
  last.bytes += bytes;
  return txns.size() - 1;
}

}  // namespace

absl::StatusOr<SubmitResult> JobManager::Submit(const Caller& caller, spec::JobDocument job) {
  if (!Ready()) return absl::UnavailableError("the control plane is starting");
  if (absl::Status s = CheckLoopBacklog(1); !s.ok()) return s;
  std::vector<spec::JobDocument> jobs;
  jobs.push_back(std::move(job));
  return std::move(SubmitAll(caller, std::move(jobs)).front());
}

absl::StatusOr<SubmitBatchResult> JobManager::SubmitBatch(const Caller& caller,
                                                          std::vector<spec::JobDocument> jobs) {
  if (!Ready()) return absl::UnavailableError("the control plane is starting");
  if (absl::Status s = CheckSubmitBatchSize(jobs.size()); !s.ok()) return s;
  if (absl::Status s = CheckLoopBacklog(jobs.size()); !s.ok()) return s;
  return SubmitAll(caller, std::move(jobs));
}

SubmitBatchResult JobManager::SubmitAll(const Caller& caller,
                                        std::vector<spec::JobDocument> jobs) {
  SubmitBatchResult results(jobs.size(), absl::UnknownError("not submitted"));
  const store::TxnLimits limits = options_.store->limits();
  std::vector<bool> valid(jobs.size(), false);
  for (size_t i = 0; i < jobs.size(); ++i) {
    absl::Status s = WithLeadingField(jobs[i].spec.Validate("spec"));
    if (s.ok()) s = CheckStorable(jobs[i], caller.tenant, limits);
    if (s.ok()) {
      valid[i] = true;
    } else {
      results[i] = std::move(s);
    }
  }

  // A job of the batch that was given an id, and the transaction that stores it.
  struct Accepted {
    size_t item;
    int64_t id;
    JobEvent submitted;
    size_t txn;
  };
  // A later item of the batch with the request id of an accepted one: answered with that job.
  struct Repeat {
    size_t item;
    size_t accepted;  // index into `accepted`
  };
  std::vector<Accepted> accepted;
  std::vector<Repeat> repeats;
  std::vector<std::future<absl::Status>> commits;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::map<int64_t, size_t> accepted_at;  // job id → index into `accepted`
    std::vector<BatchTxn> txns;
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (!valid[i]) continue;
      spec::JobDocument& job = jobs[i];
      const std::string request_id = job.metadata.request_id;
      if (!request_id.empty()) {
        if (auto it = requests_.find(IndexKey(caller.tenant, request_id)); it != requests_.end()) {
          if (auto at = accepted_at.find(it->second); at != accepted_at.end()) {
            repeats.push_back({.item = i, .accepted = at->second});
          } else {
            results[i] = SubmitResult{.job = jobs_.at(it->second).View(), .created = false};
          }
          continue;
        }
      }
      if (absl::Status s = CheckQueueLocked(job.spec.queue); !s.ok()) {
        results[i] = std::move(s);
        continue;
      }
      if (!job.spec.name.empty()) {
        if (auto it = active_names_.find(IndexKey(caller.tenant, job.spec.name));
            it != active_names_.end()) {
          results[i] = absl::AlreadyExistsError(
              fmt::format("metadata.name: job {} (\"{}\") is not finished yet; names are unique "
                          "among a tenant's unfinished jobs",
                          it->second, job.spec.name));
          continue;
        }
      }
      const int64_t id = next_id_++;
      JobRecord record = NewJobRecord(id, caller.tenant, std::move(job), options_.clock->Now());
      std::vector<JobEvent> events;
      JobEvent submitted = AddEvent(record, events, "Submitted", "",
                                    fmt::format("queue {}, {} task(s)",
                                                record.document.spec.queue, record.tasks.size()));
      std::vector<store::Op> ops = {
          store::Op::Put(SpecKey(id), EncodeJobSpec(record)),
          store::Op::Put(JobKey(id), EncodeJobRecord(record)),
          store::Op::Put(EventKey(id, submitted.sequence), EncodeJobEvent(submitted))};
      if (!request_id.empty()) {
        ops.push_back(store::Op::Put(RequestKey(caller.tenant, request_id), FormatJobId(id)));
        requests_[IndexKey(caller.tenant, request_id)] = id;
      }
      active_names_[IndexKey(caller.tenant, record.document.spec.name)] = id;
      const size_t txn = AddToTxns(txns, store::Compare::Absent(JobKey(id)), std::move(ops), limits);
      accepted_at[id] = accepted.size();
      accepted.push_back({.item = i, .id = id, .submitted = std::move(submitted), .txn = txn});
      uncommitted_.insert(id);
      jobs_.emplace(id, std::move(record));
    }
    // Enqueued under mu_, so that the store receives writes in id order.
    for (BatchTxn& txn : txns) {
      auto committed = std::make_shared<std::promise<absl::Status>>();
      commits.push_back(committed->get_future());
      ++in_flight_;
      absl::Status queued = options_.store->CommitAsync(
          std::move(txn.txn), [this, committed](absl::StatusOr<store::TxnResult> result) {
            if (!result.ok()) {
              committed->set_value(StoreFailure("the job could not be stored", result.status()));
            } else if (!result->succeeded) {
              committed->set_value(absl::InternalError("job id already in the store"));
            } else {
              committed->set_value(absl::OkStatus());
            }
            --in_flight_;
          });
      if (!queued.ok()) {
        --in_flight_;
        committed->set_value(StoreFailure("the job could not be stored", queued));
      }
    }
  }
  std::vector<absl::Status> committed;
  for (std::future<absl::Status>& commit : commits) committed.push_back(commit.get());

  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LoopEvent> stored;
  for (Accepted& job : accepted) {
    uncommitted_.erase(job.id);
    const absl::Status& status = committed[job.txn];
    auto it = jobs_.find(job.id);
    JobRecord& record = it->second;
    if (!status.ok()) {
      if (!record.document.metadata.request_id.empty()) {
        requests_.erase(IndexKey(caller.tenant, record.document.metadata.request_id));
      }
      active_names_.erase(IndexKey(caller.tenant, record.document.spec.name));
      jobs_.erase(it);
      results[job.item] = status;
      continue;
    }
    MarkChangedLocked(job.id);
    hub_.Publish(job.submitted, record.tenant);
    metrics_->Submitted();
    results[job.item] = SubmitResult{.job = record.View(), .created = true};
    stored.push_back(JobSubmitted{job.id});
  }
  for (const Repeat& repeat : repeats) {
    const absl::StatusOr<SubmitResult>& first = results[accepted[repeat.accepted].item];
    if (first.ok()) {
      results[repeat.item] = SubmitResult{.job = first->job, .created = false};
    } else {
      results[repeat.item] = first.status();
    }
  }
  PublishLocked();
  PostAll(std::move(stored));
  return results;
}

void JobManager::PostAll(std::vector<LoopEvent> events) {
  if (events.empty()) return;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    for (LoopEvent& event : events) {
      if (IsQueuedRequest(event)) ++queued_requests_;
      queue_.push_back(std::move(event));
    }
  }
  queue_cv_.notify_one();
}

}  // namespace tessera::server
