// EventQueue: the discrete-event engine's agenda, on a simulated clock.
//
// Events are ordered by (time, priority class, sequence number): ties at one instant run in a
// fixed class order (the scenario contract: node events, then task completions, then
// submissions, then the scheduling cycle) and, within a class, in insertion order. So a run is
// deterministic for the same inputs. The queue owns a ManualClock that it advances as events
// are popped. Not thread-safe: the simulation runs on one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "tessera/common/clock.h"

namespace tessera::sim {

// The order of events at one instant.
enum class EventClass : int32_t {
  kClusterEvent = 0,    // node and device events, cancellations
  kTaskCompletion = 1,  // tasks that end, evictions whose grace ends
  kSubmission = 2,      // jobs arriving
  kCycle = 3,           // a scheduling cycle
  kObserve = 4,         // checks and metrics, after the cycle
};

class EventQueue {
 public:
  using Action = std::function<void()>;

  // Schedules `action` at `at`. REQUIRES: at >= Now().
  void Push(TimePoint at, EventClass cls, Action action);

  bool empty() const { return heap_.empty(); }
  // The time of the next event. REQUIRES: !empty().
  TimePoint NextTime() const { return heap_.top().at; }
  // Advances the clock to the next event and runs it. REQUIRES: !empty().
  void RunNext();

  const ManualClock& clock() const { return clock_; }
  TimePoint Now() const { return clock_.Now(); }

 private:
  struct Event {
    TimePoint at;
    EventClass cls;
    uint64_t seq;
    Action action;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.at != b.at) return a.at > b.at;
      if (a.cls != b.cls) return a.cls > b.cls;
      return a.seq > b.seq;
    }
  };

  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_seq_ = 0;
  ManualClock clock_;
};

}  // namespace tessera::sim
