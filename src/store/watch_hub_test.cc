#include "store/watch_hub.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "store/key_range.h"

namespace tessera::store {
namespace {

Event PutEvent(std::string key, Revision revision) {
  return {.type = Event::Type::kPut,
          .kv = {.key = std::move(key), .value = "v", .mod_revision = revision, .version = 1}};
}

std::vector<Revision> Revisions(const std::vector<Event>& events) {
  std::vector<Revision> revisions;
  for (const Event& event : events) revisions.push_back(event.revision());
  return revisions;
}

// The retained history of a store, in memory, read the way a backend's HistoryReader must.
class History {
 public:
  // Commits one revision with events on `keys`; returns them (not yet published).
  std::vector<Event> Commit(const std::vector<std::string>& keys) {
    absl::MutexLock lock(&mu_);
    ++revision_;
    std::vector<Event> events;
    for (const std::string& key : keys) events.push_back(PutEvent(key, revision_));
    events_.insert(events_.end(), events.begin(), events.end());
    return events;
  }
  Revision revision() {
    absl::MutexLock lock(&mu_);
    return revision_;
  }
  void Compact(Revision below) {
    absl::MutexLock lock(&mu_);
    compacted_ = below;
    std::erase_if(events_, [below](const Event& e) { return e.revision() < below; });
  }
  int reads() {
    absl::MutexLock lock(&mu_);
    return reads_;
  }

  HistoryReader Reader() {
    return [this](std::string_view prefix, Revision from,
                  size_t max_events) -> absl::StatusOr<HistoryChunk> {
      absl::MutexLock lock(&mu_);
      ++reads_;
      if (from < compacted_) return absl::OutOfRangeError("compacted");
      HistoryChunk chunk{.read_revision = revision_};
      for (const Event& event : events_) {
        if (event.revision() < from || !HasPrefix(event.kv.key, prefix)) continue;
        if (chunk.events.size() >= max_events &&
            event.revision() != chunk.events.back().revision()) {
          chunk.complete = false;
          break;
        }
        chunk.events.push_back(event);
      }
      return chunk;
    };
  }

 private:
  absl::Mutex mu_;
  std::vector<Event> events_;
  Revision revision_ = 0;
  Revision compacted_ = 0;
  int reads_ = 0;
};

class WatchHubTest : public ::testing::Test {
 protected:
  std::shared_ptr<WatchHub> MakeHub(size_t buffer_events) {
    return WatchHub::Create(history_.revision(), 0, buffer_events, history_.Reader());
  }
  // Commits and publishes one revision.
  void CommitAndPublish(WatchHub& hub, const std::vector<std::string>& keys) {
    std::vector<Event> events = history_.Commit(keys);
    hub.Publish(events, history_.revision());
  }
  // Drains a watcher without blocking.
  std::vector<Event> Drain(Watcher& watcher) {
    std::vector<Event> all;
    while (true) {
      absl::StatusOr<std::vector<Event>> events = watcher.Next(absl::InfinitePast());
      EXPECT_TRUE(events.ok()) << events.status();
      if (!events.ok() || events->empty()) return all;
      all.insert(all.end(), events->begin(), events->end());
    }
  }

  History history_;
};

TEST_F(WatchHubTest, LiveWatcherGetsPublishedEventsUnderItsPrefix) {
  auto hub = MakeHub(16);
  absl::StatusOr<std::unique_ptr<Watcher>> watcher = hub->Watch("/jobs/", 0);
  ASSERT_TRUE(watcher.ok());
  CommitAndPublish(*hub, {"/jobs/1", "/nodes/1"});
  CommitAndPublish(*hub, {"/nodes/2"});
  CommitAndPublish(*hub, {"/jobs/2"});
  EXPECT_THAT(Revisions(Drain(**watcher)), ::testing::ElementsAre(1, 3));
  EXPECT_EQ(history_.reads(), 0);
}

TEST_F(WatchHubTest, PastRevisionReplaysHistoryThenFollowsLive) {
  CommitAndPublish(*MakeHub(16), {"/a"});  // history before the hub existed
  auto hub = MakeHub(16);
  CommitAndPublish(*hub, {"/b"});
  absl::StatusOr<std::unique_ptr<Watcher>> watcher = hub->Watch("", 1);
  ASSERT_TRUE(watcher.ok());
  CommitAndPublish(*hub, {"/c"});
  EXPECT_THAT(Revisions(Drain(**watcher)), ::testing::ElementsAre(1, 2, 3));
  CommitAndPublish(*hub, {"/d"});
  EXPECT_THAT(Revisions(Drain(**watcher)), ::testing::ElementsAre(4));
}

TEST_F(WatchHubTest, CommittedButUnpublishedRevisionsAreNotDeliveredTwice) {
  auto hub = MakeHub(16);
  CommitAndPublish(*hub, {"/a"});
  absl::StatusOr<std::unique_ptr<Watcher>> watcher = hub->Watch("", 1);
  ASSERT_TRUE(watcher.ok());
  std::vector<Event> pending = history_.Commit({"/b"});
  // The history read sees revision 2 before the writer publishes it.
  EXPECT_THAT(Revisions(Drain(**watcher)), ::testing::ElementsAre(1, 2));
  hub->Publish(pending, 2);
  CommitAndPublish(*hub, {"/c"});
  EXPECT_THAT(Revisions(Drain(**watcher)), ::testing::ElementsAre(3));
}

TEST_F(WatchHubTest, SlowWatcherCatchesUpFromHistoryExactlyOnce) {
  auto hub = MakeHub(4);
  absl::StatusOr<std::unique_ptr<Watcher>> watcher = hub->Watch("", 0);
  ASSERT_TRUE(watcher.ok());
  for (int i = 0; i < 50; ++i) CommitAndPublish(*hub, {"/a", "/b"});
  std::vector<Revision> seen = Revisions(Drain(**watcher));
  ASSERT_EQ(seen.size(), 100u) << ::testing::PrintToString(seen);
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], static_cast<Revision>(i / 2 + 1));
  EXPECT_GT(history_.reads(), 0);
  // Back in the synced mode: live events arrive without reading history.
  int reads = history_.reads();
  CommitAndPublish(*hub, {"/c"});
  EXPECT_THAT(Revisions(Drain(**watcher)), ::testing::ElementsAre(51));
  EXPECT_EQ(history_.reads(), reads);
}

TEST_F(WatchHubTest, RevisionsLargerThanTheBufferAreNeverSplit) {
  auto hub = MakeHub(2);
  absl::StatusOr<std::unique_ptr<Watcher>> watcher = hub->Watch("", 0);
  ASSERT_TRUE(watcher.ok());
  CommitAndPublish(*hub, {"/a", "/b", "/c", "/d", "/e"});
  absl::StatusOr<std::vector<Event>> events = (*watcher)->Next(absl::InfinitePast());
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->size(), 5u);
}

TEST_F(WatchHubTest, CompactedRevisionsAreOutOfRange) {
  auto hub = MakeHub(2);
  CommitAndPublish(*hub, {"/a"});
  CommitAndPublish(*hub, {"/a"});
  absl::StatusOr<std::unique_ptr<Watcher>> lagging = hub->Watch("", 1);
  ASSERT_TRUE(lagging.ok());
  history_.Compact(2);
  hub->SetCompacted(2);
  EXPECT_EQ(hub->Watch("", 1).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(hub->Watch("", 2).ok());
  EXPECT_EQ((*lagging)->Next().status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ((*lagging)->Next().status().code(), absl::StatusCode::kOutOfRange);
}

TEST_F(WatchHubTest, CancelAndCloseEndTheWatch) {
  auto hub = MakeHub(4);
  absl::StatusOr<std::unique_ptr<Watcher>> cancelled = hub->Watch("", 0);
  absl::StatusOr<std::unique_ptr<Watcher>> closed = hub->Watch("", 0);
  ASSERT_TRUE(cancelled.ok() && closed.ok());
  (*cancelled)->Cancel();
  EXPECT_EQ((*cancelled)->Next().status().code(), absl::StatusCode::kCancelled);
  hub->Close();
  EXPECT_EQ((*closed)->Next().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(hub->Watch("", 0).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(hub->Watch("", -1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(WatchHubTest, PastDeadlineReturnsNothing) {
  auto hub = MakeHub(4);
  absl::StatusOr<std::unique_ptr<Watcher>> watcher = hub->Watch("", 0);
  ASSERT_TRUE(watcher.ok());
  absl::StatusOr<std::vector<Event>> events = (*watcher)->Next(absl::InfinitePast());
  ASSERT_TRUE(events.ok());
  EXPECT_TRUE(events->empty());
}

}  // namespace
}  // namespace tessera::store
