#include "server/job_mirror.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "fmt/format.h"

namespace tessera::server {
namespace {

constexpr int64_t kPageSize = 1000;

// `fresh`, a record just decoded from its job key, with the tasks `old` holds from their own
// keys (the job key holds none of them).
void KeepStoredTasks(JobRecord& old, JobRecord& fresh) {
  if (old.tasks.size() != fresh.tasks.size()) return;
  for (size_t i = 0; i < old.tasks.size(); ++i) {
    if (!old.stored_tasks[i].has_value()) continue;
    fresh.tasks[i] = std::move(old.tasks[i]);
    fresh.stored_tasks[i] = std::move(old.stored_tasks[i]);
    fresh.TaskChanged(static_cast<int32_t>(i));  // for the status; the store holds it already
  }
  fresh.SyncTaskStatus();
}

// One change of a job or task key, decoded outside the mirror's lock.
struct Change {
  const store::Event* event;
  std::optional<JobRecord> record;  // a job key's put, decoded
};

// Puts `record` (decoded from its job key) in `jobs`, over the record it replaces.
void PutJob(std::map<int64_t, JobRecord>& jobs, JobRecord record) {
  auto it = jobs.find(record.id);
  if (it == jobs.end()) {
    jobs.emplace(record.id, std::move(record));
    return;
  }
  KeepStoredTasks(it->second, record);
  it->second = std::move(record);
}

// The spec a job key's put in `events` needs: the one put in the same batch (a submission
// writes a job's spec and record in one transaction), else the one `jobs` holds; nullopt when
// neither has it (DecodeJobRecord then reports it, unless the record holds its spec).
std::optional<spec::JobDocument> SpecFor(int64_t id,
                                         const std::map<int64_t, spec::JobDocument>& batch_specs,
                                         const std::map<int64_t, JobRecord>& jobs) {
  if (auto it = batch_specs.find(id); it != batch_specs.end()) return it->second;
  if (auto it = jobs.find(id); it != jobs.end()) {
    spec::JobDocument document = it->second.document;
    document.status.reset();
    return document;
  }
  return std::nullopt;
}

}  // namespace

JobMirror::JobMirror(JobMirrorOptions options)
    : options_(std::move(options)), follower_([this] { Follow(); }) {}

JobMirror::~JobMirror() { Stop(); }

void JobMirror::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    if (watcher_ != nullptr) watcher_->Cancel();
  }
  changed_.notify_all();
  if (follower_.joinable() && follower_.get_id() != std::this_thread::get_id()) follower_.join();
}

void JobMirror::Read(const std::function<void(const std::map<int64_t, JobRecord>&)>& read) const {
  std::lock_guard<std::mutex> lock(mu_);
  read(jobs_);
}

store::Revision JobMirror::revision() const {
  std::lock_guard<std::mutex> lock(mu_);
  return revision_;
}

int64_t JobMirror::lists() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lists_;
}

absl::Status JobMirror::WaitFor(store::Revision revision, absl::Time deadline) const {
  std::unique_lock<std::mutex> lock(mu_);
  while (revision_ < revision) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(
          fmt::format("the job mirror applied revision {}, not yet {}", revision_, revision));
    }
    changed_.wait_for(lock, absl::ToChronoMilliseconds(left) + std::chrono::milliseconds(1));
  }
  return absl::OkStatus();
}

absl::StatusOr<MirroredJobs> JobMirror::HandOver(store::Store& fenced, std::string_view leader,
                                                 absl::Time deadline) {
  if (lists() == 0) return absl::UnavailableError("the job mirror has not listed the store yet");
  absl::StatusOr<store::TxnResult> written = fenced.Commit(
      store::Txn::Unconditional({store::Op::Put(std::string(kHandOverKey), std::string(leader))}));
  if (!written.ok()) return written.status();
  if (absl::Status s = WaitFor(written->revision, deadline); !s.ok()) return s;
  Stop();
  std::lock_guard<std::mutex> lock(mu_);
  MirroredJobs handed{.jobs = std::move(jobs_), .revision = revision_};
  jobs_.clear();
  for (const auto& [id, record] : handed.jobs) {
    for (const std::optional<TaskRuntime>& task : record.stored_tasks) {
      handed.stored_tasks += task.has_value() ? 1 : 0;
    }
  }
  return handed;
}

void JobMirror::Follow() {
  while (true) {
    const absl::Status ended = ListAndWatch();
    if (stopping()) return;
    std::fprintf(stderr, "tessera: job mirror: %s; listing the store again\n",
                 ended.ToString().c_str());
    if (!Pause()) return;
  }
}

bool JobMirror::Pause() {
  std::unique_lock<std::mutex> lock(mu_);
  return !changed_.wait_for(lock, options_.retry, [this] { return stopping_; });
}

absl::Status JobMirror::ListAndWatch() {
  // Tasks first (see the header), and the watch from the first page's revision on.
  std::vector<store::KeyValue> tasks;
  std::unique_ptr<store::Watcher> watcher;
  store::Revision first = 0;
  store::RangeRequest request{.prefix = std::string(kTaskPrefix), .limit = kPageSize};
  while (true) {
    absl::StatusOr<store::RangeResult> page = options_.store->Range(request);
    if (!page.ok()) return page.status();
    if (watcher == nullptr) {
      first = page->revision;
      absl::StatusOr<std::unique_ptr<store::Watcher>> watch =
          options_.store->Watch(options_.prefix, first + 1);
      if (!watch.ok()) return watch.status();
      watcher = *std::move(watch);
    }
    for (store::KeyValue& kv : page->kvs) tasks.push_back(std::move(kv));
    if (!page->more) break;
    request.after = tasks.back().key;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return absl::CancelledError("stopped");
    watcher_ = watcher.get();
  }
  // Runs before `watcher` is destroyed (declared after it).
  absl::Cleanup unwatch = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    watcher_ = nullptr;
  };
  // The job keys, then the specs: every listed job's spec is listed too (specs are never
  // deleted, and a job's spec is written in the same transaction as its first record).
  std::vector<store::KeyValue> records;
  std::map<int64_t, spec::JobDocument> specs;
  for (const std::string_view prefix : {kJobPrefix, kSpecPrefix}) {
    request = {.prefix = std::string(prefix), .limit = kPageSize};
    while (true) {
      absl::StatusOr<store::RangeResult> page = options_.store->Range(request);
      if (!page.ok()) return page.status();
      for (store::KeyValue& kv : page->kvs) {
        if (prefix == kJobPrefix) {
          records.push_back(std::move(kv));
          continue;
        }
        absl::StatusOr<spec::JobDocument> document = DecodeJobSpec(kv.key, kv.value);
        if (!document.ok()) return document.status();
        specs.emplace_hint(specs.end(), *ParseJobId(document->metadata.id), *std::move(document));
      }
      if (!page->more) break;
      if (stopping()) return absl::CancelledError("stopped");
      request.after = page->kvs.back().key;
    }
  }
  std::map<int64_t, JobRecord> jobs;
  for (const store::KeyValue& kv : records) {
    absl::StatusOr<JobRecord> record = DecodeJobRecord(kv, specs);
    if (!record.ok()) return record.status();
    jobs.emplace_hint(jobs.end(), record->id, *std::move(record));
  }
  for (const store::KeyValue& kv : tasks) {
    if (absl::Status s = LoadStoredTask(jobs, kv.key, kv.value); !s.ok()) return s;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_ = std::move(jobs);
    revision_ = std::max(revision_, first);
    ++lists_;
  }
  changed_.notify_all();
  while (true) {
    absl::StatusOr<std::vector<store::Event>> events = watcher->Next();
    if (!events.ok()) return events.status();
    if (absl::Status s = Apply(*events); !s.ok()) return s;
  }
}

bool JobMirror::stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

absl::Status JobMirror::Apply(const std::vector<store::Event>& events) {
  // Decoded outside the lock: only this thread changes jobs_, so it may read them unlocked.
  std::map<int64_t, spec::JobDocument> batch_specs;
  for (const store::Event& event : events) {
    if (event.kv.key.starts_with(kSpecPrefix) && event.type == store::Event::Type::kPut) {
      absl::StatusOr<spec::JobDocument> document = DecodeJobSpec(event.kv.key, event.kv.value);
      if (!document.ok()) return document.status();
      batch_specs[*ParseJobId(document->metadata.id)] = *std::move(document);
    }
  }
  std::vector<Change> changes;
  for (const store::Event& event : events) {
    const std::string& key = event.kv.key;
    const std::optional<int64_t> id = IdOfKey(key, kJobPrefix);
    if (id.has_value() && event.type == store::Event::Type::kPut) {
      absl::StatusOr<JobRecord> record =
          DecodeJobRecord(key, event.kv.value, SpecFor(*id, batch_specs, jobs_));
      if (!record.ok()) return record.status();
      changes.push_back({&event, *std::move(record)});
    } else if (key.starts_with(kJobPrefix) || key.starts_with(kTaskPrefix)) {
      changes.push_back({&event, std::nullopt});
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Change& change : changes) {
      const store::Event& event = *change.event;
      const std::string& key = event.kv.key;
      if (change.record.has_value()) {
        PutJob(jobs_, *std::move(change.record));
      } else if (key.starts_with(kJobPrefix)) {
        // Jobs are never deleted today; a deleted one is simply gone.
        if (const std::optional<int64_t> id = IdOfKey(key, kJobPrefix)) jobs_.erase(*id);
      } else if (event.type == store::Event::Type::kPut) {
        if (absl::Status s = LoadStoredTask(jobs_, key, event.kv.value); !s.ok()) return s;
      } else if (absl::Status s = ResetStoredTask(jobs_, key); !s.ok()) {
        return s;
      }
    }
    if (!events.empty()) revision_ = std::max(revision_, events.back().revision());
  }
  changed_.notify_all();
  return absl::OkStatus();
}

}  // namespace tessera::server
