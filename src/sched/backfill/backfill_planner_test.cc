#include "sched/backfill/backfill_planner.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sched/testing/test_nodes.h"
#include "sched/plugins/builtin.h"
#include "sched/profile.h"
#include "tessera/common/rng.h"
#include "tessera/sched/decision_sink.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;

constexpr int64_t kGi = int64_t{1} << 30;
constexpr TimePoint kNever = TimePoint::max();

TimePoint At(int64_t seconds) { return TimePoint(std::chrono::seconds(seconds)); }
Duration Seconds(int64_t s) { return std::chrono::seconds(s); }

Node GpuNode(std::string name, int32_t gpus, int64_t cpu = 64'000) {
  return testing::NamedGpuNode(std::move(name), gpus, cpu);
}

TaskRequest GpuTask(int32_t gpus, int64_t cpu = 1000) {
  TaskRequest t;
  t.cpu = cpu;
  t.gpu_count = gpus;
  t.gpu_milli = gpus > 0 ? kMilliGpuPerDevice : 0;
  return t;
}

class AcceptAll : public DecisionSink {
 public:
  absl::Status Bind(std::string_view, int32_t, const Placement&) override {
    return absl::OkStatus();
  }
};

// Every quantity of every node, to check that a dry run leaves the state as it was.
struct NodeSnapshot {
  Resources allocated;
  std::vector<std::pair<int64_t, int64_t>> devices;
  std::map<int32_t, int32_t> hosted;
  friend bool operator==(const NodeSnapshot&, const NodeSnapshot&) = default;
};

std::vector<NodeSnapshot> Snapshot(const ClusterState& state) {
  std::vector<NodeSnapshot> out;
  for (const Node& n : state.nodes()) {
    NodeSnapshot s{n.allocated, {}, n.hosted_gpu_classes};
    for (const GpuDevice& d : n.gpus) s.devices.emplace_back(d.used_milli, d.used_memory);
    out.push_back(std::move(s));
  }
  return out;
}

struct RoundCounts {
  int checked = 0;  // Delays said false and the re-plan was compared
  int delayed = 0;  // Delays said true
  int beside = 0;   // checked, with the job on a reserved node while the reservation starts
};

class BackfillTest : public ::testing::Test {
 protected:
  // `first_fit`: the default profile without scorers and with tieBreak first, so placements
  // depend only on which nodes fit (see the planner's Exactness note).
  void MakeFramework(bool first_fit) {
    absl::StatusOr<Profile> profile = BuiltinProfile("default");
    ASSERT_TRUE(profile.ok()) << profile.status();
    if (first_fit) {
      profile->score.clear();
      profile->tie_break = TieBreak::kFirst;
    }
    Handle handle{.rng = &rng_, .clock = &clock_, .sink = &sink_};
    absl::StatusOr<std::unique_ptr<Framework>> fw =
        Framework::Create(*profile, BuiltinPlugins(), handle);
    ASSERT_TRUE(fw.ok()) << fw.status();
    framework_ = *std::move(fw);
    planner_ = std::make_unique<BackfillPlanner>(framework_.get());
  }

  void SetUp() override { MakeFramework(/*first_fit=*/false); }

  void AddNodes(int32_t count, int32_t gpus) {
    for (int32_t i = 0; i < count; ++i) {
      ASSERT_TRUE(state_.AddNode(GpuNode("node-" + std::to_string(i), gpus)).ok());
    }
  }

  // Runs a job of one task per entry of `nodes`, each holding `gpus` devices (the lowest free
  // ones) on that node, until `end`.
  void Run(int64_t job, TimePoint end, std::vector<int32_t> nodes, int32_t gpus) {
    PlannedRelease r{.job = job, .end = end};
    for (int32_t n : nodes) {
      TaskRequest task = GpuTask(gpus);
      Placement p = On(n, gpus);
      ASSERT_TRUE(state_.Assume(task, p).ok());
      r.tasks.push_back(task);
      r.placements.push_back(p);
    }
    running_.push_back(std::move(r));
  }

  // Runs a job of `tasks` where the Framework places it (bound into the state) until end(),
  // which is drawn only when it is placed; a job that does not fit is left out.
  template <typename End>
  void RunWhereItFits(int64_t job, const std::vector<TaskRequest>& tasks, End end) {
    GangAttempt g =
        framework_->ScheduleGang(state_, "r", tasks, static_cast<int32_t>(tasks.size()));
    if (!g.status.ok()) return;
    PlannedRelease r{.job = job, .end = end()};
    for (size_t k = 0; k < g.placements.size(); ++k) {
      r.tasks.push_back(tasks[g.task_indices[k]]);
      r.placements.push_back(g.placements[k]);
    }
    running_.push_back(std::move(r));
  }

  // A placement of `gpus` of node n's lowest free devices.
  Placement On(int32_t n, int32_t gpus) const {
    Placement p;
    p.node_index = n;
    p.node = state_.node(n).name;
    for (const GpuDevice& d : state_.node(n).gpus) {
      if (static_cast<int32_t>(p.gpus.size()) < gpus && d.used_milli == 0)
        p.gpus.push_back(d.index);
    }
    p.gpu_milli = gpus > 0 ? kMilliGpuPerDevice : 0;
    return p;
  }

  void RandomRound(Rng& rng, size_t compared, bool same_nodes, RoundCounts& counts);

  static BlockedJob Blocked(int64_t job, int32_t tasks, int32_t gpus,
                            std::optional<Duration> limit) {
    BlockedJob b{.job = job, .min_available = tasks, .time_limit = limit};
    b.tasks.assign(tasks, GpuTask(gpus));
    return b;
  }

  static std::vector<int32_t> Nodes(const Reservation& r) {
    std::vector<int32_t> nodes;
    for (const Placement& p : r.placements) nodes.push_back(p.node_index);
    std::sort(nodes.begin(), nodes.end());
    return nodes;
  }

  // The running jobs as the planner reads them.
  ReleaseSchedule Releases() const {
    ReleaseSchedule releases;
    for (const PlannedRelease& r : running_) releases.Set(r);
    return releases;
  }

  std::vector<Reservation> Plan(std::vector<BlockedJob> blocked) {
    return planner_->Plan(state_, now_, Releases(), blocked);
  }

  // Whether a job of one `gpus`-device task per entry of `nodes` (the lowest free devices),
  // ending at `end`, would delay `plan`.
  bool Delays(const std::vector<Reservation>& plan, std::vector<int32_t> nodes, int32_t gpus,
              TimePoint end) {
    std::vector<TaskRequest> tasks;
    std::vector<Placement> placements;
    for (int32_t n : nodes) {
      tasks.push_back(GpuTask(gpus));
      placements.push_back(On(n, gpus));
    }
    return planner_->Delays(state_, now_, Releases(), plan, tasks, placements, end);
  }

  Rng rng_{7};
  ManualClock clock_;
  AcceptAll sink_;
  std::unique_ptr<Framework> framework_;
  std::unique_ptr<BackfillPlanner> planner_;
  ClusterState state_;
  std::vector<PlannedRelease> running_;
  TimePoint now_ = At(0);
};

// Checks that running jobs and reservations never hold more than a node has at any instant.
void ExpectConsistent(const ClusterState& state, TimePoint now,
                      const std::vector<PlannedRelease>& running,
                      const std::vector<Reservation>& plan) {
  std::vector<TimePoint> instants{now};
  for (const Reservation& r : plan) {
    if (r.start != kNever) instants.push_back(r.start);
  }
  for (TimePoint t : instants) {
    for (int32_t n = 0; n < state.size(); ++n) {
      const Node& node = state.node(n);
      int64_t cpu = node.allocated.cpu;
      std::vector<int64_t> milli;
      for (const GpuDevice& d : node.gpus) milli.push_back(d.used_milli);
      for (const PlannedRelease& job : running) {
        if (std::max(job.end, now) > t) continue;
        for (size_t k = 0; k < job.tasks.size(); ++k) {
          if (job.placements[k].node_index != n) continue;
          cpu -= job.tasks[k].cpu;
          for (int32_t d : job.placements[k].gpus) milli[d] -= job.placements[k].gpu_milli;
        }
      }
      for (const Reservation& r : plan) {
        if (r.start == kNever || r.start > t || r.End() <= t) continue;
        for (size_t k = 0; k < r.tasks.size(); ++k) {
          if (r.placements[k].node_index != n) continue;
          cpu += r.tasks[k].cpu;
          for (int32_t d : r.placements[k].gpus) milli[d] += r.placements[k].gpu_milli;
        }
      }
      EXPECT_LE(cpu, node.allocatable.cpu)
          << "node " << n << " at " << t.time_since_epoch().count();
      for (int64_t m : milli) {
        EXPECT_LE(m, kMilliGpuPerDevice) << "node " << n << " at " << t.time_since_epoch().count();
      }
    }
  }
}

TEST_F(BackfillTest, FitsNowStartsNow) {
  AddNodes(2, 8);
  Run(1, At(100), {0}, 8);
  std::vector<Reservation> plan = Plan({Blocked(10, 1, 8, Seconds(60))});
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].job, 10);
  EXPECT_EQ(plan[0].start, now_);
  EXPECT_THAT(Nodes(plan[0]), ElementsAre(1));
  EXPECT_EQ(plan[0].End(), At(60));
}

TEST_F(BackfillTest, ReservationStartsAtTheEarliestEndThatFreesEnough) {
  AddNodes(4, 8);
  Run(1, At(100), {0}, 8);
  Run(2, At(50), {1}, 8);
  Run(3, At(200), {2}, 8);
  Run(4, kNever, {3}, 8);
  std::vector<Reservation> plan = Plan({Blocked(10, 2, 8, Seconds(60))});
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].start, At(100));
  EXPECT_THAT(Nodes(plan[0]), ElementsAre(0, 1));
  EXPECT_THAT(plan[0].task_indices, ElementsAre(0, 1));
  ASSERT_EQ(plan[0].tasks.size(), 2u);
  EXPECT_EQ(plan[0].tasks[0].gpu_count, 8);
}

// A gang runs inside one cluster, so its reservation waits for one cluster to hold all of it.
// East (nodes 0, 1) frees node 0 at 10 s; west (nodes 2, 3, 4) frees node 2 at 20 s. At 10 s
// three nodes are free, but split across the clusters: the gang of three starts at 20 s, in west.
TEST_F(BackfillTest, ReservationKeepsTheGangInOneCluster) {
  for (int32_t i = 0; i < 5; ++i) {
    Node node = GpuNode("node-" + std::to_string(i), 8);
    node.cluster = i < 2 ? "east" : "west";
    ASSERT_TRUE(state_.AddNode(std::move(node)).ok());
  }
  Run(1, At(10), {0}, 8);
  Run(2, At(30), {1}, 8);
  Run(3, At(20), {2}, 8);
  const std::vector<Reservation> plan = Plan({Blocked(9, 3, 8, Seconds(100))});
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].start, At(20));
  EXPECT_THAT(Nodes(plan[0]), ElementsAre(2, 3, 4));
  ExpectConsistent(state_, now_, running_, plan);
}

TEST_F(BackfillTest, PartialReleasesAddUp) {
  // Four 2-GPU jobs on one node end one after the other; an 8-GPU task needs them all gone.
  AddNodes(1, 8);
  for (int64_t j = 0; j < 4; ++j) Run(j, At(10 * (4 - j)), {0}, 2);
  EXPECT_EQ(Plan({Blocked(10, 1, 8, std::nullopt)})[0].start, At(40));
  EXPECT_EQ(Plan({Blocked(10, 1, 4, std::nullopt)})[0].start, At(20));
}

TEST_F(BackfillTest, OverdueJobsAreTakenToEndNow) {
  AddNodes(1, 8);
  now_ = At(500);
  Run(1, At(100), {0}, 8);
  EXPECT_EQ(Plan({Blocked(10, 1, 8, Seconds(10))})[0].start, At(500));
}

TEST_F(BackfillTest, JobEndingBeforeTheReservationStartsIsBackfillable) {
  AddNodes(3, 8);
  Run(1, At(100), {0}, 8);
  Run(2, At(100), {1}, 4);  // node 1 has 4 free GPUs now
  std::vector<Reservation> plan = Plan({Blocked(10, 2, 8, Seconds(60))});
  ASSERT_EQ(plan[0].start, At(100));
  ASSERT_THAT(Nodes(plan[0]), ElementsAre(0, 1));
  // On a reserved node, but gone before the reservation starts (or exactly when it starts).
  EXPECT_FALSE(Delays(plan, {1}, 4, At(99)));
  EXPECT_FALSE(Delays(plan, {1}, 4, At(100)));
  // Still there when it starts: it holds GPUs the reservation needs.
  EXPECT_TRUE(Delays(plan, {1}, 4, At(101)));
  EXPECT_TRUE(Delays(plan, {1}, 1, kNever));
  // On a node the reservation does not use: never in the way, even without a time limit.
  EXPECT_FALSE(Delays(plan, {2}, 8, kNever));
  EXPECT_FALSE(Delays(plan, {2, 2}, 4, kNever));
}

TEST_F(BackfillTest, JobBesideTheReservationOnItsNodeIsBackfillable) {
  AddNodes(1, 8);
  Run(1, At(100), {0}, 4);
  std::vector<Reservation> plan = Plan({Blocked(10, 1, 6, std::nullopt)});
  ASSERT_EQ(plan[0].start, At(100));
  // Two GPUs stay free beside the 6-GPU reservation.
  EXPECT_FALSE(Delays(plan, {0}, 2, kNever));
  EXPECT_TRUE(Delays(plan, {0}, 3, kNever));
  // cpu counts too: the reservation's task takes 1000 of 64000 millicores.
  std::vector<TaskRequest> big{GpuTask(0, 63'000)};
  std::vector<Placement> where{On(0, 0)};
  EXPECT_FALSE(planner_->Delays(state_, now_, Releases(), plan, big, where, kNever));
  big[0].cpu = 63'001;
  EXPECT_TRUE(planner_->Delays(state_, now_, Releases(), plan, big, where, kNever));
}

TEST_F(BackfillTest, DelaysSeesJobsStartedSinceThePlanWhenTheScheduleHasThem) {
  AddNodes(1, 8);
  auto run_cpu = [&](int64_t job, int64_t cpu, TimePoint end) {
    PlannedRelease r{.job = job, .end = end, .tasks = {GpuTask(0, cpu)}, .placements = {On(0, 0)}};
    ASSERT_TRUE(state_.Assume(r.tasks[0], r.placements[0]).ok());
    running_.push_back(std::move(r));
  };
  run_cpu(1, 32'000, At(100));
  BlockedJob big{.job = 10, .tasks = {GpuTask(0, 48'000)}, .min_available = 1};
  const std::vector<Reservation> plan = Plan({big});
  ASSERT_EQ(plan[0].start, At(100));
  const std::vector<TaskRequest> small{GpuTask(0, 16'000)};
  const std::vector<Placement> where{On(0, 0)};
  EXPECT_FALSE(planner_->Delays(state_, now_, Releases(), plan, small, where, At(50)));

  // It starts, ending at 50: a second such job running past 100 still leaves the reservation
  // its 48000 millicores, once both earlier jobs are gone.
  run_cpu(2, 16'000, At(50));
  EXPECT_FALSE(planner_->Delays(state_, now_, Releases(), plan, small, where, At(200)));
  // Not in the schedule, the started job is held for ever: then there is no room.
  running_.pop_back();
  EXPECT_TRUE(planner_->Delays(state_, now_, Releases(), plan, small, where, At(200)));
}

TEST_F(BackfillTest, ReservationWithoutStartIsNeverDelayed) {
  AddNodes(1, 8);
  Run(1, kNever, {0}, 8);
  std::vector<Reservation> plan = Plan({Blocked(10, 1, 8, Seconds(60))});
  EXPECT_EQ(plan[0].start, kNever);
  EXPECT_TRUE(plan[0].placements.empty());
  EXPECT_FALSE(Delays(plan, {0}, 0, kNever));
}

TEST_F(BackfillTest, JobsWithoutTimeLimitGiveNoPredictableStart) {
  AddNodes(2, 8);
  Run(1, kNever, {0, 1}, 8);
  std::vector<Reservation> plan = Plan({Blocked(10, 1, 8, Seconds(60))});
  EXPECT_EQ(plan[0].start, kNever);

  // A reservation without time limit holds its nodes for ever: the job after it waits for ever.
  running_.clear();
  ClusterState fresh;
  state_ = std::move(fresh);
  AddNodes(2, 8);
  Run(1, At(10), {0, 1}, 8);
  plan = Plan({Blocked(10, 2, 8, std::nullopt), Blocked(11, 1, 8, Seconds(5))});
  EXPECT_EQ(plan[0].start, At(10));
  EXPECT_EQ(plan[0].End(), kNever);
  EXPECT_EQ(plan[1].start, kNever);
}

TEST_F(BackfillTest, GangThatNeverFitsHasNoStart) {
  AddNodes(2, 8);
  std::vector<Reservation> plan = Plan({Blocked(10, 3, 8, Seconds(60))});
  EXPECT_EQ(plan[0].start, kNever);
  BlockedJob bad = Blocked(11, 2, 1, Seconds(1));
  bad.min_available = 3;
  EXPECT_EQ(Plan({bad})[0].start, kNever);
}

TEST_F(BackfillTest, ConservativePlansEachJobAroundTheReservationsBeforeIt) {
  AddNodes(4, 8);
  for (int32_t n = 0; n < 4; ++n) Run(n, At(10 * (n + 1)), {n}, 8);  // node n free at 10(n+1)
  std::vector<Reservation> plan = Plan({
      Blocked(10, 3, 8, Seconds(100)),  // three nodes: at 30 on nodes 0-2, until 130
      Blocked(11, 1, 8, Seconds(5)),    // fits in the hole on node 0 before 30: [10, 15)
      Blocked(12, 1, 8, Seconds(25)),   // [10, 35) would overlap job 10's start: node 3 at 40
      Blocked(13, 2, 8, Seconds(10)),   // nodes 0 and 1 are free over [20, 30)
      Blocked(14, 2, 8, Seconds(11)),   // [20, 31) would overlap job 10: after it, at 130
  });
  ASSERT_EQ(plan.size(), 5u);
  EXPECT_EQ(plan[0].start, At(30));
  EXPECT_THAT(Nodes(plan[0]), ElementsAre(0, 1, 2));
  EXPECT_EQ(plan[1].start, At(10));
  EXPECT_THAT(Nodes(plan[1]), ElementsAre(0));
  EXPECT_EQ(plan[2].start, At(40));
  EXPECT_THAT(Nodes(plan[2]), ElementsAre(3));
  EXPECT_EQ(plan[3].start, At(20));
  EXPECT_THAT(Nodes(plan[3]), ElementsAre(0, 1));
  EXPECT_EQ(plan[4].start, At(130));
  ExpectConsistent(state_, now_, running_, plan);
}

// PlanNext plans one more job around the reservations it is given, as Plan does within one
// call: adding the jobs one by one gives the same plan.
TEST_F(BackfillTest, PlanNextAddsOneJobAroundTheReservationsGiven) {
  MakeFramework(/*first_fit=*/true);
  AddNodes(4, 8);
  for (int32_t n = 0; n < 4; ++n) Run(n, At(10 * (n + 1)), {n}, 8);
  const std::vector<BlockedJob> blocked{Blocked(10, 3, 8, Seconds(100)),
                                        Blocked(11, 1, 8, Seconds(5)),
                                        Blocked(12, 1, 8, Seconds(25)),
                                        Blocked(13, 2, 8, Seconds(10)),
                                        Blocked(14, 2, 8, Seconds(11))};
  const std::vector<Reservation> plan = Plan(blocked);
  std::vector<Reservation> one_by_one;
  for (const BlockedJob& job : blocked) {
    one_by_one.push_back(planner_->PlanNext(state_, now_, Releases(), one_by_one, job));
  }
  ASSERT_EQ(one_by_one.size(), plan.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    EXPECT_EQ(one_by_one[i].start, plan[i].start) << "reservation " << i;
    EXPECT_EQ(Nodes(one_by_one[i]), Nodes(plan[i])) << "reservation " << i;
  }
  EXPECT_EQ(one_by_one[4].start, At(130));

  // Given other reservations, it plans around those: with the hole on node 0 ([10, 15)) taken
  // by another job, job 11 follows it there.
  Reservation hole = plan[1];
  hole.job = 20;
  const Reservation behind =
      planner_->PlanNext(state_, now_, Releases(), std::span(&hole, 1), blocked[1]);
  EXPECT_EQ(behind.start, At(15));
  EXPECT_THAT(Nodes(behind), ElementsAre(0));
}

TEST_F(BackfillTest, LaterReservationMayFillAHoleBeforeAnEarlierOne) {
  AddNodes(2, 8);
  Run(1, At(100), {0}, 8);
  std::vector<Reservation> plan = Plan({
      Blocked(10, 2, 8, Seconds(50)),   // both nodes at 100
      Blocked(11, 1, 8, Seconds(101)),  // on node 1 now it would still run at 100: at 150
      Blocked(12, 1, 8, Seconds(101)),  // the same; the other node at 150
      Blocked(13, 1, 8, Seconds(101)),  // both taken [150, 251)
  });
  EXPECT_EQ(plan[0].start, At(100));
  EXPECT_EQ(plan[1].start, At(150));
  EXPECT_EQ(plan[2].start, At(150));
  EXPECT_NE(Nodes(plan[1]), Nodes(plan[2]));
  EXPECT_EQ(plan[3].start, At(251));
  // A job that ends by 100 fits the hole now, after a job planned later than it.
  std::vector<Reservation> hole =
      Plan({Blocked(10, 2, 8, Seconds(50)), Blocked(11, 1, 8, Seconds(101)),
            Blocked(14, 1, 8, Seconds(100))});
  EXPECT_EQ(hole[2].start, now_);
  EXPECT_THAT(Nodes(hole[2]), ElementsAre(1));
}

TEST_F(BackfillTest, PlanAndDelaysLeaveTheStateAsGiven) {
  AddNodes(6, 8);
  TaskRequest with_extended = GpuTask(2);
  with_extended.extended["rdma/hca"] = 1;
  ASSERT_TRUE(state_.MutableNode(5).allocatable.extended.emplace("rdma/hca", 4).second);
  Run(1, At(10), {0, 1}, 8);
  Run(2, At(20), {2}, 4);
  Run(3, kNever, {3}, 2);
  Run(4, At(5), {4}, 2);
  {
    PlannedRelease r{.job = 5, .end = At(30)};
    Placement p = On(5, 2);
    ASSERT_TRUE(state_.Assume(with_extended, p).ok());
    r.tasks.push_back(with_extended);
    r.placements.push_back(p);
    running_.push_back(std::move(r));
  }
  // A device that fails under a running task: putting that task back must not be refused.
  state_.MutableNode(2).gpus[0].healthy = false;
  const std::vector<NodeSnapshot> before = Snapshot(state_);

  BlockedJob extended{.job = 12, .min_available = 1, .time_limit = Seconds(5)};
  extended.tasks.assign(2, with_extended);
  std::vector<Reservation> plan =
      Plan({Blocked(10, 3, 8, Seconds(100)), Blocked(11, 2, 4, Seconds(7)), extended,
            Blocked(13, 6, 2, std::nullopt)});
  EXPECT_EQ(Snapshot(state_), before);
  for (int32_t n = 0; n < 6; ++n) {
    (void)Delays(plan, {n}, 1, kNever);
    (void)Delays(plan, {n}, 1, At(15));
  }
  EXPECT_EQ(Snapshot(state_), before);
}

// One random round: a small cluster with running jobs (placed by the framework, random ends, some
// without), up to five blocked jobs of identical tasks each, and a candidate that fits now. The
// plan must not overcommit any node at any instant; when Delays says the candidate delays
// nothing, re-planning with it running must give the first `compared` reservations the same
// start (and, with `same_nodes`, the same nodes).
void BackfillTest::RandomRound(Rng& rng, size_t compared, bool same_nodes, RoundCounts& counts) {
  state_ = ClusterState();
  running_.clear();
  const int32_t nodes = 2 + static_cast<int32_t>(rng.Uniform(4));
  for (int32_t n = 0; n < nodes; ++n) {
    Node node = GpuNode("node-" + std::to_string(n), 2 + static_cast<int32_t>(rng.Uniform(5)),
                        4000 + 1000 * static_cast<int64_t>(rng.Uniform(4)));
    ASSERT_TRUE(state_.AddNode(std::move(node)).ok());
  }
  auto random_end = [&] {
    return rng.Uniform(6) == 0 ? kNever : At(1 + static_cast<int64_t>(rng.Uniform(100)));
  };
  auto random_task = [&] {
    return GpuTask(static_cast<int32_t>(rng.Uniform(4)),
                   500 + 500 * static_cast<int64_t>(rng.Uniform(4)));
  };
  for (int j = 0; j < 2 + static_cast<int>(rng.Uniform(6)); ++j) {
    RunWhereItFits(j, std::vector<TaskRequest>(1 + rng.Uniform(3), random_task()), random_end);
  }
  std::vector<BlockedJob> blocked;
  for (int b = 0; b < 1 + static_cast<int>(rng.Uniform(5)); ++b) {
    BlockedJob job{.job = 100 + b};
    job.tasks.assign(1 + rng.Uniform(4), random_task());
    job.min_available = 1 + static_cast<int32_t>(rng.Uniform(job.tasks.size()));
    if (rng.Uniform(4) != 0) job.time_limit = Seconds(1 + static_cast<int64_t>(rng.Uniform(60)));
    blocked.push_back(std::move(job));
  }
  const std::vector<NodeSnapshot> before = Snapshot(state_);
  const std::vector<Reservation> plan = planner_->Plan(state_, now_, Releases(), blocked);
  ASSERT_EQ(Snapshot(state_), before);
  ExpectConsistent(state_, now_, running_, plan);

  std::vector<TaskRequest> tasks(1 + rng.Uniform(2), random_task());
  GangAttempt g = framework_->ScheduleGang(state_, "c", tasks, static_cast<int32_t>(tasks.size()),
                                           MatchMode::kWithoutAllocating);
  if (!g.status.ok()) return;
  std::vector<TaskRequest> placed;
  for (int32_t k : g.task_indices) placed.push_back(tasks[k]);
  const TimePoint end = random_end();
  if (planner_->Delays(state_, now_, Releases(), plan, placed, g.placements, end)) {
    ++counts.delayed;
    return;
  }
  ASSERT_EQ(Snapshot(state_), before);
  for (const Reservation& r : plan) {
    auto on_job_node = [&](const Placement& p) {
      return std::any_of(g.placements.begin(), g.placements.end(),
                         [&](const Placement& q) { return q.node_index == p.node_index; });
    };
    if (r.start != kNever && r.start < end &&
        std::any_of(r.placements.begin(), r.placements.end(), on_job_node)) {
      ++counts.beside;
      break;
    }
  }
  for (size_t k = 0; k < placed.size(); ++k) {
    ASSERT_TRUE(state_.Assume(placed[k], g.placements[k]).ok());
  }
  running_.push_back(
      PlannedRelease{.job = 99, .end = end, .tasks = placed, .placements = g.placements});
  const std::vector<Reservation> replanned = planner_->Plan(state_, now_, Releases(), blocked);
  ExpectConsistent(state_, now_, running_, replanned);
  ASSERT_EQ(replanned.size(), plan.size());
  for (size_t i = 0; i < std::min(compared, plan.size()); ++i) {
    EXPECT_EQ(replanned[i].start, plan[i].start) << "reservation " << i;
    if (same_nodes) {
      EXPECT_EQ(Nodes(replanned[i]), Nodes(plan[i])) << "reservation " << i;
    }
  }
  ++counts.checked;
}

// With first-fit placement every reservation keeps its start and nodes when Delays says false.
TEST_F(BackfillTest, RandomizedDelaysFalseKeepsEveryReservation) {
  MakeFramework(/*first_fit=*/true);
  Rng rng(2024);
  RoundCounts counts;
  for (int round = 0; round < 3000 && !HasFailure(); ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    RandomRound(rng, /*compared=*/5, /*same_nodes=*/true, counts);
  }
  EXPECT_GT(counts.checked, 300);
  EXPECT_GT(counts.delayed, 300);
  EXPECT_GT(counts.beside, 100);
}

// With the default profile (LeastAllocated, random ties) the first reservation — EASY's — keeps
// its start when Delays says false.
TEST_F(BackfillTest, RandomizedDelaysFalseKeepsTheFirstStartWithTheDefaultProfile) {
  Rng rng(99);
  RoundCounts counts;
  for (int round = 0; round < 3000 && !HasFailure(); ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    RandomRound(rng, /*compared=*/1, /*same_nodes=*/false, counts);
  }
  EXPECT_GT(counts.checked, 300);
  EXPECT_GT(counts.beside, 100);
}

// The first reservation starts at the earliest instant at which the Framework places the gang
// with every release due by then forgotten: the free-capacity count the search starts from
// never rules out an instant where the gang fits (whole and shared devices, cpu only, an
// extended resource; gangs of identical tasks, for which the Framework's answer is exact).
TEST_F(BackfillTest, RandomizedFirstStartIsTheEarliestInstantTheGangFits) {
  MakeFramework(/*first_fit=*/true);
  Rng rng(31);
  auto random_task = [&] {
    TaskRequest t = GpuTask(0, 500 + 500 * static_cast<int64_t>(rng.Uniform(4)));
    switch (rng.Uniform(4)) {
      case 0:
        t.gpu_count = 1 + static_cast<int32_t>(rng.Uniform(3));
        t.gpu_milli = kMilliGpuPerDevice;
        break;
      case 1:
        t.gpu_count = 1;
        t.gpu_milli = 250 * (1 + static_cast<int64_t>(rng.Uniform(3)));
        break;
      case 2:
        t.extended["example.com/nic"] = 1;
        break;
      default:
        break;  // cpu only
    }
    return t;
  };
  int checked = 0;
  for (int round = 0; round < 1500 && !HasFailure(); ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    state_ = ClusterState();
    running_.clear();
    const int32_t nodes = 2 + static_cast<int32_t>(rng.Uniform(4));
    for (int32_t n = 0; n < nodes; ++n) {
      Node node = GpuNode("node-" + std::to_string(n), 2 + static_cast<int32_t>(rng.Uniform(3)),
                          3000 + 1000 * static_cast<int64_t>(rng.Uniform(3)));
      node.capacity.extended["example.com/nic"] = static_cast<int64_t>(rng.Uniform(3));
      node.allocatable.extended = node.capacity.extended;
      ASSERT_TRUE(state_.AddNode(std::move(node)).ok());
    }
    for (int j = 0; j < 3 + static_cast<int>(rng.Uniform(8)); ++j) {
      RunWhereItFits(j, std::vector<TaskRequest>(1 + rng.Uniform(3), random_task()),
                     [&] { return At(1 + static_cast<int64_t>(rng.Uniform(50))); });
    }
    BlockedJob job{.job = 100, .time_limit = Seconds(1 + static_cast<int64_t>(rng.Uniform(30)))};
    job.tasks.assign(1 + rng.Uniform(5), random_task());
    job.min_available = 1 + static_cast<int32_t>(rng.Uniform(job.tasks.size()));
    const TimePoint planned = Plan({job})[0].start;

    // Every instant in turn, with what has ended by then forgotten and then taken back.
    std::vector<TimePoint> instants{now_};
    for (const PlannedRelease& r : running_) instants.push_back(r.end);
    std::sort(instants.begin(), instants.end());
    TimePoint earliest = kNever;
    for (TimePoint t : instants) {
      auto each_ended = [&](auto apply) {
        for (const PlannedRelease& r : running_) {
          if (r.end > t) continue;
          for (size_t k = 0; k < r.tasks.size(); ++k) apply(r.tasks[k], r.placements[k]);
        }
      };
      each_ended([&](const TaskRequest& task, const Placement& p) { state_.Forget(task, p); });
      GangAttempt g = framework_->ScheduleGang(state_, "b", job.tasks, job.min_available,
                                               MatchMode::kWithoutAllocating);
      each_ended([&](const TaskRequest& task, const Placement& p) { state_.Reassume(task, p); });
      if (g.status.ok() && static_cast<int32_t>(g.placements.size()) >= job.min_available) {
        earliest = t;
        break;
      }
    }
    EXPECT_EQ(planned, earliest);
    checked += earliest != now_ && earliest != kNever ? 1 : 0;
  }
  EXPECT_GT(checked, 300);  // most rounds wait for some release
}

}  // namespace
}  // namespace tessera
