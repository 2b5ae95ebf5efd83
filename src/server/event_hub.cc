#include "server/event_hub.h"

#include <condition_variable>
#include <deque>
#include <utility>

namespace tessera::server {

class EventHub::Subscription final : public EventStream {
 public:
  Subscription(EventHub* hub, Caller caller, std::string job_id)
      : hub_(hub), caller_(std::move(caller)), job_id_(std::move(job_id)) {}
  ~Subscription() override { hub_->Unsubscribe(this); }

  bool Wants(const JobEvent& event, const std::string& tenant) const {
    if (!caller_.admin && caller_.tenant != tenant) return false;
    return job_id_.empty() || job_id_ == event.job_id;
  }

  // Called with the hub's lock held.
  void Push(const JobEvent& event, size_t max_queued) {
    std::lock_guard<std::mutex> lock(mu_);
    if (overflowed_) return;
    if (queue_.size() >= max_queued) {
      overflowed_ = true;
    } else {
      queue_.push_back(event);
    }
    ready_.notify_one();
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    ready_.notify_one();
  }

  absl::StatusOr<std::optional<JobEvent>> Next(std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    ready_.wait_for(lock, timeout, [&] { return !queue_.empty() || overflowed_ || closed_; });
    if (!queue_.empty()) {
      JobEvent event = std::move(queue_.front());
      queue_.pop_front();
      return std::optional<JobEvent>(std::move(event));
    }
    if (overflowed_) {
      return absl::ResourceExhaustedError(
          "the watcher fell too far behind and events were dropped; read the job again and "
          "watch from there");
    }
    if (closed_) return absl::CancelledError("the server is stopping");
    return std::optional<JobEvent>();
  }

 private:
  EventHub* const hub_;
  const Caller caller_;
  const std::string job_id_;
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<JobEvent> queue_;
  bool overflowed_ = false;
  bool closed_ = false;
};

EventHub::~EventHub() { Shutdown(); }

std::unique_ptr<EventStream> EventHub::Subscribe(const Caller& caller, std::string job_id) {
  auto subscription = std::make_unique<Subscription>(this, caller, std::move(job_id));
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_down_) {
    subscription->Close();
  } else {
    subscribers_.insert(subscription.get());
  }
  return subscription;
}

void EventHub::Publish(const JobEvent& event, const std::string& tenant) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Subscription* subscriber : subscribers_) {
    if (subscriber->Wants(event, tenant)) subscriber->Push(event, max_queued_);
  }
}

void EventHub::Shutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  shut_down_ = true;
  for (Subscription* subscriber : subscribers_) subscriber->Close();
  subscribers_.clear();
}

void EventHub::Unsubscribe(Subscription* subscription) {
  std::lock_guard<std::mutex> lock(mu_);
  subscribers_.erase(subscription);
}

}  // namespace tessera::server
