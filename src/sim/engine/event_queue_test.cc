#include "sim/engine/event_queue.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tessera::sim {
namespace {

TimePoint At(int64_t seconds) { return TimePoint{} + std::chrono::seconds(seconds); }

TEST(EventQueueTest, OrdersByTimeThenClassThenInsertion) {
  EventQueue q;
  std::vector<std::string> seen;
  q.Push(At(5), EventClass::kSubmission, [&] { seen.push_back("submit@5"); });
  q.Push(At(5), EventClass::kClusterEvent, [&] { seen.push_back("node@5"); });
  q.Push(At(1), EventClass::kCycle, [&] { seen.push_back("cycle@1"); });
  q.Push(At(5), EventClass::kClusterEvent, [&] { seen.push_back("node2@5"); });
  while (!q.empty()) q.RunNext();
  EXPECT_EQ(seen, (std::vector<std::string>{"cycle@1", "node@5", "node2@5", "submit@5"}));
  EXPECT_EQ(q.Now(), At(5));
}

TEST(EventQueueTest, ActionsMayPushEventsAtTheSameInstant) {
  EventQueue q;
  std::vector<std::string> seen;
  q.Push(At(2), EventClass::kSubmission, [&] {
    seen.push_back("submit");
    q.Push(q.Now(), EventClass::kCycle, [&] { seen.push_back("cycle"); });
  });
  q.Push(At(3), EventClass::kClusterEvent, [&] { seen.push_back("later"); });
  while (!q.empty()) q.RunNext();
  EXPECT_EQ(seen, (std::vector<std::string>{"submit", "cycle", "later"}));
}

}  // namespace
}  // namespace tessera::sim
