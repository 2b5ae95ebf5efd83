// Watcher: a stream of the changes under one key prefix, in revision order, each exactly once.
//
// Store::Watch(prefix, from_revision) returns a Watcher. It delivers every event (see
// event.h) whose key starts with the prefix and whose revision is >= from_revision: first the
// retained history, then live changes as they commit, with no gap and no duplicate, whatever
// the pace of the consumer. A slow consumer never slows the store's writers: a backend buffers
// a bounded number of events per watcher and, when the buffer fills, lets the watcher catch up
// from the store's history instead. If that history has meanwhile been compacted away, the
// watcher ends with OutOfRange and the consumer must list again (Store::Range) and watch from
// the list's revision + 1 — the list-then-watch pattern of Kubernetes informers.
//
// To resume after a restart, remember the revision of the last event processed and watch from
// that revision + 1.
//
// Thread-safety: Next is called by one consumer thread at a time; Cancel may be called from
// any thread, also while Next blocks. Destroying the Watcher cancels it. A Watcher may outlive
// its Store; it then ends with Unavailable.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tessera/store/event.h"

namespace tessera::store {

class Watcher {
 public:
  virtual ~Watcher() = default;

  // Blocks until at least one event is available, then returns the available events (one or
  // more, in revision order; all events of one revision in the same call). Returns an empty
  // vector once `deadline` passes with nothing available (a deadline in the past polls).
  //
  // Errors end the watch; every later call returns the same status:
  //   OutOfRange   the events from the watcher's position were compacted away;
  //   Cancelled    Cancel() was called;
  //   Unavailable  the store was closed;
  //   others       the backend failed reading its history (e.g. DataLoss, Internal).
  virtual absl::StatusOr<std::vector<Event>> Next(absl::Time deadline = absl::InfiniteFuture()) = 0;

  // Ends the watch: a blocked Next returns Cancelled, and so does every later call.
  // Idempotent.
  virtual void Cancel() = 0;
};

}  // namespace tessera::store
