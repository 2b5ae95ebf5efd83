#include "sched/plugins/basic/node_resources_fit.h"

#include <functional>
#include <string>
#include <vector>

#include "core/device_selection.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sched/testing/test_nodes.h"

namespace tessera {
namespace {

using ::tessera::testing::CpuNode;
using ::tessera::testing::CpuTask;
using ::tessera::testing::GpuNode;
using ::tessera::testing::GpuTask;
using ::tessera::testing::kGi;
using ::tessera::testing::UseGpu;
using Code = SchedStatus::Code;

struct FitCase {
  std::string name;
  Node node;
  TaskRequest task;
  Code code = Code::kSuccess;
  const Reason* reason = nullptr;
};

Node With(Node node, const std::function<void(Node&)>& change) {
  change(node);
  return node;
}

TaskRequest WithTask(TaskRequest task, const std::function<void(TaskRequest&)>& change) {
  change(task);
  return task;
}

std::vector<FitCase> FitCases() {
  using F = NodeResourcesFit;
  const Node cpu_node = CpuNode(4000, 16 * kGi);
  return {
      // cpu and memory
      {"cpu fits", cpu_node, CpuTask(4000, 16 * kGi)},
      {"cpu short now", With(cpu_node, [](Node& n) { n.allocated.cpu = 3500; }), CpuTask(1000),
       Code::kUnschedulable, &F::kInsufficientCpu},
      {"cpu above allocatable", cpu_node, CpuTask(4001), Code::kUnschedulableAndUnresolvable,
       &F::kInsufficientCpu},
      {"memory short now", With(cpu_node, [](Node& n) { n.allocated.memory = 15 * kGi; }),
       CpuTask(0, 2 * kGi), Code::kUnschedulable, &F::kInsufficientMemory},
      {"memory above allocatable", cpu_node, CpuTask(0, 17 * kGi),
       Code::kUnschedulableAndUnresolvable, &F::kInsufficientMemory},
      {"zero request fits an over-allocated node",
       With(cpu_node, [](Node& n) { n.allocated.cpu = 5000; }), CpuTask(0, kGi)},
      // extended resources
      {"extended fits", With(cpu_node, [](Node& n) { n.allocatable.extended["rdma/hca"] = 2; }),
       WithTask(CpuTask(100), [](TaskRequest& t) { t.extended["rdma/hca"] = 2; })},
      {"extended missing on node", cpu_node,
       WithTask(CpuTask(100), [](TaskRequest& t) { t.extended["rdma/hca"] = 1; }),
       Code::kUnschedulableAndUnresolvable, &F::kInsufficientExtended},
      {"extended short now",
       With(cpu_node,
            [](Node& n) {
              n.allocatable.extended["rdma/hca"] = 2;
              n.allocated.extended["rdma/hca"] = 2;
            }),
       WithTask(CpuTask(100), [](TaskRequest& t) { t.extended["rdma/hca"] = 1; }),
       Code::kUnschedulable, &F::kInsufficientExtended},
      // whole GPUs
      {"gpu task on a cpu node", CpuNode(), GpuTask(1), Code::kUnschedulableAndUnresolvable,
       &F::kInsufficientGpu},
      {"whole gpus take the fully free devices",
       With(GpuNode(4),
            [](Node& n) {
              UseGpu(n, 0, 100);
              UseGpu(n, 2, 500);
            }),
       GpuTask(2)},
      {"whole gpu never takes a partly used device",
       With(GpuNode(4),
            [](Node& n) {
              for (int i = 0; i < 3; ++i) UseGpu(n, i, 100);
            }),
       GpuTask(2), Code::kUnschedulable, &F::kInsufficientGpu},
      {"unhealthy device does not count toward capacity",
       With(GpuNode(4), [](Node& n) { n.gpus[3].healthy = false; }), GpuTask(4),
       Code::kUnschedulableAndUnresolvable, &F::kInsufficientGpu},
      {"only free device is unhealthy",
       With(GpuNode(2),
            [](Node& n) {
              UseGpu(n, 0, 1000);
              n.gpus[1].healthy = false;
            }),
       GpuTask(1), Code::kUnschedulable, &F::kInsufficientGpu},
      {"gpu count above devices", GpuNode(8), GpuTask(9), Code::kUnschedulableAndUnresolvable,
       &F::kInsufficientGpu},
      // shared GPUs
      {"share fits exactly", With(GpuNode(1), [](Node& n) { UseGpu(n, 0, 500); }), GpuTask(1, 500)},
      {"shares never overcommit a device",
       With(GpuNode(2),
            [](Node& n) {
              UseGpu(n, 0, 600);
              UseGpu(n, 1, 700);
            }),
       GpuTask(1, 500), Code::kUnschedulable, &F::kInsufficientGpu},
      {"share needs one device, not the node's free sum",
       With(GpuNode(4),
            [](Node& n) {
              for (int i = 0; i < 4; ++i) UseGpu(n, i, 800);
            }),
       GpuTask(1, 300), Code::kUnschedulable, &F::kInsufficientGpu},
      {"share skips an unhealthy device with room",
       With(GpuNode(2),
            [](Node& n) {
              UseGpu(n, 0, 900);
              n.gpus[1].healthy = false;
            }),
       GpuTask(1, 400), Code::kUnschedulable, &F::kInsufficientGpu},
      {"share lands beside a whole-gpu task", With(GpuNode(2), [](Node& n) { UseGpu(n, 0, 1000); }),
       GpuTask(1, 250)},
      // GPU models
      {"no device of an allowed model", GpuNode(4, "A100"), GpuTask(1, 1000, {"V100", "H100"}),
       Code::kUnschedulableAndUnresolvable, &F::kGpuModelMismatch},
      {"allowed model present", GpuNode(4, "A100"), GpuTask(1, 1000, {"V100", "A100"})},
      {"allowed devices of a mixed node are busy",
       With(GpuNode(2, "A100"),
            [](Node& n) {
              n.gpus.push_back(testing::Device(2, "V100", 32 * kGi));
              UseGpu(n, 2, 1000);
            }),
       GpuTask(1, 1000, {"V100"}), Code::kUnschedulable, &F::kInsufficientGpu},
      {"too few devices of the allowed model",
       With(GpuNode(2, "A100"),
            [](Node& n) { n.gpus.push_back(testing::Device(2, "V100", 32 * kGi)); }),
       GpuTask(2, 1000, {"V100"}), Code::kUnschedulableAndUnresolvable, &F::kInsufficientGpu},
      {"share on a device of another model", GpuNode(1, "A100"), GpuTask(1, 100, {"G2"}),
       Code::kUnschedulableAndUnresolvable, &F::kGpuModelMismatch},
      // GPU memory
      {"device memory too small", GpuNode(2, "T4", 16 * kGi), GpuTask(1, 1000, {}, 32 * kGi),
       Code::kUnschedulableAndUnresolvable, &F::kInsufficientGpuMemory},
      {"device memory fits", GpuNode(2, "T4", 16 * kGi), GpuTask(2, 1000, {}, 16 * kGi)},
      {"share has milli but not memory",
       With(GpuNode(1, "A100", 80 * kGi), [](Node& n) { UseGpu(n, 0, 200, 75 * kGi); }),
       GpuTask(1, 300, {}, 10 * kGi), Code::kUnschedulable, &F::kInsufficientGpuMemory},
      {"share has neither milli nor memory",
       With(GpuNode(1, "A100", 80 * kGi), [](Node& n) { UseGpu(n, 0, 900, 75 * kGi); }),
       GpuTask(1, 300, {}, 10 * kGi), Code::kUnschedulable, &F::kInsufficientGpu},
      // ordering of reasons
      {"never-fit reasons win over fit-now reasons",
       With(GpuNode(2, "A100"), [](Node& n) { n.allocated.cpu = n.allocatable.cpu; }),
       GpuTask(1, 1000, {"V100"}), Code::kUnschedulableAndUnresolvable, &F::kGpuModelMismatch},
      {"cpu is reported before gpu",
       With(GpuNode(1),
            [](Node& n) {
              n.allocated.cpu = n.allocatable.cpu;
              UseGpu(n, 0, 1000);
            }),
       GpuTask(1), Code::kUnschedulable, &F::kInsufficientCpu},
  };
}

class NodeResourcesFitTest : public ::testing::TestWithParam<FitCase> {};

TEST_P(NodeResourcesFitTest, Filter) {
  const FitCase& c = GetParam();
  NodeResourcesFit fit;
  CycleState state;
  const SchedStatus status = fit.Filter(state, c.task, c.node);
  EXPECT_EQ(status.code(), c.code);
  if (c.reason == nullptr) {
    EXPECT_EQ(status.reason(), nullptr);
  } else {
    ASSERT_NE(status.reason(), nullptr);
    EXPECT_EQ(status.reason()->code, c.reason->code);
    EXPECT_EQ(status.reason()->detail, c.reason->detail);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, NodeResourcesFitTest, ::testing::ValuesIn(FitCases()),
                         [](const auto& info) { return testing::TestName(info.param.name); });

TEST(NodeResourcesFitTest, ReasonsCarryTheirCodes) {
  EXPECT_EQ(NodeResourcesFit::kInsufficientGpu.code, "InsufficientResources");
  EXPECT_EQ(NodeResourcesFit::kInsufficientGpu.detail, "insufficient gpu");
  EXPECT_EQ(NodeResourcesFit::kGpuModelMismatch.code, "GpuModelMismatch");
  EXPECT_EQ(NodeResourcesFit::kGpuModelMismatch.detail, "gpu model not allowed");
}

TEST(NodeResourcesFitTest, PreFilterSkipsEmptyRequests) {
  NodeResourcesFit fit;
  CycleState state;
  EXPECT_EQ(fit.PreFilter(state, TaskRequest{}).code(), SchedStatus::Code::kSkip);
  EXPECT_TRUE(fit.PreFilter(state, CpuTask(1)).ok());
  EXPECT_TRUE(fit.PreFilter(state, GpuTask(1, 100)).ok());
  TaskRequest extended_only;
  extended_only.extended["rdma/hca"] = 1;
  EXPECT_TRUE(fit.PreFilter(state, extended_only).ok());
}

// For every combination of device usage on a 3-GPU node, the Filter passes exactly when the
// device helpers find enough devices: the verdict and the device choice never disagree.
TEST(NodeResourcesFitTest, AgreesWithFeasibleDevices) {
  const std::vector<int64_t> usages = {0, 250, 500, 750, 1000};
  const std::vector<TaskRequest> tasks = {GpuTask(1, 250), GpuTask(1, 500), GpuTask(1, 800),
                                          GpuTask(1),      GpuTask(2),      GpuTask(3)};
  NodeResourcesFit fit;
  CycleState state;
  for (int64_t u0 : usages) {
    for (int64_t u1 : usages) {
      for (int64_t u2 : usages) {
        Node node = GpuNode(3);
        UseGpu(node, 0, u0);
        UseGpu(node, 1, u1);
        UseGpu(node, 2, u2);
        for (const TaskRequest& task : tasks) {
          const bool fits =
              static_cast<int32_t>(FeasibleDevices(node, task).size()) >= task.gpu_count;
          EXPECT_EQ(fit.Filter(state, task, node).ok(), fits)
              << "usage " << u0 << "," << u1 << "," << u2 << " task " << task.gpu_count << "x"
              << task.gpu_milli;
        }
      }
    }
  }
}

TEST(NodeResourcesFitTest, FactoryRejectsUnknownArguments) {
  EXPECT_TRUE(NodeResourcesFit::New({}, Handle{}).ok());
  const auto bad = NodeResourcesFit::New({{"ignoreMemory", "true"}}, Handle{});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()),
              ::testing::AllOf(::testing::HasSubstr("NodeResourcesFit"),
                               ::testing::HasSubstr("ignoreMemory")));
}

TEST(NodeResourcesFitTest, Name) {
  auto plugin = NodeResourcesFit::New({}, Handle{});
  ASSERT_TRUE(plugin.ok());
  EXPECT_EQ((*plugin)->name(), NodeResourcesFit::kName);
}

}  // namespace
}  // namespace tessera
