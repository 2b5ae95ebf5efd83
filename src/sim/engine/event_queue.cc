#include "sim/engine/event_queue.h"

#include <utility>

namespace tessera::sim {

void EventQueue::Push(TimePoint at, EventClass cls, Action action) {
  heap_.push(Event{at, cls, next_seq_++, std::move(action)});
}

void EventQueue::RunNext() {
  // Copy out before popping: the action may push new events.
  Event event = heap_.top();
  heap_.pop();
  clock_.Set(event.at);
  event.action();
}

}  // namespace tessera::sim
