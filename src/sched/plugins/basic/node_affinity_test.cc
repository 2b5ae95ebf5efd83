#include "sched/plugins/basic/node_affinity.h"

#include <string>

#include "gtest/gtest.h"
#include "sched/testing/test_nodes.h"

namespace tessera {
namespace {

using ::tessera::testing::CpuNode;
using ::tessera::testing::CpuTask;

struct AffinityCase {
  std::string name;
  Labels node_labels;
  Labels selector;
  bool passes = true;
};

std::vector<AffinityCase> Cases() {
  const Labels labels = {{"tessera.io/cluster", "slurm-a"}, {"zone", "eu-1"}, {"ib", "true"}};
  return {
      {"empty selector", labels, {}, true},
      {"empty selector on an unlabelled node", {}, {}, true},
      {"one pair", labels, {{"zone", "eu-1"}}, true},
      {"every pair", labels, {{"zone", "eu-1"}, {"ib", "true"}}, true},
      {"cluster label is a normal label", labels, {{"tessera.io/cluster", "slurm-a"}}, true},
      {"other cluster", labels, {{"tessera.io/cluster", "k8s-b"}}, false},
      {"missing key", labels, {{"rack", "r1"}}, false},
      {"wrong value", labels, {{"zone", "us-1"}}, false},
      {"one pair of two mismatches", labels, {{"zone", "eu-1"}, {"ib", "false"}}, false},
      {"selector on an unlabelled node", {}, {{"zone", "eu-1"}}, false},
      {"empty value must match exactly", labels, {{"zone", ""}}, false},
  };
}

class NodeAffinityTest : public ::testing::TestWithParam<AffinityCase> {};

TEST_P(NodeAffinityTest, Filter) {
  const AffinityCase& c = GetParam();
  Node node = CpuNode();
  node.labels = c.node_labels;
  TaskRequest task = CpuTask(100);
  task.node_selector = c.selector;

  const SchedStatus status = NodeAffinity().Filter(CycleState(), task, node);
  if (c.passes) {
    EXPECT_TRUE(status.ok());
    return;
  }
  EXPECT_EQ(status.code(), SchedStatus::Code::kUnschedulableAndUnresolvable);
  ASSERT_NE(status.reason(), nullptr);
  EXPECT_EQ(status.reason()->code, "NodeSelectorMismatch");
  EXPECT_EQ(status.reason()->detail, "node selector mismatch");
}

INSTANTIATE_TEST_SUITE_P(Cases, NodeAffinityTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return testing::TestName(info.param.name); });

TEST(NodeAffinityTest, FactoryRejectsArguments) {
  EXPECT_TRUE(NodeAffinity::New({}, Handle{}).ok());
  EXPECT_EQ(NodeAffinity::New({{"selector", "a=b"}}, Handle{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera
