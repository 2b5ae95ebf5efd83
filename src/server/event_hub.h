// EventHub: fans job events out to the API's watchers (REST /api/v1/watch, gRPC
// WatchJobEvents).
//
// A subscriber names what it may see (its caller: a tenant sees its own jobs, an admin all) and
// optionally one job; Publish hands each durable event to every matching subscriber's bounded
// queue. A subscriber that falls `max_queued` events behind is dropped: its stream answers
// ResourceExhausted once its queue is read, so a slow client never holds the control plane
// back. Shutdown ends every stream with Cancelled.
// Thread-safety: every method may be called concurrently; a stream is read by one thread.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "server/job_service.h"

namespace tessera::server {

class EventHub {
 public:
  explicit EventHub(size_t max_queued = 10'000) : max_queued_(max_queued) {}
  ~EventHub();

  // A stream of the events published from now on that `caller` may see, of `job_id` only
  // when it is not empty.
  std::unique_ptr<EventStream> Subscribe(const Caller& caller, std::string job_id);
  // `tenant` owns the event's job.
  void Publish(const JobEvent& event, const std::string& tenant);
  void Shutdown();

 private:
  class Subscription;
  friend class Subscription;
  void Unsubscribe(Subscription* subscription);

  const size_t max_queued_;
  std::mutex mu_;
  std::set<Subscription*> subscribers_;
  bool shut_down_ = false;
};

}  // namespace tessera::server
