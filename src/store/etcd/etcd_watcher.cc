#include "store/etcd/etcd_watcher.h"

#include <utility>

#include "store/etcd/etcd_messages.h"

namespace tessera::store::etcd {

absl::StatusOr<std::unique_ptr<EtcdWatcher>> EtcdWatcher::Start(etcdserverpb::Watch::Stub& stub,
                                                                const std::string& prefix,
                                                                int64_t start,
                                                                size_t buffer_events) {
  std::unique_ptr<EtcdWatcher> watcher(new EtcdWatcher(buffer_events));
  watcher->stream_ = stub.Watch(&watcher->context_);
  etcdserverpb::WatchRequest request;
  etcdserverpb::WatchCreateRequest* create = request.mutable_create_request();
  create->set_key(prefix.empty() ? std::string(1, '\0') : prefix);
  create->set_range_end(RangeEnd(prefix));
  create->set_start_revision(start);
  // etcd answers the create at once (a compacted start revision only later, while the watch
  // runs: EtcdStore::Watch checks it before, and ReadStream after).
  etcdserverpb::WatchResponse created;
  if (!watcher->stream_->Write(request) || !watcher->stream_->Read(&created)) {
    absl::Status status = FromGrpc(watcher->stream_->Finish());
    return status.ok() ? absl::UnavailableError("etcd: the watch stream closed at once") : status;
  }
  if (created.canceled()) {
    watcher->context_.TryCancel();
    (void)watcher->stream_->Finish();
    return absl::UnavailableError("etcd refused the watch: " + created.cancel_reason());
  }
  watcher->reader_ = std::thread([w = watcher.get()] { w->ReadLoop(); });
  return watcher;
}

EtcdWatcher::~EtcdWatcher() {
  Cancel();
  if (reader_.joinable()) reader_.join();
}

void EtcdWatcher::ReadLoop() {
  ReadStream();
  // Ended (by etcd, the consumer or the store): drain and close the stream.
  context_.TryCancel();
  etcdserverpb::WatchResponse ignored;
  while (stream_->Read(&ignored)) {
  }
  (void)stream_->Finish();
}

void EtcdWatcher::ReadStream() {
  etcdserverpb::WatchResponse response;
  while (stream_->Read(&response)) {
    if (response.compact_revision() > 0) {
      End(absl::OutOfRangeError(
          "etcd compacted the revisions this watch needs: list again and watch from there"));
      return;
    }
    if (response.canceled()) {
      End(absl::UnavailableError("etcd cancelled the watch: " + response.cancel_reason()));
      return;
    }
    std::unique_lock<std::mutex> lock(mu_);
    for (const mvccpb::Event& event : response.events()) {
      Event e = FromEtcd(event);
      if (revisions_.empty() || revisions_.back().back().revision() != e.revision()) {
        revisions_.emplace_back();
      }
      revisions_.back().push_back(std::move(e));
      ++buffered_;
    }
    if (!response.events().empty()) changed_.notify_all();
    // Full: stop reading until the consumer catches up (flow control holds etcd back).
    changed_.wait(lock, [&] { return buffered_ < buffer_events_ || !end_.ok(); });
    if (!end_.ok()) return;
  }
  End(absl::UnavailableError("etcd: the watch stream ended"));
}

absl::StatusOr<std::vector<Event>> EtcdWatcher::Next(absl::Time deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  while (revisions_.empty() && end_.ok()) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return std::vector<Event>{};
    if (deadline == absl::InfiniteFuture()) {
      changed_.wait(lock);
    } else {
      changed_.wait_for(lock, absl::ToChronoNanoseconds(left));
    }
  }
  // Cancelled and Unavailable end at once; OutOfRange after the events read before it.
  if (!end_.ok() && (revisions_.empty() || !absl::IsOutOfRange(end_))) return end_;
  std::vector<Event> out;
  while (!revisions_.empty()) {
    for (Event& e : revisions_.front()) out.push_back(std::move(e));
    revisions_.pop_front();
  }
  buffered_ = 0;
  changed_.notify_all();
  return out;
}

void EtcdWatcher::Cancel() { End(absl::CancelledError("the watch was cancelled")); }

void EtcdWatcher::Close() { End(absl::UnavailableError("the store is closed")); }

void EtcdWatcher::End(absl::Status status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!end_.ok()) return;
    end_ = std::move(status);
  }
  changed_.notify_all();
  context_.TryCancel();
}

}  // namespace tessera::store::etcd
