#include "agent/kubernetes/informer.h"

#include <algorithm>
#include <utility>

#include "agent/kubernetes/api_status.h"
#include "fmt/format.h"

namespace tessera::agent::k8s {

Informer::Informer(std::unique_ptr<KubernetesApiClient> client, InformerOptions options,
                   InformerHandler handler)
    : client_(std::move(client)), options_(std::move(options)), handler_(std::move(handler)) {}

Informer::~Informer() { Stop(); }

void Informer::Start(std::string resource_version) {
  thread_ = std::thread([this, rv = std::move(resource_version)]() mutable {
    Run(std::move(rv));
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    wake_.notify_all();
  });
}

void Informer::Stop() {
  if (!thread_.joinable()) return;
  std::unique_lock<std::mutex> lock(mu_);
  stopping_ = true;
  wake_.notify_all();
  // A request that was about to connect when Stop() first ran is aborted by a later call.
  while (!done_) {
    client_->Stop();
    wake_.wait_for(lock, std::chrono::milliseconds(20));
  }
  lock.unlock();
  thread_.join();
}

Query Informer::WithSelector(Query query) const {
  if (!options_.label_selector.empty()) {
    query.emplace_back("labelSelector", options_.label_selector);
  }
  return query;
}

void Informer::Backoff(bool failure) {
  // Consecutive failures wait longer: 1, 2, 4, ... 32 x retry_backoff.
  const Duration wait = options_.retry_backoff * (int64_t{1} << std::min(failures_, 5));
  if (failure) ++failures_;
  std::unique_lock<std::mutex> lock(mu_);
  wake_.wait_for(lock, wait, [this] { return stopping_; });
}

std::string Informer::List() {
  ++lists_;
  if (handler_.before_list) handler_.before_list();
  absl::StatusOr<Json> answer = client_->Get(options_.path, WithSelector({}));
  if (!answer.ok()) {
    if (answer.status().code() != absl::StatusCode::kCancelled) {
      options_.log(
          fmt::format("list {}: {}", options_.path, std::string(answer.status().message())));
    }
    return "";
  }
  absl::StatusOr<ObjectList> list = ObjectListFromJson(*answer, options_.path);
  if (!list.ok()) {
    options_.log(std::string(list.status().message()));
    return "";
  }
  if (list->resource_version.empty()) {
    options_.log(fmt::format("list {}: the answer has no metadata.resourceVersion", options_.path));
    return "";
  }
  failures_ = 0;
  handler_.on_list(list->items);
  return list->resource_version;
}

bool Informer::WatchFrom(std::string& resource_version) {
  ++watches_;
  bool relist = false;
  int64_t lines = 0;
  const Query query =
      WithSelector({{"watch", "1"},
                    {"resourceVersion", resource_version},
                    {"allowWatchBookmarks", "true"},
                    {"timeoutSeconds", std::to_string(options_.watch_timeout_seconds)}});
  absl::Status status = client_->Watch(options_.path, query, [&](std::string_view line) {
    ++lines;
    failures_ = 0;
    absl::StatusOr<WatchEvent> event = ParseWatchEvent(line);
    if (!event.ok()) {
      options_.log(
          fmt::format("watch {}: {}", options_.path, std::string(event.status().message())));
      return true;
    }
    if (event->type == WatchEventType::kError) {
      absl::Status error = ApiErrorFromStatusObject(
          fmt::format("watch {} from resourceVersion {}", options_.path, resource_version),
          event->object);
      if (!IsResourceVersionExpired(error)) options_.log(std::string(error.message()));
      relist = true;
      return false;
    }
    const std::string rv = ResourceVersionOf(event->object);
    if (event->type != WatchEventType::kBookmark) handler_.on_event(event->type, event->object);
    if (!rv.empty()) resource_version = rv;
    return true;
  });
  if (status.code() == absl::StatusCode::kCancelled) return false;
  if (!status.ok()) {
    if (!IsResourceVersionExpired(status)) {
      options_.log(fmt::format("watch {}: {}", options_.path, std::string(status.message())));
      Backoff(/*failure=*/true);
    }
    return false;
  }
  // A watch the server closed without a line: wait a little rather than spin.
  if (lines == 0 && !relist) Backoff(/*failure=*/false);
  return !relist;
}

void Informer::Run(std::string resource_version) {
  auto stopping = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    return stopping_;
  };
  while (!stopping()) {
    if (resource_version.empty()) {
      resource_version = List();
      if (resource_version.empty()) {
        Backoff(/*failure=*/true);
        continue;
      }
    }
    if (!WatchFrom(resource_version)) resource_version.clear();
  }
}

}  // namespace tessera::agent::k8s
