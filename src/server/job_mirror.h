// JobMirror: the job records of the store, kept current by following its watch. A standby
// replica of a highly available control plane (docs/operations.md) holds one, so that once
// elected it starts from these records (JobManagerOptions::stored_jobs) instead of reading and
// decoding every job and task key, and serves reads from them meanwhile (StandbyJobService).
//
// Following. A thread of the mirror's lists the task keys (kTaskPrefix), the job keys
// (kJobPrefix) and their specs (kSpecPrefix), decodes them as JobManager::Start does
// (DecodeJobSpec, DecodeJobRecord, then LoadStoredTask), and follows one watch of `prefix` from
// the revision of the first page read on. Each change of a job or task key is applied as the
// store now holds the key: a job key is decoded with its spec (put in the same batch of events
// when the job is new, else the one its record holds) and replaces its record, keeping the tasks
// stored under their own keys; a stored task is applied with
// LoadStoredTask, and its deletion makes the task initial again (ResetStoredTask). Changes of
// other keys only move revision() on. The listing reads several pages at increasing revisions
// while the leader may write: the watch replays every change after the first page, and applying
// a change sets a key to its new state, so a key listed late is at worst already newer than the
// revision the replay has reached — the list-then-watch of Kubernetes informers. Tasks are
// listed before jobs so that every listed task finds its job (jobs are never deleted, and a
// job's key is written before, or in the same transaction as, its tasks' keys).
// A watch that ends (OutOfRange: its history was compacted away; Unavailable: the store or its
// connection went), a page that cannot be read or a record that does not decode starts a fresh
// list and watch `retry` later; the records of the last list are served meanwhile. Nothing of
// that ends the mirror: it follows the store until it is handed over or destroyed.
//
// Hand-over (HandOver). A new leader must start from every write its predecessors made. Each
// leader's writes are fenced on its election key (store/fenced_store.h), so none of them commits
// once that key is deleted; and a replica is elected only when no older election key is left
// (store/etcd/etcd_election.h: the read that finds its own key the oldest comes after every
// predecessor's key was deleted — each predecessor's key is older than this replica's, since it
// led while it was the oldest key there was). The new leader's term — its key's create revision —
// is no such bound: the key was created when the replica began to campaign, usually long before its
// predecessor's last write. So the new leader puts kHandOverKey through its own fenced store
// after it was elected: that write's revision comes after the deletion of every predecessor's
// key, and so after every write any predecessor made. The watch delivers changes in revision
// order; once the mirror has applied that revision it has applied all of those writes. After
// it only the new leader writes jobs, and it writes none before it has taken the records.
//
// Thread-safety: every method may be called from any thread. Read holds the mirror's lock while
// its callback runs, and the following thread waits for it: keep it short.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/job_record.h"
#include "tessera/common/clock.h"
#include "tessera/store/store.h"

namespace tessera::server {

// Written by a newly elected leader to mark the point from which it alone writes (HandOver);
// its value is the leader's election key.
inline constexpr std::string_view kHandOverKey = "/tessera/handover";

struct JobMirrorOptions {
  store::Store* store = nullptr;  // required; outlives the mirror
  // The watched prefix: it must hold kSpecPrefix, kJobPrefix, kTaskPrefix and kHandOverKey.
  std::string prefix = "/tessera/";
  Duration retry{1000};  // from a failed list or an ended watch to the next list
};

// The records a mirror hands over.
struct MirroredJobs {
  std::map<int64_t, JobRecord> jobs;  // by id, stored tasks applied
  store::Revision revision = 0;       // every change up to it is applied
  int64_t stored_tasks = 0;           // tasks applied from their own keys
};

class JobMirror {
 public:
  // Starts following the store. REQUIRES: options.store is not null.
  explicit JobMirror(JobMirrorOptions options);
  // Stops following (Stop).
  ~JobMirror();
  JobMirror(const JobMirror&) = delete;
  JobMirror& operator=(const JobMirror&) = delete;

  // Calls `read` with the records by id, under the mirror's lock: empty until the first list is
  // complete, then as of revision().
  void Read(const std::function<void(const std::map<int64_t, JobRecord>&)>& read) const;
  // Every change of the store up to this revision is applied (a key may show a later state
  // while a list is replayed); 0 until the first list is complete.
  store::Revision revision() const;
  // How many lists have completed: 1 after the first, one more after each recovery.
  int64_t lists() const;

  // Waits until revision() >= `revision`. DeadlineExceeded when `deadline` passes first.
  absl::Status WaitFor(store::Revision revision, absl::Time deadline) const;

  // For a newly elected leader (see "Hand-over" above): puts kHandOverKey (value `leader`, its
  // election key) through `fenced`, its fenced store, waits until the mirror has applied that
  // write, stops following and returns the records. Errors: Unavailable when no list has
  // completed yet (the caller reads the store itself); the write's error (fenced:
  // FailedPrecondition); DeadlineExceeded when the write is not applied by `deadline`. After
  // an error the mirror goes on following (and may be asked again); after success it is stopped
  // and empty.
  absl::StatusOr<MirroredJobs> HandOver(store::Store& fenced, std::string_view leader,
                                        absl::Time deadline);

  // Stops following; the records stay readable. Idempotent.
  void Stop();

 private:
  void Follow();
  // One list and the watch after it; returns why the watch ended (or the list failed).
  absl::Status ListAndWatch();
  // Applies one batch of watch events (all events of a revision are in one batch).
  absl::Status Apply(const std::vector<store::Event>& events);
  // Waits `retry` unless stopped first; false when stopped.
  bool Pause();
  bool stopping() const;

  const JobMirrorOptions options_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;  // revision_ moved, or stopping_ was set
  std::map<int64_t, JobRecord> jobs_;
  store::Revision revision_ = 0;
  int64_t lists_ = 0;
  bool stopping_ = false;
  store::Watcher* watcher_ = nullptr;  // the live watch, cancelled by Stop
  std::thread follower_;
};

}  // namespace tessera::server
