#include "sched/plugins/basic/taint_toleration.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sched/testing/test_nodes.h"

namespace tessera {
namespace {

using ::tessera::testing::CpuNode;
using ::tessera::testing::CpuTask;
using Code = SchedStatus::Code;

constexpr TaintEffect kNoSchedule = TaintEffect::kNoSchedule;
constexpr TaintEffect kPrefer = TaintEffect::kPreferNoSchedule;
constexpr TaintEffect kNoExecute = TaintEffect::kNoExecute;

struct TaintCase {
  std::string name;
  std::vector<Taint> taints;
  std::vector<Toleration> tolerations;
  bool passes = true;
  int64_t score = 100;  // checked only when the node passes
};

Toleration Equal(std::string key, std::string value) {
  return testing::Tolerate(std::move(key), std::move(value), false);
}
Toleration Exists(std::string key) { return testing::Tolerate(std::move(key), "", true); }
Toleration WithEffect(Toleration t, TaintEffect effect) {
  t.effect = effect;
  return t;
}

std::vector<TaintCase> Cases() {
  const Taint gpu_only{"dedicated", "gpu", kNoSchedule};
  const Taint draining{"drain", "", kNoExecute};
  const Taint soft_a{"spot", "true", kPrefer};
  const Taint soft_b{"slow-disk", "", kPrefer};
  return {
      {"no taints", {}, {}, true, 100},
      {"NoSchedule untolerated", {gpu_only}, {}, false},
      {"NoExecute untolerated", {draining}, {}, false},
      {"PreferNoSchedule never rejects", {soft_a}, {}, true, 50},
      {"two soft taints", {soft_a, soft_b}, {}, true, 33},
      {"one of two soft taints tolerated", {soft_a, soft_b}, {Exists("spot")}, true, 50},
      {"soft taints all tolerated", {soft_a, soft_b}, {Exists("")}, true, 100},
      {"Equal toleration matches", {gpu_only}, {Equal("dedicated", "gpu")}, true, 100},
      {"Equal toleration with another value", {gpu_only}, {Equal("dedicated", "cpu")}, false},
      {"Equal toleration of another key", {gpu_only}, {Equal("team", "gpu")}, false},
      {"Exists toleration ignores the value", {gpu_only}, {Exists("dedicated")}, true, 100},
      {"empty-key Exists tolerates everything",
       {gpu_only, draining, soft_a},
       {Exists("")},
       true,
       100},
      {"effect must match when set",
       {gpu_only},
       {WithEffect(Exists("dedicated"), kNoExecute)},
       false},
      {"matching effect", {gpu_only}, {WithEffect(Exists("dedicated"), kNoSchedule)}, true, 100},
      {"every hard taint needs a toleration", {gpu_only, draining}, {Exists("dedicated")}, false},
      {"hard taints tolerated, soft one not",
       {gpu_only, soft_a},
       {Equal("dedicated", "gpu")},
       true,
       50},
  };
}

class TaintTolerationTest : public ::testing::TestWithParam<TaintCase> {};

TEST_P(TaintTolerationTest, FilterAndScore) {
  const TaintCase& c = GetParam();
  Node node = CpuNode();
  node.taints = c.taints;
  TaskRequest task = CpuTask(100);
  task.tolerations = c.tolerations;
  const TaintToleration plugin;
  const CycleState state;

  const SchedStatus status = plugin.Filter(state, task, node);
  if (!c.passes) {
    EXPECT_EQ(status.code(), Code::kUnschedulableAndUnresolvable);
    ASSERT_NE(status.reason(), nullptr);
    EXPECT_EQ(status.reason()->code, "Untolerated");
    EXPECT_EQ(status.reason()->detail, "untolerated taint");
    return;
  }
  EXPECT_TRUE(status.ok());
  int64_t score = -1;
  EXPECT_TRUE(plugin.Score(state, task, node, &score).ok());
  EXPECT_EQ(score, c.score);
}

INSTANTIATE_TEST_SUITE_P(Cases, TaintTolerationTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return testing::TestName(info.param.name); });

TEST(TaintTolerationTest, FewerSoftTaintsScoreHigher) {
  const TaintToleration plugin;
  int64_t previous = kMaxNodeScore + 1;
  Node node = CpuNode();
  for (int n = 0; n < 6; ++n) {
    int64_t score = -1;
    ASSERT_TRUE(plugin.Score(CycleState(), CpuTask(1), node, &score).ok());
    EXPECT_LT(score, previous);
    EXPECT_GE(score, kMinNodeScore);
    previous = score;
    node.taints.push_back({"soft-" + std::to_string(n), "", kPrefer});
  }
}

TEST(TaintTolerationTest, FactoryRejectsArguments) {
  EXPECT_TRUE(TaintToleration::New({}, Handle{}).ok());
  EXPECT_EQ(TaintToleration::New({{"weight", "2"}}, Handle{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera
