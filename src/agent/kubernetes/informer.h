// Informer: keeps up with one kind of Kubernetes object by listing it, then watching it from
// the list's resourceVersion, forever.
//
// One thread runs: LIST (handler.on_list with every object) -> WATCH from the last
// resourceVersion seen (handler.on_event per ADDED / MODIFIED / DELETED event; BOOKMARKs only
// move the resourceVersion on) -> when the watch ends (the server's timeoutSeconds, a broken
// connection) watch again from where it stopped; when the server says the resourceVersion is
// too old (HTTP 410 or an ERROR event with code 410) or another error, LIST again. Failed
// requests are logged and retried after `retry_backoff`, doubled after each consecutive
// failure up to 32 times it. Malformed lines are logged and skipped.
//
// Thread-safety: the handler runs on the informer's thread only, one call at a time.
// Start and Stop are called by the owner (once each).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/kubernetes/api_client.h"
#include "agent/kubernetes/watch_event.h"

namespace tessera::agent::k8s {

using LogFunction = std::function<void(std::string_view line)>;

struct InformerHandler {
  // Runs right before a LIST request is sent.
  std::function<void()> before_list;
  std::function<void(const std::vector<Json>& items)> on_list;
  std::function<void(WatchEventType type, const Json& object)> on_event;
};

struct InformerOptions {
  std::string path;            // "/api/v1/nodes"
  std::string label_selector;  // "" selects every object
  Duration retry_backoff{std::chrono::seconds(1)};
  int watch_timeout_seconds = 300;  // the server ends a watch after this; it is then renewed
  LogFunction log;
};

class Informer {
 public:
  Informer(std::unique_ptr<KubernetesApiClient> client, InformerOptions options,
           InformerHandler handler);
  ~Informer();  // stops

  // Starts the thread. `resource_version`: of a LIST the owner already handled; "" lists first.
  void Start(std::string resource_version);
  // Aborts the request in flight and joins the thread. Idempotent.
  void Stop();

  // Lists and watches started so far (tests use them to see a relist happen).
  int64_t lists() const { return lists_; }
  int64_t watches() const { return watches_; }

 private:
  void Run(std::string resource_version);
  // One LIST; the new resourceVersion, or "" after an error (logged).
  std::string List();
  // One WATCH from `resource_version` (updated as events arrive). False: list again.
  bool WatchFrom(std::string& resource_version);
  // Waits before the next attempt (longer after each consecutive `failure`), or until Stop().
  void Backoff(bool failure);
  Query WithSelector(Query query) const;

  std::unique_ptr<KubernetesApiClient> client_;
  const InformerOptions options_;
  const InformerHandler handler_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool done_ = false;
  int failures_ = 0;  // consecutive failed lists and watches (the informer's thread only)
  std::atomic<int64_t> lists_{0};
  std::atomic<int64_t> watches_{0};
};

}  // namespace tessera::agent::k8s
