#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sched/plugins/gpushare/best_fit.h"
#include "sched/plugins/gpushare/dot_product.h"
#include "sched/plugins/gpushare/fgd.h"
#include "sched/plugins/gpushare/gpu_clustering.h"
#include "sched/plugins/gpushare/gpu_packing.h"
#include "core/hosted_gpu_classes.h"
#include "sched/plugins/gpushare/random.h"
#include "sched/plugins/gpushare/test_util.h"
#include "tessera/common/rng.h"

namespace tessera::gpushare {
namespace {

using testing::CpuTask;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using testing::GpuTask;
using testing::MakeNode;
using testing::Workload;

struct ScoreCase {
  std::string name;
  TaskRequest task;
  Node node;
  int64_t want;
};

// ---- DotProduct ----

TEST(DotProductTest, ScoresAlignment) {
  const std::vector<ScoreCase> cases = {
      // node (0.5, 0.25) . task (0.0625, 0.125) = 0.0625 -> trunc(100 * (1 - 0.03125)) = 96
      {"aligned a little", GpuTask(8000, 1, 1000), MakeNode(64000, {1000, 1000}), 96},
      // node (1, 1) . task (1, 1) = 2 -> 0
      {"full node, full task", GpuTask(128000, 8, 1000),
       MakeNode(128000, std::vector<int64_t>(8, 1000)), 0},
      // node (1, 0.25) . task (0.25, 0) = 0.25 -> 87.5 -> 87
      {"cpu-only", CpuTask(32000), MakeNode(128000, {1000, 1000}), 87},
      // node (0.5, 0.0625) . task (0.03125, 0.0625) = 0.01953125 -> 99.02 -> 99
      {"sharing", GpuTask(4000, 1, 500), MakeNode(64000, {500}), 99},
      {"cpu does not fit", GpuTask(8000, 1, 1000), MakeNode(4000, {1000}), 0},
  };
  for (const ScoreCase& c : cases) EXPECT_EQ(DotProductScore(c.task, c.node), c.want) << c.name;
}

// ---- GpuPacking ----

TEST(GpuPackingTest, ScoreBands) {
  const std::vector<ScoreCase> cases = {
      {"idle 8-GPU node", GpuTask(1000, 1, 1000), MakeNode(96000, std::vector<int64_t>(8, 1000)),
       25},
      {"idle 2-GPU node", GpuTask(1000, 1, 500), MakeNode(96000, {1000, 1000}), 31},
      // Takes the partly used device with 400 free: 100 - 40 / 10.
      {"shares a used device", GpuTask(1000, 1, 300), MakeNode(96000, {1000, 400, 700}), 96},
      // 455 free: 45 percent (integer), 100 - 45 / 10 = 96.
      {"integer percent", GpuTask(1000, 1, 300), MakeNode(96000, {1000, 455}), 96},
      {"nearly full device", GpuTask(1000, 1, 50), MakeNode(96000, {1000, 50}), 100},
      // Partly used node, but the task needs a fully free device: 50 - 1.
      {"whole GPU on used node", GpuTask(1000, 1, 1000), MakeNode(96000, {1000, 400}), 49},
      {"two whole GPUs on used node", GpuTask(1000, 2, 1000),
       MakeNode(96000, {1000, 1000, 1000, 200}), 48},
      {"share only fits a free device", GpuTask(1000, 1, 500), MakeNode(96000, {1000, 100}), 49},
      {"cpu-only", CpuTask(1000), MakeNode(96000, {1000, 400}), 0},
      {"devices do not fit", GpuTask(1000, 1, 500), MakeNode(96000, {300, 100}), 0},
  };
  for (const ScoreCase& c : cases) EXPECT_EQ(GpuPackingScore(c.task, c.node), c.want) << c.name;
}

// ---- GpuClustering ----

Node Hosting(Node node, std::map<int32_t, int32_t> classes) {
  node.hosted_gpu_classes = std::move(classes);
  return node;
}

TEST(GpuClusteringTest, ScoreBands) {
  // 8 devices, 6500 free: bonus = 25 * 1500 / 8000 = 4.
  const Node used = MakeNode(96000, {1000, 1000, 1000, 1000, 1000, 1000, 500, 0});
  const std::vector<ScoreCase> cases = {
      {"idle node", GpuTask(1000, 1, 500), MakeNode(96000, std::vector<int64_t>(8, 1000)), 25},
      // A 2-GPU node has at most 2000 free: bonus 25 * 6000 / 8000 = 18.
      {"idle small node", GpuTask(1000, 1, 500), MakeNode(96000, {1000, 1000}), 43},
      {"own class only", GpuTask(1000, 1, 500), Hosting(used, {{kSharingClass, 3}}), 79},
      {"own class and others", GpuTask(1000, 1, 500), Hosting(used, {{kSharingClass, 1}, {1, 1}}),
       54},
      {"other classes only", GpuTask(1000, 1, 1000), Hosting(used, {{kSharingClass, 3}}), 4},
      {"whole-GPU class", GpuTask(1000, 2, 1000), Hosting(used, {{2, 1}}), 79},
      {"cpu-only", CpuTask(1000), Hosting(used, {{kSharingClass, 3}}), 0},
  };
  for (const ScoreCase& c : cases) {
    EXPECT_EQ(GpuClusteringScore(c.task, c.node), c.want) << c.name;
  }
}

TEST(GpuClusteringTest, RejectsNodesWithoutClassBookkeeping) {
  const Node used = MakeNode(96000, {1000, 500});
  EXPECT_EQ(GpuClusteringScore(GpuTask(1000, 1, 500), used), std::nullopt);
  GpuClustering plugin;
  int64_t score = -1;
  const SchedStatus s = plugin.Score(CycleState(), GpuTask(1000, 1, 500), used, &score);
  EXPECT_EQ(s.code(), SchedStatus::Code::kError);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("RecordHostedClass"));
}

TEST(HostedGpuClassesTest, RecordsAndForgets) {
  Node node = MakeNode(96000, {1000, 1000});
  EXPECT_EQ(GpuRequestClass(CpuTask(1000)), kNoGpuClass);
  EXPECT_EQ(GpuRequestClass(GpuTask(1000, 1, 300)), kSharingClass);
  EXPECT_EQ(GpuRequestClass(GpuTask(1000, 1, 1000)), 1);
  EXPECT_EQ(GpuRequestClass(GpuTask(1000, 4, 1000)), 4);

  RecordHostedClass(node, GpuTask(1000, 1, 300), +1);
  RecordHostedClass(node, GpuTask(1000, 1, 200), +1);
  RecordHostedClass(node, GpuTask(1000, 2, 1000), +1);
  RecordHostedClass(node, CpuTask(1000), +1);
  EXPECT_THAT(node.hosted_gpu_classes, ElementsAre(std::pair(0, 2), std::pair(2, 1)));
  RecordHostedClass(node, GpuTask(1000, 2, 1000), -1);
  RecordHostedClass(node, GpuTask(1000, 1, 300), -1);
  EXPECT_THAT(node.hosted_gpu_classes, ElementsAre(std::pair(0, 1)));
}

// ---- BestFit ----

TEST(BestFitTest, ScoresLeftover) {
  const std::vector<ScoreCase> cases = {
      // s = 0.5 * 56000 / 128000 + 0.5 * 1000 / 8000 = 0.28125 -> 71.875 -> 71
      {"some left", GpuTask(8000, 1, 1000), MakeNode(64000, {1000, 1000}), 71},
      {"nothing left", GpuTask(64000, 2, 1000), MakeNode(64000, {1000, 1000}), 100},
      // s = 0.5 * 1 + 0.5 * 1 -> 0
      {"everything left", CpuTask(0), MakeNode(128000, std::vector<int64_t>(8, 1000)), 0},
      {"does not fit", GpuTask(8000, 2, 1000), MakeNode(64000, {1000}), 0},
  };
  for (const ScoreCase& c : cases) EXPECT_EQ(BestFitScore(c.task, c.node), c.want) << c.name;
}

TEST(BestFitTest, NormalizesMinMax) {
  std::vector<int64_t> scores = {71, 50, 90};
  MinMaxNormalize(scores);
  EXPECT_THAT(scores, ElementsAre(52, 0, 100));  // (71 - 50) * 100 / 40 = 52
  std::vector<int64_t> equal = {60, 60};
  MinMaxNormalize(equal);
  EXPECT_THAT(equal, ElementsAre(0, 0));
  BestFit plugin;
  EXPECT_TRUE(plugin.HasNormalizeScore());
}

// ---- FGD ----

TEST(FgdTest, ScoreOfTruncatesTheSigmoid) {
  EXPECT_EQ(FgdScoreOf(1000, 1000), 50);
  EXPECT_EQ(FgdScoreOf(1000, 1001), 49);  // the smallest increase already costs a point
  EXPECT_EQ(FgdScoreOf(1000, 2000), 26);  // 100 * sigmoid(-1) = 26.89
  EXPECT_EQ(FgdScoreOf(2000, 1000), 73);  // 100 * sigmoid(1) = 73.11
  EXPECT_EQ(FgdScoreOf(0, 100000), 0);
}

TEST(FgdTest, SharingTaskTakesTheDeviceThatFragmentsLeast) {
  // One class, 0.5 GPU. Free [1000, 600]: on device 0 nothing becomes fragment (score 50); on
  // device 1, the tightest, 100 milli-GPU does (score 47).
  const PreparedWorkload w(Workload({{GpuTask(0, 1, 500), 1.0}}));
  const FgdChoice choice = EvaluateFgd(GpuTask(0, 1, 500), MakeNode(64000, {1000, 600}), w);
  EXPECT_EQ(choice.score, 50);
  EXPECT_THAT(choice.devices, ElementsAre(0));
}

TEST(FgdTest, DevicesThatTieOnTheTruncatedScoreGoToTheLowestIndex) {
  // 99.8% CPU-only, 0.2% a 0.9-GPU class. Free [950, 1000], a 0.1-GPU task:
  //   device 0: delta = -98.1 (score 52); device 1: delta = -99.8 (score 52).
  // The scores tie, so device 0 wins although device 1 lowers fragmentation more.
  const PreparedWorkload w(Workload({{CpuTask(0), 0.998}, {GpuTask(0, 1, 900), 0.002}}));
  const Node node = MakeNode(64000, {950, 1000});
  const NodeFragmentationDelta eval(node, w);
  const int32_t d0[] = {0};
  const int32_t d1[] = {1};
  EXPECT_NEAR(eval.Delta({.cpu = 0, .devices = d0, .gpu_milli = 100}), -98.1, 1e-9);
  EXPECT_NEAR(eval.Delta({.cpu = 0, .devices = d1, .gpu_milli = 100}), -99.8, 1e-9);
  const FgdChoice choice = EvaluateFgd(GpuTask(0, 1, 100), node, w);
  EXPECT_EQ(choice.score, 52);
  EXPECT_THAT(choice.devices, ElementsAre(0));
}

TEST(FgdTest, WholeGpuTaskTakesTheLowestIndexFreeDevices) {
  const PreparedWorkload w(Workload({{GpuTask(0, 1, 500), 1.0}}));
  const FgdChoice choice =
      EvaluateFgd(GpuTask(0, 2, 1000), MakeNode(64000, {1000, 500, 1000, 1000}), w);
  EXPECT_THAT(choice.devices, ElementsAre(0, 2));
  // Taking two free devices leaves [_, 500, _, 1000]: nothing unusable either way.
  EXPECT_EQ(choice.score, 50);
  EXPECT_EQ(EvaluateFgd(GpuTask(0, 2, 1000), MakeNode(64000, {1000, 500}), w).score, 0);
}

TEST(FgdTest, CpuOnlyTaskIsChargedForStrandedGpus) {
  const PreparedWorkload w(Workload({{GpuTask(8000, 1, 500), 1.0}}));
  // 10 cores free: after a 4-core task the class's 8 cores no longer fit: 1000 stranded.
  const FgdChoice tight = EvaluateFgd(CpuTask(4000), MakeNode(10000, {1000}), w);
  EXPECT_EQ(tight.score, 26);
  EXPECT_TRUE(tight.devices.empty());
  EXPECT_EQ(EvaluateFgd(CpuTask(4000), MakeNode(20000, {1000}), w).score, 50);
  EXPECT_EQ(EvaluateFgd(CpuTask(4000), MakeNode(20000, {}), w).score, 50);
}

TEST(FgdTest, PropertyScoreIsTheBestDeviceByTheDefinition) {
  // For sharing tasks, the chosen device has the highest score of all fitting devices, each
  // computed from a fresh evaluation of the node with the task placed, and is the lowest index
  // among equals.
  Rng rng(7);
  const std::vector<int64_t> shares = {100, 200, 250, 300, 500, 600, 800, 1000};
  for (int round = 0; round < 500; ++round) {
    TargetWorkload workload;
    for (int i = 0; i < 6; ++i) {
      const int64_t share = shares[rng.Uniform(shares.size())];
      const int32_t count = share < 1000 ? 1 : static_cast<int32_t>(1 + rng.Uniform(4));
      workload.classes.push_back(
          {GpuTask(4000 * static_cast<int64_t>(rng.Uniform(5)), count, share), 0.1});
    }
    workload.classes.push_back({CpuTask(8000), 0.4});
    const PreparedWorkload prepared(workload);
    std::vector<int64_t> free;
    for (int i = 0; i < 8; ++i) free.push_back(50 * static_cast<int64_t>(rng.Uniform(21)));
    const Node node = MakeNode(16000 * static_cast<int64_t>(rng.Uniform(7)), free);
    const TaskRequest task = GpuTask(4000, 1, 50 * static_cast<int64_t>(1 + rng.Uniform(19)));

    const double before = NodeFragmentation(node, prepared);
    int64_t best = -1;
    int32_t best_device = -1;
    for (int32_t d = 0; d < 8; ++d) {
      if (node.gpus[d].FreeMilli() < task.gpu_milli) continue;
      Node after = node;
      after.allocated.cpu += task.cpu;
      after.gpus[d].used_milli += task.gpu_milli;
      const int64_t s = FgdScoreOf(before, NodeFragmentation(after, prepared));
      if (s > best) {
        best = s;
        best_device = d;
      }
    }
    const FgdChoice choice = EvaluateFgd(task, node, prepared);
    if (best_device < 0) {
      EXPECT_TRUE(choice.devices.empty()) << "round " << round;
      continue;
    }
    EXPECT_EQ(choice.score, best) << "round " << round;
    EXPECT_THAT(choice.devices, ElementsAre(best_device)) << "round " << round;
  }
}

TEST(FgdTest, FactoryNeedsATargetWorkload) {
  Handle handle;
  const absl::StatusOr<std::unique_ptr<Plugin>> missing = Fgd::New({}, handle);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(), ::testing::HasSubstr("target_workload"));

  const TargetWorkload bad = Workload({{GpuTask(0, 1, 500), 1.5}});
  handle.target_workload = &bad;
  EXPECT_THAT(Fgd::New({}, handle).status().message(),
              ::testing::HasSubstr("classes[0].probability"));

  const TargetWorkload good = Workload({{GpuTask(0, 1, 500), 1.0}});
  handle.target_workload = &good;
  EXPECT_EQ(Fgd::New({{"foo", "1"}}, handle).status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::unique_ptr<Plugin>> plugin = Fgd::New({}, handle);
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_EQ((*plugin)->name(), "FGD");
}

TEST(FgdTest, AnEmptyWorkloadScoresEveryNodeAlike) {
  const TargetWorkload empty;
  Handle handle{.target_workload = &empty};
  absl::StatusOr<std::unique_ptr<Plugin>> plugin = Fgd::New({}, handle);
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  const auto& fgd = dynamic_cast<const Fgd&>(**plugin);
  CycleState state;
  for (const Node& node : {MakeNode(64000, {1000, 1000}), MakeNode(8000, {1000, 1000, 400})}) {
    for (const TaskRequest& task : {GpuTask(0, 1, 500), GpuTask(0, 2, 1000), CpuTask(1000)}) {
      int64_t score = -1;
      ASSERT_TRUE(fgd.Score(state, task, node, &score).ok());
      EXPECT_EQ(score, 50);
    }
  }
}

TEST(FgdTest, SetTargetWorkloadReplacesTheWorkloadOrKeepsItOnError) {
  // Device 1 has 500 free: a 500 task there leaves no fragment for a whole-GPU workload, one on
  // device 0 strands 500.
  const Node node = MakeNode(64000, {1000, 500});
  const TaskRequest task = GpuTask(0, 1, 500);
  Fgd plugin(TargetWorkload{});
  CycleState state;
  EXPECT_THAT(EvaluateFgd(task, node, PreparedWorkload(TargetWorkload{})).devices,
              ElementsAre(0));
  ASSERT_TRUE(plugin.SetTargetWorkload(Workload({{GpuTask(0, 1, 1000), 1.0}})).ok());
  Placement placement;
  ASSERT_TRUE(plugin.Reserve(state, task, node, &placement).ok());
  EXPECT_THAT(placement.gpus, ElementsAre(1));

  const absl::Status bad = plugin.SetTargetWorkload(Workload({{GpuTask(0, 1, 500), -0.5}}));
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), ::testing::HasSubstr("classes[0].probability"));
  Placement again;
  ASSERT_TRUE(plugin.Reserve(state, task, node, &again).ok());
  EXPECT_THAT(again.gpus, ElementsAre(1));
}

TEST(FgdTest, ReservePlacesOnTheScoredDevice) {
  const TargetWorkload workload = Workload({{GpuTask(0, 1, 500), 1.0}});
  Fgd plugin(workload);
  CycleState state;
  Node node = MakeNode(64000, {1000, 600});
  for (GpuDevice& d : node.gpus) d.memory = int64_t{16} << 30;
  TaskRequest task = GpuTask(0, 1, 500);
  task.gpu_memory = 1 << 20;
  int64_t score = -1;
  ASSERT_TRUE(plugin.Score(state, task, node, &score).ok());
  EXPECT_EQ(score, 50);
  Placement placement;
  ASSERT_TRUE(plugin.Reserve(state, task, node, &placement).ok());
  EXPECT_THAT(placement.gpus, ElementsAre(0));
  EXPECT_EQ(placement.gpu_milli, 500);
  EXPECT_EQ(placement.gpu_memory, 1 << 20);
}

// ---- Random ----

TEST(RandomTest, OneUniformlyDrawnFeasibleNodeScoresTheMaximum) {
  Rng rng(1);
  Random plugin(&rng);
  int64_t a = -1, b = -1;
  ASSERT_TRUE(plugin.Score(CycleState(), GpuTask(1000, 1, 500), MakeNode(1000, {600}), &a).ok());
  ASSERT_TRUE(
      plugin.Score(CycleState(), GpuTask(1000, 1, 500), MakeNode(96000, {1000, 1000}), &b).ok());
  EXPECT_EQ(a, b);  // raw scores are constant, so they cache
  ASSERT_TRUE(plugin.HasNormalizeScore());

  std::vector<int> wins(4, 0);
  for (int i = 0; i < 4000; ++i) {
    std::vector<int64_t> scores = {a, a, a, a};
    ASSERT_TRUE(plugin.NormalizeScore(CycleState(), GpuTask(1000, 1, 500), scores).ok());
    ASSERT_EQ(std::count(scores.begin(), scores.end(), kMaxNodeScore), 1);
    ASSERT_EQ(std::count(scores.begin(), scores.end(), kMinNodeScore), 3);
    ++wins[std::max_element(scores.begin(), scores.end()) - scores.begin()];
  }
  for (int n : wins) EXPECT_GT(n, 850);  // ~1000 each
}

TEST(RandomTest, ReserveDrawsAFittingDeviceUniformly) {
  Rng rng(42);
  Random plugin(&rng);
  CycleState state;
  const Node node = MakeNode(96000, {1000, 200, 600, 500});
  std::map<int32_t, int> seen;
  for (int i = 0; i < 3000; ++i) {
    Placement placement;
    ASSERT_TRUE(plugin.Reserve(state, GpuTask(1000, 1, 500), node, &placement).ok());
    ASSERT_EQ(placement.gpus.size(), 1u);
    ++seen[placement.gpus[0]];
  }
  ASSERT_THAT(seen, ::testing::SizeIs(3));  // devices 0, 2, 3; never 1
  EXPECT_EQ(seen.count(1), 0u);
  for (const auto& [device, n] : seen) EXPECT_GT(n, 850) << device;  // ~1000 each

  Placement whole;
  ASSERT_TRUE(plugin.Reserve(state, GpuTask(1000, 1, 1000), node, &whole).ok());
  EXPECT_THAT(whole.gpus, ElementsAre(0));
}

TEST(RandomTest, FactoryNeedsAnRng) {
  Handle handle;
  EXPECT_EQ(Random::New({}, handle).status().code(), absl::StatusCode::kFailedPrecondition);
  Rng rng(1);
  handle.rng = &rng;
  EXPECT_TRUE(Random::New({}, handle).ok());
  EXPECT_EQ(Random::New({{"seed", "3"}}, handle).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// ---- Reserve of the tightest-device policies ----

TEST(TightestReserveTest, AllPoliciesTakeTheTightestFittingDevice) {
  std::vector<std::unique_ptr<ReservePlugin>> plugins;
  plugins.push_back(std::make_unique<DotProduct>());
  plugins.push_back(std::make_unique<GpuPacking>());
  plugins.push_back(std::make_unique<GpuClustering>());
  plugins.push_back(std::make_unique<BestFit>());
  const Node node = MakeNode(96000, {1000, 600, 700, 400});
  for (const auto& plugin : plugins) {
    CycleState state;
    Placement sharing;
    ASSERT_TRUE(plugin->Reserve(state, GpuTask(1000, 1, 500), node, &sharing).ok());
    EXPECT_THAT(sharing.gpus, ElementsAre(1)) << plugin->name();
    EXPECT_EQ(sharing.gpu_milli, 500);

    Placement chosen_earlier;
    chosen_earlier.gpus = {2};
    ASSERT_TRUE(plugin->Reserve(state, GpuTask(1000, 1, 500), node, &chosen_earlier).ok());
    EXPECT_THAT(chosen_earlier.gpus, ElementsAre(2)) << plugin->name();

    Placement cpu_only;
    ASSERT_TRUE(plugin->Reserve(state, CpuTask(1000), node, &cpu_only).ok());
    EXPECT_TRUE(cpu_only.gpus.empty());

    Placement too_big;
    const SchedStatus s = plugin->Reserve(state, GpuTask(1000, 2, 1000), node, &too_big);
    EXPECT_EQ(s.code(), SchedStatus::Code::kUnschedulable) << plugin->name();
    EXPECT_EQ(s.reason(), &kNoFittingDevices);
  }
}

TEST(FactoriesTest, RejectArgumentsAndNameThemselves) {
  const Handle handle;
  const PluginArgs args = {{"weight", "2"}};
  using Factory = absl::StatusOr<std::unique_ptr<Plugin>> (*)(const PluginArgs&, const Handle&);
  const std::vector<std::pair<Factory, std::string_view>> factories = {
      {&DotProduct::New, "DotProduct"},
      {&GpuPacking::New, "GpuPacking"},
      {&GpuClustering::New, "GpuClustering"},
      {&BestFit::New, "BestFit"}};
  for (const auto& [factory, name] : factories) {
    const absl::StatusOr<std::unique_ptr<Plugin>> bad = factory(args, handle);
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("\"weight\"")) << name;
    const absl::StatusOr<std::unique_ptr<Plugin>> good = factory({}, handle);
    ASSERT_TRUE(good.ok()) << name;
    EXPECT_EQ((*good)->name(), name);
  }
}

}  // namespace
}  // namespace tessera::gpushare
