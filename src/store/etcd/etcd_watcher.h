// EtcdWatcher: a Watcher (tessera/store/watcher.h) over one etcd watch stream.
//
// A reader thread reads the stream into a buffer of at most `buffer_events` events and then
// stops reading until the consumer takes them: gRPC's flow control then holds etcd back, and
// etcd lets a slow watcher catch up from its own history, so a slow consumer never slows the
// writers. etcd sends all the events of one revision in one response (fragmenting is not asked
// for), so Next hands out whole revisions.
//
// Ends: a watch whose start revision etcd has compacted ends with OutOfRange; Cancel ends it
// with Cancelled; the store closing (Close) or the stream failing ends it with Unavailable.
// Thread-safety: as Watcher; Close from any thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "etcd/etcdserverpb/rpc.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "tessera/store/watcher.h"

namespace tessera::store::etcd {

class EtcdWatcher final : public Watcher {
 public:
  // Opens the stream and asks etcd to watch every key under `prefix` from etcd revision
  // `start` (0: from the next one). Errors: Unavailable when etcd cannot be reached.
  static absl::StatusOr<std::unique_ptr<EtcdWatcher>> Start(etcdserverpb::Watch::Stub& stub,
                                                            const std::string& prefix,
                                                            int64_t start, size_t buffer_events);
  ~EtcdWatcher() override;

  absl::StatusOr<std::vector<Event>> Next(absl::Time deadline) override;
  void Cancel() override;
  // The store is closing: a blocked Next returns Unavailable, and so does every later call.
  void Close();

 private:
  explicit EtcdWatcher(size_t buffer_events) : buffer_events_(buffer_events) {}
  // The reader thread: ReadStream, then closes the stream.
  void ReadLoop();
  // Reads responses into the buffer until the watch ends.
  void ReadStream();
  // Ends the watch with `status` (the first end wins) and stops the stream.
  void End(absl::Status status);

  const size_t buffer_events_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<etcdserverpb::WatchRequest, etcdserverpb::WatchResponse>>
      stream_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::vector<Event>> revisions_;  // whole revisions, oldest first
  size_t buffered_ = 0;                       // events in revisions_
  absl::Status end_;                          // OK while the watch runs
  std::thread reader_;
};

}  // namespace tessera::store::etcd
