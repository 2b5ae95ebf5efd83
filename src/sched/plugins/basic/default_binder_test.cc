#include "sched/plugins/basic/default_binder.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

// Records every binding; fails with `failure` when it is set.
class RecordingSink final : public DecisionSink {
 public:
  struct Call {
    std::string job;
    int32_t task_index;
    std::string node;
  };

  absl::Status Bind(std::string_view job, int32_t task_index, const Placement& placement) override {
    calls.push_back({std::string(job), task_index, placement.node});
    return failure;
  }

  std::vector<Call> calls;
  absl::Status failure;
};

Handle WithSink(DecisionSink* sink) {
  Handle handle;
  handle.sink = sink;
  return handle;
}

Placement OnNode(std::string node) {
  Placement p;
  p.node_index = 3;
  p.node = std::move(node);
  return p;
}

TEST(DefaultBinderTest, ForwardsToTheSink) {
  RecordingSink sink;
  auto plugin = DefaultBinder::New({}, WithSink(&sink));
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  auto& binder = dynamic_cast<BindPlugin&>(**plugin);

  EXPECT_TRUE(binder.Bind("train-1", 0, OnNode("gpu-a")).ok());
  EXPECT_TRUE(binder.Bind("train-1", 1, OnNode("gpu-b")).ok());
  ASSERT_EQ(sink.calls.size(), 2u);
  EXPECT_EQ(sink.calls[0].job, "train-1");
  EXPECT_EQ(sink.calls[0].task_index, 0);
  EXPECT_EQ(sink.calls[0].node, "gpu-a");
  EXPECT_EQ(sink.calls[1].task_index, 1);
  EXPECT_EQ(sink.calls[1].node, "gpu-b");
}

TEST(DefaultBinderTest, SinkFailureIsAnError) {
  RecordingSink sink;
  sink.failure = absl::UnavailableError("agent of cluster k8s-a is disconnected");
  DefaultBinder binder(&sink);
  const SchedStatus status = binder.Bind("train-1", 2, OnNode("gpu-a"));
  EXPECT_EQ(status.code(), SchedStatus::Code::kError);
  EXPECT_THAT(status.message(),
              ::testing::AllOf(::testing::HasSubstr("agent of cluster k8s-a is disconnected"),
                               ::testing::HasSubstr("train-1"), ::testing::HasSubstr("gpu-a")));
}

TEST(DefaultBinderTest, FactoryNeedsASink) {
  const auto plugin = DefaultBinder::New({}, Handle{});
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(plugin.status().message()), ::testing::HasSubstr("DefaultBinder"));
}

TEST(DefaultBinderTest, FactoryRejectsArguments) {
  RecordingSink sink;
  EXPECT_EQ(DefaultBinder::New({{"async", "true"}}, WithSink(&sink)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera
