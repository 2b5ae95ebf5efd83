#include "agent/sim/sim_cluster.h"

#include <chrono>
#include <mutex>
#include <utility>
#include <memory>
#include <thread>
#include <vector>

#include "agent/common/testing/callback_probe.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/common/simulated_clock.h"

namespace tessera::agent {
namespace {

class NullObserver final : public TaskObserver {
 public:
  void OnTaskStarted(std::string_view, TimePoint) override {}
  void OnTaskEnded(const TaskEnd&) override {}
};

// What the cluster reported, in order: "start ID @ms" and "end ID PHASE REASON @ms".
class RecordingObserver final : public TaskObserver {
 public:
  void OnTaskStarted(std::string_view id, TimePoint time) override {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back(fmt::format("start {} @{}", id, time.time_since_epoch().count()));
  }
  void OnTaskEnded(const TaskEnd& end) override {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back(fmt::format("end {} {} {}@{}", end.launch_id, TaskPhaseName(end.phase),
                                end.reason.empty() ? "" : end.reason + " ",
                                end.time.time_since_epoch().count()));
  }
  std::vector<std::string> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(seen_, {});
  }

 private:
  std::mutex mu_;
  std::vector<std::string> seen_;
};

TaskLaunchSpec SimTask(std::string id, int64_t duration_ms) {
  TaskLaunchSpec spec;
  spec.launch_id = std::move(id);
  spec.placement.node = "a";
  spec.duration = Duration(duration_ms);
  return spec;
}

Node GpuNode(std::string name, int gpus) {
  Node node;
  node.name = std::move(name);
  for (int i = 0; i < gpus; ++i) node.gpus.push_back(GpuDevice{.index = i, .model = "H100"});
  node.capacity.gpu = kMilliGpuPerDevice * gpus;
  node.allocatable = node.capacity;
  return node;
}

TEST(SimClusterTest, UsageIsTheShareOfGpusItsTasksHold) {
  ManualClock clock;
  NullObserver observer;
  SimCluster cluster({.name = "sim", .nodes = {GpuNode("a", 8), GpuNode("b", 4), GpuNode("c", 0)},
                      .clock = &clock},
                     &observer);
  TaskLaunchSpec half;
  half.launch_id = "half-a1";
  half.placement.node = "a";
  half.placement.gpus = {0, 1, 2, 3};
  half.placement.gpu_milli = 1000;
  cluster.Launch(half);
  TaskLaunchSpec shared = half;
  shared.launch_id = "shared-a1";
  shared.placement.node = "b";
  shared.placement.gpus = {0};
  shared.placement.gpu_milli = 500;
  cluster.Launch(shared);

  std::vector<NodeUsage> usage = cluster.Usage();
  ASSERT_EQ(usage.size(), 3u);
  EXPECT_EQ(usage[0].node, "a");
  EXPECT_THAT(usage[0].gpu_utilization, ::testing::Each(50.0));
  EXPECT_THAT(usage[1].gpu_utilization, ::testing::Each(12.5));
  EXPECT_TRUE(usage[2].gpu_utilization.empty());  // no GPUs: nothing measured
  EXPECT_FALSE(usage[0].cpu.has_value());

  cluster.Cancel("half-a1", Duration(0));
  EXPECT_THAT(cluster.Usage()[0].gpu_utilization, ::testing::Each(0.0));
}

// The destruction contract (tessera/cluster/cluster.h): the destructor joins the timer thread
// before it returns, so nothing calls back afterwards. Each round destroys a cluster whose timer
// thread is ending its tasks.
TEST(SimClusterTest, DestroyingABusyClusterJoinsItsTimerBeforeReturning) {
  ManualClock clock;
  std::vector<std::shared_ptr<testing::CallbackProbe>> probes;
  for (int round = 0; round < 20; ++round) {
    auto probe = std::make_shared<testing::CallbackProbe>();
    probes.push_back(probe);
    auto observer = std::make_unique<testing::ProbeObserver>(probe);
    auto cluster = std::make_unique<SimCluster>(
        SimClusterOptions{.name = "sim", .nodes = {GpuNode("a", 8)}, .clock = &clock,
                          .tick = Duration(1)},
        observer.get());
    for (int task = 0; task < 200; ++task) {
      TaskLaunchSpec spec;
      spec.launch_id = fmt::format("r{}-t{}-a1", round, task);
      spec.placement.node = "a";
      spec.duration = Duration(0);  // due at once: the timer thread is ending them
      cluster->Launch(spec);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 4));
    cluster.reset();
    probe->ClusterGone();
    observer.reset();  // a late observer call is a use after free under ASan
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // time for a stray thread to call
  for (size_t round = 0; round < probes.size(); ++round) {
    EXPECT_EQ(probes[round]->late_calls(), 0) << "round " << round;
    EXPECT_GT(probes[round]->calls(), 0) << "round " << round << ": launches are told";
  }
}

// A launch's start is reported before its end (tessera/cluster/task_launch.h), even for a task
// due at once, which the timer thread ends as soon as it is tracked. The observer takes its time
// over each start, as a loaded machine may: an end reported meanwhile would come first.
TEST(SimClusterTest, ATaskDueAtOnceIsReportedStartedBeforeItEnds) {
  class SlowStarts final : public TaskObserver {
   public:
    void OnTaskStarted(std::string_view id, TimePoint time) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      recorder.OnTaskStarted(id, time);
    }
    void OnTaskEnded(const TaskEnd& end) override { recorder.OnTaskEnded(end); }
    RecordingObserver recorder;
  };
  ManualClock clock;
  SlowStarts observer;
  SimCluster cluster({.nodes = {GpuNode("a", 8)}, .clock = &clock, .tick = Duration(1)},
                     &observer);
  std::vector<std::string> seen;
  for (int task = 0; task < 5; ++task) {
    cluster.Launch(SimTask(fmt::format("t{}", task), 0));
    while (seen.size() < 2 * (task + 1)) {
      for (std::string& line : observer.recorder.Take()) seen.push_back(std::move(line));
      std::this_thread::yield();
    }
  }
  EXPECT_THAT(seen, ::testing::ElementsAre("start t0 @0", "end t0 Succeeded @0", "start t1 @0",
                                           "end t1 Succeeded @0", "start t2 @0",
                                           "end t2 Succeeded @0", "start t3 @0",
                                           "end t3 Succeeded @0", "start t4 @0",
                                           "end t4 Succeeded @0"));
}

// On a SimulatedClock's timers, a task ends exactly at its simulated instant, reported inside
// the Advance that reaches it, and not a moment before.
TEST(SimClusterTest, OnTimersATaskEndsAtItsSimulatedInstant) {
  SimulatedClock clock;
  RecordingObserver observer;
  SimCluster cluster({.nodes = {GpuNode("a", 8)}, .clock = &clock, .timers = &clock}, &observer);
  cluster.Launch(SimTask("short", 1000));
  cluster.Launch(SimTask("long", 5000));
  EXPECT_THAT(observer.Take(), ::testing::ElementsAre("start short @0", "start long @0"));
  clock.Advance(Duration(999));
  EXPECT_THAT(observer.Take(), ::testing::IsEmpty());
  clock.Advance(Duration(4001));  // past both: each ends at its own instant, in time order
  EXPECT_THAT(observer.Take(), ::testing::ElementsAre("end short Succeeded @1000",
                                                      "end long Succeeded @5000"));
}

// Hears of inventory changes: "NAME condition unschedulable removed" per node.
class RecordingInventory final : public InventoryObserver {
 public:
  void OnNodesChanged(const Cluster&, std::vector<Node> nodes) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Node& n : nodes) {
      seen_.push_back(fmt::format("{} {} {} {}", n.name,
                                  n.condition == NodeCondition::kDown ? "down" : "ready",
                                  n.unschedulable, n.removed));
    }
  }
  std::vector<std::string> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(seen_, {});
  }

 private:
  std::mutex mu_;
  std::vector<std::string> seen_;
};

TEST(SimClusterTest, ANodeThatChangesIsReportedAndTakesItsTasksWhenItFails) {
  SimulatedClock clock;
  RecordingObserver observer;
  RecordingInventory inventory;
  SimCluster cluster({.nodes = {GpuNode("a", 8), GpuNode("b", 8)},
                      .clock = &clock,
                      .timers = &clock,
                      .inventory_observer = &inventory},
                     &observer);
  TaskLaunchSpec on_gpu0 = SimTask("gpu0", 5000);
  on_gpu0.placement.gpus = {0};
  TaskLaunchSpec on_gpu1 = SimTask("gpu1", 5000);
  on_gpu1.placement.gpus = {1};
  TaskLaunchSpec on_b = SimTask("on-b", 5000);
  on_b.placement.node = "b";
  for (const TaskLaunchSpec& spec : {on_gpu0, on_gpu1, on_b}) cluster.Launch(spec);
  observer.Take();
  clock.Advance(Duration(1000));

  // A cordon changes the node and takes nothing.
  Node a = cluster.Inventory()[0];
  a.unschedulable = true;
  ASSERT_TRUE(cluster.ChangeNode(a, /*lose=*/false).ok());
  EXPECT_THAT(inventory.Take(), ::testing::ElementsAre("a ready true false"));
  EXPECT_TRUE(cluster.Inventory()[0].unschedulable);
  EXPECT_THAT(observer.Take(), ::testing::IsEmpty());

  // GPU 1 fails: only the task on it is lost.
  a.gpus[1].healthy = false;
  ASSERT_TRUE(cluster.ChangeNode(a, /*lose=*/true, /*lost_gpu=*/1).ok());
  EXPECT_THAT(observer.Take(), ::testing::ElementsAre("end gpu1 Failed Lost @1000"));

  // The node goes down: the rest of its tasks are lost; node b's runs on to its end.
  a.condition = NodeCondition::kDown;
  ASSERT_TRUE(cluster.ChangeNode(a, /*lose=*/true).ok());
  EXPECT_THAT(inventory.Take(), ::testing::ElementsAre("a ready true false", "a down true false"));
  EXPECT_THAT(observer.Take(), ::testing::ElementsAre("end gpu0 Failed Lost @1000"));
  clock.Advance(Duration(4000));
  EXPECT_THAT(observer.Take(), ::testing::ElementsAre("end on-b Succeeded @5000"));

  Node unknown = GpuNode("nowhere", 1);
  EXPECT_TRUE(absl::IsNotFound(cluster.ChangeNode(unknown, false)));
}

TEST(SimClusterTest, ATaskThatFailsEndsFailedWithExitCodeOne) {
  SimulatedClock clock;
  RecordingObserver observer;
  SimCluster cluster({.nodes = {GpuNode("a", 8)},
                      .clock = &clock,
                      .timers = &clock,
                      .fails = [](const TaskLaunchSpec& s) { return s.launch_id == "bad"; }},
                     &observer);
  cluster.Launch(SimTask("bad", 1000));
  cluster.Launch(SimTask("good", 1000));
  observer.Take();
  clock.Advance(Duration(1000));
  EXPECT_THAT(observer.Take(), ::testing::ElementsAre("end bad Failed Error @1000",
                                                      "end good Succeeded @1000"));
}

// With exit_after_grace, a cancelled task ends Cancelled once its grace is over; the end of its
// duration inside the grace is not reported. Without grace it ends at once.
TEST(SimClusterTest, CancelAfterGraceEndsTheTaskWhenTheGraceIsOver) {
  SimulatedClock clock;
  RecordingObserver observer;
  SimCluster cluster(
      {.nodes = {GpuNode("a", 8)}, .clock = &clock, .timers = &clock, .exit_after_grace = true},
      &observer);
  cluster.Launch(SimTask("graceful", 2000));
  cluster.Launch(SimTask("abrupt", 2000));
  observer.Take();
  clock.Advance(Duration(1000));
  cluster.Cancel("graceful", Duration(3000));
  cluster.Cancel("graceful", Duration(100));  // a second signal keeps the first deadline
  cluster.Cancel("abrupt", Duration(0));
  EXPECT_THAT(observer.Take(), ::testing::ElementsAre("end abrupt Cancelled @1000"));
  clock.Advance(Duration(2999));
  EXPECT_THAT(observer.Take(), ::testing::IsEmpty());  // its duration ended at 2000: ignored
  clock.Advance(Duration(1));
  EXPECT_THAT(observer.Take(), ::testing::ElementsAre("end graceful Cancelled @4000"));
  EXPECT_THAT(cluster.Usage()[0].gpu_utilization, ::testing::Each(0.0));
}

// With exit_after_grace, a task past its time limit is signalled at the limit and ends Failed
// once its termination grace is over; a cancel during that grace does not move the end.
TEST(SimClusterTest, ExitAfterGraceEndsATaskPastItsTimeLimitAfterItsGrace) {
  SimulatedClock clock;
  RecordingObserver observer;
  SimCluster cluster(
      {.nodes = {GpuNode("a", 8)}, .clock = &clock, .timers = &clock, .exit_after_grace = true},
      &observer);
  TaskLaunchSpec spec = SimTask("slow", 10'000);
  spec.time_limit = Duration(1000);
  spec.termination_grace = Duration(500);
  cluster.Launch(spec);
  observer.Take();
  clock.Advance(Duration(1200));
  cluster.Cancel("slow", Duration(5000));
  clock.Advance(Duration(299));
  EXPECT_THAT(observer.Take(), ::testing::IsEmpty());
  clock.Advance(Duration(1));
  EXPECT_THAT(observer.Take(), ::testing::ElementsAre("end slow Failed TimeLimitExceeded @1500"));
}

// With exit_after_grace, a cancel before the time limit is the first signal: its grace sets
// the end. A limit that passes inside that grace makes the task end TimeLimitExceeded then.
TEST(SimClusterTest, ExitAfterGraceACancelBeforeTheTimeLimitSetsTheEnd) {
  SimulatedClock clock;
  RecordingObserver observer;
  SimCluster cluster(
      {.nodes = {GpuNode("a", 8)}, .clock = &clock, .timers = &clock, .exit_after_grace = true},
      &observer);
  for (const char* name : {"early", "across"}) {
    TaskLaunchSpec spec = SimTask(name, 10'000);
    spec.time_limit = Duration(2000);
    spec.termination_grace = Duration(5000);
    cluster.Launch(spec);
  }
  observer.Take();
  clock.Advance(Duration(1000));
  cluster.Cancel("early", Duration(500));    // ends at 1500, before its limit
  cluster.Cancel("across", Duration(3000));  // ends at 4000; its limit passes at 2000
  cluster.Cancel("across", Duration(100));   // a second signal keeps the first deadline
  clock.Advance(Duration(500));
  EXPECT_THAT(observer.Take(), ::testing::ElementsAre("end early Cancelled @1500"));
  clock.Advance(Duration(2499));
  EXPECT_THAT(observer.Take(), ::testing::IsEmpty());
  clock.Advance(Duration(1));
  EXPECT_THAT(observer.Take(),
              ::testing::ElementsAre("end across Failed TimeLimitExceeded @4000"));
}

TEST(SimClusterTest, WithoutTheSimulatedTaintNodesKeepTheirOwnTaints) {
  SimulatedClock clock;
  NullObserver observer;
  Node tainted = GpuNode("a", 8);
  tainted.taints.push_back({.key = "team", .value = "x", .effect = TaintEffect::kNoSchedule});
  SimCluster plain({.nodes = {tainted}, .clock = &clock, .timers = &clock,
                    .simulated_taint = false},
                   &observer);
  ASSERT_EQ(plain.Inventory().size(), 1u);
  ASSERT_EQ(plain.Inventory()[0].taints.size(), 1u);
  EXPECT_EQ(plain.Inventory()[0].taints[0].key, "team");
  SimCluster marked({.nodes = {tainted}, .clock = &clock, .timers = &clock}, &observer);
  EXPECT_EQ(marked.Inventory()[0].taints.size(), 2u);
}

// Destroying a cluster cancels the timers it armed: advancing the clock afterwards calls nobody.
TEST(SimClusterTest, DestroyingAClusterOnTimersCancelsItsTimers) {
  SimulatedClock clock;
  auto probe = std::make_shared<testing::CallbackProbe>();
  auto observer = std::make_unique<testing::ProbeObserver>(probe);
  auto cluster = std::make_unique<SimCluster>(
      SimClusterOptions{.nodes = {GpuNode("a", 8)}, .clock = &clock, .timers = &clock},
      observer.get());
  cluster->Launch(SimTask("t", 1000));
  cluster.reset();
  probe->ClusterGone();
  clock.Advance(Duration(2000));
  EXPECT_EQ(probe->late_calls(), 0);
}

}  // namespace
}  // namespace tessera::agent
