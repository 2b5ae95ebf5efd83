#include "sched/plugins/basic/node_unschedulable.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sched/testing/test_nodes.h"

namespace tessera {
namespace {

using ::tessera::testing::CpuNode;
using ::tessera::testing::CpuTask;
using Code = SchedStatus::Code;

struct UnschedulableCase {
  std::string name;
  bool cordoned = false;
  bool down = false;
  bool removed = false;
  std::vector<Toleration> tolerations;
  const Reason* reason = nullptr;  // nullptr: the node passes
};

Toleration CordonToleration() {
  return testing::Tolerate(std::string(NodeUnschedulable::kUnschedulableTaintKey), "", true,
                           TaintEffect::kNoSchedule);
}

std::vector<UnschedulableCase> Cases() {
  using N = NodeUnschedulable;
  const Toleration all = testing::Tolerate("", "", true);
  return {
      {"ready", false, false, false, {}, nullptr},
      {"cordoned", true, false, false, {}, &N::kCordoned},
      {"cordoned tolerated", true, false, false, {CordonToleration()}, nullptr},
      {"cordoned tolerated by empty key exists", true, false, false, {all}, nullptr},
      {"cordoned with an unrelated toleration",
       true,
       false,
       false,
       {testing::Tolerate("dedicated", "", true)},
       &N::kCordoned},
      {"down", false, true, false, {}, &N::kDown},
      {"down is not tolerated", false, true, false, {all}, &N::kDown},
      {"removed", false, false, true, {}, &N::kRemoved},
      {"removed wins over down and cordoned", true, true, true, {}, &N::kRemoved},
      {"down wins over cordoned", true, true, false, {}, &N::kDown},
  };
}

class NodeUnschedulableTest : public ::testing::TestWithParam<UnschedulableCase> {};

TEST_P(NodeUnschedulableTest, Filter) {
  const UnschedulableCase& c = GetParam();
  Node node = CpuNode();
  node.unschedulable = c.cordoned;
  node.condition = c.down ? NodeCondition::kDown : NodeCondition::kReady;
  node.removed = c.removed;
  TaskRequest task = CpuTask(100);
  task.tolerations = c.tolerations;

  const SchedStatus status = NodeUnschedulable().Filter(CycleState(), task, node);
  if (c.reason == nullptr) {
    EXPECT_TRUE(status.ok());
    return;
  }
  EXPECT_EQ(status.code(), Code::kUnschedulableAndUnresolvable);
  ASSERT_NE(status.reason(), nullptr);
  EXPECT_EQ(status.reason()->code, "NodeUnavailable");
  EXPECT_EQ(status.reason()->detail, c.reason->detail);
}

INSTANTIATE_TEST_SUITE_P(Cases, NodeUnschedulableTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return testing::TestName(info.param.name); });

TEST(NodeUnschedulableTest, Details) {
  EXPECT_EQ(NodeUnschedulable::kCordoned.detail, "node is cordoned");
  EXPECT_EQ(NodeUnschedulable::kDown.detail, "node is down");
  EXPECT_EQ(NodeUnschedulable::kRemoved.detail, "node is removed");
}

TEST(NodeUnschedulableTest, FactoryRejectsArguments) {
  EXPECT_TRUE(NodeUnschedulable::New({}, Handle{}).ok());
  const auto bad = NodeUnschedulable::New({{"x", "1"}}, Handle{});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr("\"x\""));
}

}  // namespace
}  // namespace tessera
