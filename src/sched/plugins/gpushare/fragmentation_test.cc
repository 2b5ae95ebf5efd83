#include "sched/plugins/gpushare/fragmentation.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sched/plugins/gpushare/test_util.h"
#include "tessera/common/rng.h"

namespace tessera::gpushare {
namespace {

using testing::CpuTask;
using testing::GpuTask;
using testing::MakeNode;
using testing::Workload;

struct ClassCase {
  std::string name;
  Node node;
  TaskRequest task_class;
  int64_t want;
};

TEST(ClassFragmentationTest, FollowsThePaperCases) {
  Node unhealthy = MakeNode(64000, {1000, 1000});
  unhealthy.gpus[1].healthy = false;
  const std::vector<ClassCase> cases = {
      // XL / XR: a CPU-only class can never use GPUs, whether or not its cpu fits.
      {"cpu-only fits", MakeNode(64000, {1000, 300}), CpuTask(8000), 1300},
      {"cpu-only lacks cpu", MakeNode(4000, {1000, 300}), CpuTask(8000), 1300},
      // The node's model is not among the class's models: everything is fragment.
      {"model mismatch", MakeNode(64000, {1000, 300}, "T4"), GpuTask(1000, 1, 200, {"V100M32"}),
       1300},
      {"model allowed", MakeNode(64000, {1000, 300}, "T4"),
       GpuTask(1000, 1, 200, {"V100M32", "T4"}), 0},
      // Q3: the class fits; only the devices below its share are fragment.
      {"Q3 partial", MakeNode(64000, {1000, 300, 0, 700}), GpuTask(1000, 1, 500), 300},
      {"Q3 whole GPUs", MakeNode(64000, {1000, 300, 1000, 700}), GpuTask(1000, 2, 1000), 1000},
      {"Q3 nothing short", MakeNode(64000, {1000, 600}), GpuTask(1000, 1, 500), 0},
      // Q2 / Q4 / Q1: the class does not fit: everything is fragment.
      {"Q2 lacks gpu", MakeNode(64000, {1000, 300}), GpuTask(1000, 2, 1000), 1300},
      {"Q4 lacks cpu", MakeNode(500, {1000, 300}), GpuTask(1000, 1, 200), 1300},
      {"Q1 lacks both", MakeNode(500, {300, 300}), GpuTask(1000, 1, 500), 600},
      {"unhealthy device has nothing free", unhealthy, GpuTask(1000, 2, 1000), 1000},
      {"no GPUs", MakeNode(64000, {}), GpuTask(1000, 1, 500), 0},
  };
  for (const ClassCase& c : cases) {
    EXPECT_EQ(ClassFragmentation(c.node, c.task_class), c.want) << c.name;
  }
}

// M: 20% CPU-only, 50% sharing 0.5 GPU, 30% one whole GPU.
TargetWorkload SmallWorkload() {
  return Workload(
      {{CpuTask(4000), 0.2}, {GpuTask(4000, 1, 500), 0.5}, {GpuTask(8000, 1, 1000), 0.3}});
}

TEST(NodeFragmentationTest, WeighsClassesByProbability) {
  const PreparedWorkload w(SmallWorkload());
  // Free [1000, 300]: CPU-only 0.2 * 1300, sharing 0.5 * 300, whole 0.3 * 300.
  const Node node = MakeNode(64000, {1000, 300});
  EXPECT_DOUBLE_EQ(NodeFragmentation(node, w), 260 + 150 + 90);

  const FragmentBins bins = NodeFragmentationBins(node, w);
  EXPECT_DOUBLE_EQ(bins.milli[static_cast<int>(FragmentCase::kCpuOnlyFits)], 260);
  EXPECT_DOUBLE_EQ(bins.milli[static_cast<int>(FragmentCase::kLackGpu)], 240);
  EXPECT_DOUBLE_EQ(bins.milli[static_cast<int>(FragmentCase::kSatisfied)], 800);
  EXPECT_DOUBLE_EQ(bins.Fragment(), 500);
  EXPECT_DOUBLE_EQ(bins.Total(), 1300);
}

TEST(NodeFragmentationTest, CpuExhaustionStrandsTheGpus) {
  const PreparedWorkload w(SmallWorkload());
  // 2 cores free: no class fits, every class sees all 2000 free milli-GPU as fragment.
  const Node node = MakeNode(2000, {1000, 1000});
  EXPECT_DOUBLE_EQ(NodeFragmentation(node, w), 2000);
  const FragmentBins bins = NodeFragmentationBins(node, w);
  EXPECT_DOUBLE_EQ(bins.milli[static_cast<int>(FragmentCase::kCpuOnlyLacksCpu)], 400);
  EXPECT_DOUBLE_EQ(bins.milli[static_cast<int>(FragmentCase::kLackCpu)], 1600);
}

TEST(NodeFragmentationTest, ModelConstraintsUseTheNodeModel) {
  const PreparedWorkload w(
      Workload({{GpuTask(1000, 1, 500, {"V100M32"}), 0.5}, {GpuTask(1000, 1, 500), 0.5}}));
  const Node t4 = MakeNode(64000, {1000, 200}, "T4");
  const Node v100 = MakeNode(64000, {1000, 200}, "V100M32");
  // On T4 the constrained class has no access: all 1200; the free class leaves 200.
  EXPECT_DOUBLE_EQ(NodeFragmentation(t4, w), 0.5 * 1200 + 0.5 * 200);
  EXPECT_DOUBLE_EQ(NodeFragmentationBins(t4, w).milli[static_cast<int>(FragmentCase::kNoAccess)],
                   600);
  EXPECT_DOUBLE_EQ(NodeFragmentation(v100, w), 200);
  EXPECT_THAT(w.AllowedClasses("T4"), ::testing::ElementsAre(0, 1));
  EXPECT_THAT(w.AllowedClasses("V100M32"), ::testing::ElementsAre(1, 1));
  EXPECT_THAT(w.AllowedClasses(""), ::testing::ElementsAre(0, 1));
}

TEST(PreparedWorkloadTest, GroupsClassesByThreshold) {
  const PreparedWorkload w(Workload({{GpuTask(1000, 1, 500), 0.25},
                                     {CpuTask(1000), 0.25},
                                     {GpuTask(2000, 2, 1000), 0.25},
                                     {GpuTask(3000, 1, 500), 0.25}}));
  EXPECT_THAT(w.thresholds(), ::testing::ElementsAre(500, 1000));
  ASSERT_EQ(w.classes().size(), 4u);
  EXPECT_EQ(w.classes()[0].threshold, 0);
  EXPECT_EQ(w.classes()[1].threshold, -1);
  EXPECT_EQ(w.classes()[2].threshold, 1);
  EXPECT_EQ(w.classes()[3].threshold, 0);
}

TEST(NodeFragmentationDeltaTest, EvaluatesHypotheticalPlacements) {
  const PreparedWorkload w(SmallWorkload());
  const Node node = MakeNode(64000, {1000, 600});
  const NodeFragmentationDelta eval(node, w);
  // Before: CPU-only 0.2 * 1600; sharing fits, nothing short; whole fits, 0.3 * 600.
  EXPECT_DOUBLE_EQ(eval.Before(), 320 + 180);
  // A 0.5-GPU task on device 1 leaves [1000, 100]: 0.2 * 1100 + 0.5 * 100 + 0.3 * 100.
  const int32_t d1[] = {1};
  EXPECT_DOUBLE_EQ(eval.After({.cpu = 4000, .devices = d1, .gpu_milli = 500}), 220 + 50 + 30);
  // On device 0 it leaves [500, 600]: 0.2 * 1100 + 0 + 0.3 * 1100 (the whole class lacks GPU).
  const int32_t d0[] = {0};
  EXPECT_DOUBLE_EQ(eval.After({.cpu = 4000, .devices = d0, .gpu_milli = 500}), 220 + 330);
  // A CPU-only task taking 62 cores strands everything: no class's cpu fits any more.
  EXPECT_DOUBLE_EQ(eval.After({.cpu = 62000, .devices = {}, .gpu_milli = 0}), 1600);
  EXPECT_DOUBLE_EQ(eval.Delta({.cpu = 62000, .devices = {}, .gpu_milli = 0}), 1600 - 500);
}

TEST(MeasureClusterTest, SumsNodesAndSkipsRemovedOnes) {
  const PreparedWorkload w(SmallWorkload());
  std::vector<Node> nodes = {MakeNode(64000, {1000, 300}), MakeNode(64000, {1000, 1000}),
                             MakeNode(64000, {0, 0})};
  nodes[2].removed = true;
  nodes[2].gpus[0].used_milli = 0;  // free, but the node is gone
  const ClusterFragmentation c = MeasureCluster(nodes, w);
  // Node 0: 500 (above). Node 1: CPU-only 0.2 * 2000, the others fit with nothing short.
  EXPECT_DOUBLE_EQ(c.FragmentMilli(), 500 + 400);
  EXPECT_EQ(c.free_milli, 1300 + 2000);
  EXPECT_DOUBLE_EQ(c.Ratio(), 900.0 / 3300.0);
  EXPECT_EQ(MeasureCluster({}, w).Ratio(), 0);
}

// ---- Property: the incremental evaluation equals the definition. ----

// The slow reference: F_n(M) straight from the definition, one class at a time.
double ReferenceNodeFragmentation(const Node& node, const TargetWorkload& w) {
  double f = 0;
  for (const TaskClassShare& c : w.classes) {
    f += c.probability * static_cast<double>(ClassFragmentation(node, c.request));
  }
  return f;
}

Node Apply(Node node, int64_t cpu, const std::vector<int32_t>& devices, int64_t milli) {
  node.allocated.cpu += cpu;
  for (int32_t d : devices) node.gpus[d].used_milli += milli;
  return node;
}

const std::vector<std::string> kModels = {"G2", "T4", "V100M32"};
const std::vector<int64_t> kShares = {50, 100, 200, 250, 300, 500, 700, 1000};

TargetWorkload RandomWorkload(Rng& rng) {
  TargetWorkload w;
  const int classes = 1 + static_cast<int>(rng.Uniform(40));
  double total = 0;
  for (int i = 0; i < classes; ++i) {
    TaskRequest r;
    r.cpu = 1000 * static_cast<int64_t>(rng.Uniform(33));
    if (rng.Uniform(5) != 0) {
      r.gpu_milli = kShares[rng.Uniform(kShares.size())];
      r.gpu_count = r.gpu_milli < 1000 ? 1 : static_cast<int32_t>(1 + rng.Uniform(8));
      if (rng.Uniform(4) == 0) r.gpu_models = {kModels[rng.Uniform(kModels.size())]};
    }
    const double p = 0.01 + rng.UniformDouble();
    total += p;
    w.classes.push_back({r, p});
  }
  for (TaskClassShare& c : w.classes) c.probability /= total;
  return w;
}

Node RandomNode(Rng& rng) {
  std::vector<int64_t> free;
  const int devices = static_cast<int>(rng.Uniform(9));
  for (int i = 0; i < devices; ++i) {
    free.push_back(rng.Uniform(3) == 0 ? 1000 : 50 * static_cast<int64_t>(rng.Uniform(21)));
  }
  Node node = MakeNode(1000 * static_cast<int64_t>(rng.Uniform(97)), free,
                       kModels[rng.Uniform(kModels.size())]);
  if (devices > 0 && rng.Uniform(6) == 0) node.gpus[rng.Uniform(devices)].healthy = false;
  return node;
}

TEST(NodeFragmentationDeltaTest, PropertyMatchesTheDefinition) {
  Rng rng(20230710);
  for (int round = 0; round < 3000; ++round) {
    const TargetWorkload workload = RandomWorkload(rng);
    const PreparedWorkload prepared(workload);
    const Node node = RandomNode(rng);
    const NodeFragmentationDelta eval(node, prepared);
    const double before = ReferenceNodeFragmentation(node, workload);
    ASSERT_NEAR(eval.Before(), before, 1e-6) << "round " << round;

    // A random placement that fits: some cpu, and a share taken from a few devices.
    const int64_t cpu = static_cast<int64_t>(rng.Uniform(node.FreeCpu() / 1000 + 1)) * 1000;
    std::vector<int32_t> devices;
    int64_t min_free = kMilliGpuPerDevice;
    for (int32_t d = 0; d < static_cast<int32_t>(node.gpus.size()); ++d) {
      if (node.gpus[d].FreeMilli() > 0 && rng.Uniform(3) == 0) {
        devices.push_back(d);
        min_free = std::min(min_free, node.gpus[d].FreeMilli());
      }
    }
    int64_t milli = devices.empty() ? 0 : 1 + static_cast<int64_t>(rng.Uniform(min_free));
    // Often leave exactly a class's share on the tightest device: the boundary of "fits".
    const int64_t share = kShares[rng.Uniform(kShares.size())];
    if (!devices.empty() && min_free > share && rng.Uniform(2) == 0) milli = min_free - share;
    const HypotheticalPlacement placement{.cpu = cpu, .devices = devices, .gpu_milli = milli};
    const Node after = Apply(node, cpu, devices, milli);

    ASSERT_NEAR(eval.Delta(placement), ReferenceNodeFragmentation(after, workload) - before, 1e-6)
        << "round " << round;
    // Bit for bit what a fresh evaluation of the changed node gives: scores truncate alike.
    const FragmentBins fresh = NodeFragmentationBins(after, prepared);
    const FragmentBins incremental = eval.AfterBins(placement);
    for (int i = 0; i < kNumFragmentCases; ++i) {
      ASSERT_EQ(incremental.milli[i], fresh.milli[i]) << "round " << round << " case " << i;
    }
  }
}

}  // namespace
}  // namespace tessera::gpushare
