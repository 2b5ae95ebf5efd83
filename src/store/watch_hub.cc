#include "store/watch_hub.h"

#include <algorithm>
#include <deque>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "store/key_range.h"

namespace tessera::store {

struct WatchHub::Stream {
  explicit Stream(std::string_view p, Revision next_revision, bool is_synced)
      : prefix(p), next(next_revision), synced(is_synced) {}

  const std::string prefix;
  absl::Mutex mu;
  std::deque<Event> buffer ABSL_GUARDED_BY(mu);
  // The first revision not yet handed to this stream (buffered or returned).
  Revision next ABSL_GUARDED_BY(mu);
  bool synced ABSL_GUARDED_BY(mu);
  // OK while the watch is live; its final status once it has ended.
  absl::Status end ABSL_GUARDED_BY(mu);
};

class WatchHub::StreamWatcher final : public Watcher {
 public:
  StreamWatcher(std::shared_ptr<WatchHub> hub, std::shared_ptr<Stream> stream)
      : hub_(std::move(hub)), stream_(std::move(stream)) {}
  ~StreamWatcher() override {
    Cancel();
    hub_->Unregister(stream_.get());
  }

  absl::StatusOr<std::vector<Event>> Next(absl::Time deadline) override {
    return hub_->Next(*stream_, deadline);
  }

  void Cancel() override {
    absl::MutexLock lock(&stream_->mu);
    if (stream_->end.ok()) stream_->end = absl::CancelledError("watch cancelled");
  }

 private:
  std::shared_ptr<WatchHub> hub_;
  std::shared_ptr<Stream> stream_;
};

std::shared_ptr<WatchHub> WatchHub::Create(Revision published, Revision compacted,
                                           size_t buffer_events, HistoryReader reader) {
  return std::shared_ptr<WatchHub>(
      new WatchHub(published, compacted, buffer_events, std::move(reader)));
}

WatchHub::WatchHub(Revision published, Revision compacted, size_t buffer_events,
                   HistoryReader reader)
    : buffer_events_(std::max<size_t>(buffer_events, 1)),
      published_(published),
      compacted_(compacted),
      reader_(std::move(reader)) {}

absl::StatusOr<std::unique_ptr<Watcher>> WatchHub::Watch(std::string_view prefix, Revision from) {
  if (from < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("watch: from_revision ", from, " must be >= 0 (0: from now on)"));
  }
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::UnavailableError("watch: the store is closed");
  if (from != 0 && from < compacted_) {
    return absl::OutOfRangeError(
        absl::StrCat("watch: revision ", from, " has been compacted (history starts at ",
                     compacted_, "); list again and watch from the list's revision + 1"));
  }
  // Revisions after the published ones will all be published: no history read is needed.
  bool live = from == 0 || from > published_;
  auto stream = std::make_shared<Stream>(prefix, from == 0 ? published_ + 1 : from, live);
  streams_.emplace(stream.get(), stream);
  return std::make_unique<StreamWatcher>(shared_from_this(), std::move(stream));
}

void WatchHub::Publish(const std::vector<Event>& events, Revision last) {
  absl::MutexLock lock(&mu_);
  published_ = last;
  for (auto& [key, stream] : streams_) {
    absl::MutexLock stream_lock(&stream->mu);
    if (!stream->synced || !stream->end.ok()) continue;
    size_t matching = 0;
    for (const Event& event : events) {
      matching += event.revision() >= stream->next && HasPrefix(event.kv.key, stream->prefix);
    }
    if (stream->buffer.size() + matching > buffer_events_) {
      // The consumer is behind: it reads these events from the history itself.
      stream->synced = false;
      continue;
    }
    for (const Event& event : events) {
      if (event.revision() >= stream->next && HasPrefix(event.kv.key, stream->prefix)) {
        stream->buffer.push_back(event);
      }
    }
    stream->next = std::max(stream->next, last + 1);
  }
}

void WatchHub::SetCompacted(Revision compacted) {
  absl::MutexLock lock(&mu_);
  compacted_ = compacted;
}

void WatchHub::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  reader_ = nullptr;
  for (auto& [key, stream] : streams_) {
    absl::MutexLock stream_lock(&stream->mu);
    if (stream->end.ok()) stream->end = absl::UnavailableError("watch: the store was closed");
  }
  streams_.clear();
}

void WatchHub::Unregister(const Stream* stream) {
  absl::MutexLock lock(&mu_);
  streams_.erase(stream);
}

absl::StatusOr<std::vector<Event>> WatchHub::Next(Stream& stream, absl::Time deadline) {
  while (true) {
    {
      absl::MutexLock lock(&stream.mu);
      auto ready = [&stream]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(stream.mu) {
        return !stream.end.ok() || !stream.buffer.empty() || !stream.synced;
      };
      if (!stream.mu.AwaitWithDeadline(absl::Condition(&ready), deadline)) {
        return std::vector<Event>();
      }
      if (!stream.end.ok()) return stream.end;
      if (!stream.buffer.empty()) {
        std::vector<Event> events(std::make_move_iterator(stream.buffer.begin()),
                                  std::make_move_iterator(stream.buffer.end()));
        stream.buffer.clear();
        return events;
      }
    }
    absl::StatusOr<std::vector<Event>> events = CatchUp(stream);
    if (!events.ok() || !events->empty()) return events;
  }
}

absl::StatusOr<std::vector<Event>> WatchHub::CatchUp(Stream& stream) {
  HistoryReader reader;
  {
    absl::MutexLock lock(&mu_);
    reader = reader_;
  }
  Revision from;
  {
    absl::MutexLock lock(&stream.mu);
    from = stream.next;
  }
  absl::StatusOr<HistoryChunk> chunk = reader
                                           ? reader(stream.prefix, from, buffer_events_)
                                           : absl::UnavailableError("watch: the store was closed");
  absl::MutexLock lock(&mu_);
  absl::MutexLock stream_lock(&stream.mu);
  if (!stream.end.ok()) return stream.end;
  if (!chunk.ok()) {
    stream.end = chunk.status();
    return stream.end;
  }
  if (!chunk->events.empty()) stream.next = chunk->events.back().revision() + 1;
  if (chunk->complete) {
    stream.next = std::max(stream.next, chunk->read_revision + 1);
    // Rejoin only if nothing beyond the read was published meanwhile: those events were not
    // handed to this stream and are not in the chunk.
    stream.synced = published_ <= chunk->read_revision;
  }
  return std::move(chunk->events);
}

}  // namespace tessera::store
