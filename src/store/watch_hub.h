// WatchHub: fans committed events out to watchers, each in revision order and exactly once,
// without ever letting a slow watcher hold up the store's writer.
//
// A backend that keeps its change history (the SQLite backend does) owns one hub. Its writer
// calls Publish after every commit with the events of the newly committed revisions. Each
// watcher is in one of two modes:
//   synced       it receives published events into a bounded buffer. If a batch does not fit,
//                it drops to catching up — the writer never waits for a consumer;
//   catching up  its consumer reads the missing events from the history itself (through the
//                backend's HistoryReader, on the consumer's thread), chunk by chunk, and
//                rejoins the synced mode once a read has reached everything published so far.
// Every watcher records `next`, the first revision it has not yet been handed; published events
// below it are skipped. That one number, changed only under the hub's lock, is what makes the
// hand-over between history and live events free of gaps and duplicates: a history read that
// saw revision R rejoins only if nothing beyond R has been published yet, and then sets next
// to R + 1, so later publications of revisions <= R (committed but not yet published when the
// read ran) are skipped.
//
// Thread-safety: Publish, SetCompacted and Close are called by the backend (Publish from one
// writer thread, in revision order); Watch from any thread; the watchers as watcher.h says.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "tessera/store/event.h"
#include "tessera/store/watcher.h"

namespace tessera::store {

// One read of retained history for a catching-up watcher.
struct HistoryChunk {
  // Events under the prefix with revision >= the requested one, in revision order, holding
  // whole revisions.
  std::vector<Event> events;
  // The store revision the read observed: every committed revision up to it was visible.
  Revision read_revision = 0;
  // Whether `events` holds every matching event up to read_revision (false: a size limit cut
  // the read short, after the last revision in `events`).
  bool complete = true;
};

// Reads history under `prefix` from revision `from` on, at most about `max_events` events
// (whole revisions are never split, so a large transaction may exceed it). Returns OutOfRange
// when `from` is compacted away. Called on a consumer's thread with no hub lock held.
using HistoryReader = std::function<absl::StatusOr<HistoryChunk>(std::string_view prefix,
                                                                 Revision from, size_t max_events)>;

class WatchHub : public std::enable_shared_from_this<WatchHub> {
 public:
  // `published`: the revision up to which history is complete when the hub starts (the store's
  // current revision); `compacted`: the store's compaction revision; `buffer_events`: the
  // per-watcher buffer bound (>= 1), also the size of one history read.
  static std::shared_ptr<WatchHub> Create(Revision published, Revision compacted,
                                          size_t buffer_events, HistoryReader reader);

  // See Store::Watch.
  absl::StatusOr<std::unique_ptr<Watcher>> Watch(std::string_view prefix, Revision from);

  // Hands out the events of the revisions (previous `last`, `last`], in revision order.
  void Publish(const std::vector<Event>& events, Revision last);

  // Watch refuses revisions below `compacted` from now on.
  void SetCompacted(Revision compacted);

  // Ends every watcher with Unavailable and refuses new ones; drops the reader.
  void Close();

 private:
  struct Stream;
  class StreamWatcher;

  WatchHub(Revision published, Revision compacted, size_t buffer_events, HistoryReader reader);

  absl::StatusOr<std::vector<Event>> Next(Stream& stream, absl::Time deadline);
  absl::StatusOr<std::vector<Event>> CatchUp(Stream& stream);
  void Unregister(const Stream* stream);

  const size_t buffer_events_;
  absl::Mutex mu_;
  Revision published_ ABSL_GUARDED_BY(mu_);
  Revision compacted_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  HistoryReader reader_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<const Stream*, std::shared_ptr<Stream>> streams_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tessera::store
