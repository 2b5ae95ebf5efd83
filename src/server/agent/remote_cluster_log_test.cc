// RemoteCluster::ReadLog: a log request to the agent of a session, its answer, and every way
// it fails (silence, a session that ends, a stale epoch, a malformed chunk, no agent).
#include "server/agent/remote_cluster.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/agent/testing/remote_cluster_fixture.h"

namespace tessera::server {
namespace {

namespace v1 = agent::v1;
using testing::Answer;
using testing::FullInventory;
using testing::Hello;
using testing::Launch;
using testing::LogRequestChannel;
using testing::ProtoNode;
using testing::RecordingChannel;
using testing::RemoteClusterTest;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST_F(RemoteClusterTest, ReadLogAsksTheAgentAndReturnsItsAnswer) {
  MakeClusters();
  LogRequestChannel channel;
  auto [cluster, epoch] = Connect(channel, "east", 1);
  std::thread agent([&, epoch = epoch, cluster = cluster] {
    const v1::LogRequest request = channel.NextLogRequest();
    EXPECT_EQ(request.epoch(), epoch);
    EXPECT_EQ(request.launch_id(), "j-worker-0-a1");
    EXPECT_EQ(request.stream(), v1::LogRequest::STREAM_STDERR);
    EXPECT_EQ(request.offset(), 5);
    EXPECT_EQ(request.limit(), 100);
    EXPECT_TRUE(cluster->OnLogChunk(epoch, Answer(request, "hello\n", true)).ok());
  });
  absl::StatusOr<LogChunk> chunk = cluster->ReadLog("j-worker-0-a1", LogStream::kStderr, 5, 100);
  agent.join();
  ASSERT_TRUE(chunk.ok()) << chunk.status();
  EXPECT_EQ(chunk->data, "hello\n");
  EXPECT_EQ(chunk->next_offset, 11);
  EXPECT_TRUE(chunk->end);
}

TEST_F(RemoteClusterTest, ReadLogCapsTheLimitAndPassesTheBackendsErrorOn) {
  MakeClusters();
  LogRequestChannel channel;
  auto [cluster, epoch] = Connect(channel, "east", 1);
  std::thread agent([&, epoch = epoch, cluster = cluster] {
    const v1::LogRequest request = channel.NextLogRequest();
    EXPECT_EQ(request.limit(), agent::kMaxLogChunkBytes);
    v1::LogChunk chunk;
    chunk.set_epoch(epoch);
    chunk.set_request_id(request.request_id());
    chunk.set_error_code(static_cast<int32_t>(absl::StatusCode::kNotFound));
    chunk.set_error_message("no log for task j-worker-0-a1");
    EXPECT_TRUE(cluster->OnLogChunk(epoch, chunk).ok());
  });
  absl::StatusOr<LogChunk> chunk =
      cluster->ReadLog("j-worker-0-a1", LogStream::kStdout, 0, int64_t{1} << 40);
  agent.join();
  EXPECT_EQ(chunk.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(chunk.status().message(), "no log for task j-worker-0-a1");
}

TEST_F(RemoteClusterTest, ReadLogTimesOutWhenTheAgentIsSilentAndALateAnswerIsIgnored) {
  MakeClusters(/*log_timeout=*/Duration(20));
  LogRequestChannel channel;
  auto [cluster, epoch] = Connect(channel, "east", 1);
  absl::StatusOr<LogChunk> chunk = cluster->ReadLog("j-worker-0-a1", LogStream::kStdout, 0, 100);
  EXPECT_EQ(chunk.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(chunk.status().message(), HasSubstr("cluster east"));
  const v1::LogRequest request = channel.NextLogRequest();
  EXPECT_TRUE(cluster->OnLogChunk(epoch, Answer(request, "late", false)).ok());
}

TEST_F(RemoteClusterTest, ASessionThatEndsWakesTheReadLogWithUnavailable) {
  MakeClusters();
  LogRequestChannel first;
  auto [cluster, epoch] = Connect(first, "east", 1);
  std::thread detach([&, epoch = epoch, cluster = cluster] {
    first.NextLogRequest();
    cluster->Detach(epoch);
  });
  absl::StatusOr<LogChunk> chunk = cluster->ReadLog("j-worker-0-a1", LogStream::kStdout, 0, 100);
  detach.join();
  EXPECT_EQ(chunk.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(chunk.status().message(), HasSubstr("cluster east"));

  // A newer session fences the one asked.
  LogRequestChannel second;
  Connect(second, "east", 1);
  LogRequestChannel third;
  std::thread fence([&] {
    second.NextLogRequest();
    Connect(third, "east", 1);
  });
  chunk = cluster->ReadLog("j-worker-0-a1", LogStream::kStdout, 0, 100);
  fence.join();
  EXPECT_EQ(chunk.status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(RemoteClusterTest, ASilentClusterWakesTheReadLogWithUnavailable) {
  MakeClusters(/*log_timeout=*/Duration(60'000));
  LogRequestChannel channel;
  auto [cluster, epoch] = Connect(channel, "east", 1);
  std::thread silence([&, cluster = cluster] {
    channel.NextLogRequest();
    clock_.Set(clock_.Now() + Duration(3000));
    cluster->CheckLiveness();
  });
  absl::StatusOr<LogChunk> chunk = cluster->ReadLog("j-worker-0-a1", LogStream::kStdout, 0, 100);
  silence.join();
  EXPECT_FALSE(cluster->reachable());
  EXPECT_EQ(chunk.status().code(), absl::StatusCode::kUnavailable) << chunk.status();
  EXPECT_THAT(chunk.status().message(), HasSubstr("went silent"));
}

TEST_F(RemoteClusterTest, AStaleEpochsLogChunkIsRefused) {
  MakeClusters();
  LogRequestChannel first;
  Connect(first, "east", 1);
  LogRequestChannel second;
  auto [cluster, epoch] = Connect(second, "east", 1);
  ASSERT_EQ(epoch, 2u);
  std::thread agent([&, epoch = epoch, cluster = cluster] {
    const v1::LogRequest request = second.NextLogRequest();
    v1::LogChunk stale = Answer(request, "stale", true);
    stale.set_epoch(1);
    absl::Status refused = cluster->OnLogChunk(1, stale);
    EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(refused.message(), HasSubstr("stale epoch 1"));
    EXPECT_EQ(cluster->OnLogChunk(epoch, stale).code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(cluster->OnLogChunk(epoch, Answer(request, "fresh", true)).ok());
  });
  absl::StatusOr<LogChunk> chunk = cluster->ReadLog("j-worker-0-a1", LogStream::kStdout, 0, 100);
  agent.join();
  ASSERT_TRUE(chunk.ok()) << chunk.status();
  EXPECT_EQ(chunk->data, "fresh");
}

TEST_F(RemoteClusterTest, AMalformedLogChunkEndsTheSessionAndFailsTheReadLog) {
  MakeClusters();
  LogRequestChannel channel;
  auto [cluster, epoch] = Connect(channel, "east", 1);
  std::thread agent([&, epoch = epoch, cluster = cluster] {
    const v1::LogRequest request = channel.NextLogRequest();
    v1::LogChunk chunk = Answer(request, "four", false);
    chunk.set_next_offset(request.offset() + 3);
    absl::Status refused = cluster->OnLogChunk(epoch, chunk);
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(refused.message(), HasSubstr("logChunk.nextOffset"));
  });
  absl::StatusOr<LogChunk> chunk = cluster->ReadLog("j-worker-0-a1", LogStream::kStdout, 0, 100);
  agent.join();
  EXPECT_EQ(chunk.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(chunk.status().message(), HasSubstr("logChunk.nextOffset"));
}

TEST_F(RemoteClusterTest, ReadLogWithoutAReachableAgentIsUnavailable) {
  MakeClusters();
  LogRequestChannel channel;
  auto [cluster, epoch] = Connect(channel, "east", 1);
  clock_.Set(clock_.Now() + Duration(3000));
  cluster->CheckLiveness();
  ASSERT_FALSE(cluster->reachable());
  absl::StatusOr<LogChunk> chunk = cluster->ReadLog("j-worker-0-a1", LogStream::kStdout, 0, 100);
  EXPECT_EQ(chunk.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(chunk.status().message(), HasSubstr("cluster east is unreachable"));

  cluster->Detach(epoch);
  chunk = cluster->ReadLog("j-worker-0-a1", LogStream::kStdout, 0, 100);
  EXPECT_EQ(chunk.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(chunk.status().message(), HasSubstr("no agent is connected"));
  EXPECT_EQ(cluster->ReadLog("j-worker-0-a1", LogStream::kStdout, -1, 100).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::server
