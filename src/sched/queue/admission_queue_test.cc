#include "sched/queue/admission_queue.h"

#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using JobId = AdmissionQueue::JobId;
using std::chrono::minutes;
using std::chrono::seconds;

QueueSpec Q(std::string name, std::string parent = "", int32_t weight = 1, int32_t priority = 0,
            QueueOrdering ordering = QueueOrdering::kBestEffortFifo) {
  return QueueSpec{.name = std::move(name),
                   .parent = std::move(parent),
                   .weight = weight,
                   .priority = priority,
                   .ordering = ordering};
}

TimePoint At(Duration d) { return TimePoint{} + d; }

// A tree, a queue, and jobs with charges; runs cycles with an admission rule.
class Fixture {
 public:
  explicit Fixture(std::vector<QueueSpec> specs, FairShareMode mode = FairShareMode::kDrf,
                   Duration aging = Duration{0})
      : tree_(*QueueTree::Create(specs)), queue_(&tree_, aging) {
    tree_.Configure(mode, Duration{0});
    tree_.SetCapacity({{"gpu", 100'000}});
  }

  void Add(JobId job, std::string_view leaf, ResourceList charge = {{"gpu", 1000}},
           int32_t priority = 0, TimePoint submit = TimePoint{}) {
    charges_[job] = std::move(charge);
    queue_.Add(job, tree_.Find(leaf), priority, next_sequence_++, submit);
  }

  // One cycle: each job returned is admitted when `admit` says so (and its quota fits).
  std::vector<JobId> RunCycle(const std::function<bool(JobId)>& admit = nullptr,
                              TimePoint now = TimePoint{}) {
    std::vector<JobId> order;
    AdmissionQueue::Cycle cycle = queue_.StartCycle(now);
    while (std::optional<JobId> job = cycle.Next()) {
      order.push_back(*job);
      const int32_t leaf = queue_.LeafOf(*job);
      if ((admit == nullptr || admit(*job)) && tree_.CanAdmit(leaf, charges_[*job]).fits) {
        tree_.Admit(leaf, charges_[*job]);
        cycle.Admitted();
      } else {
        cycle.Blocked();
      }
    }
    return order;
  }

  QueueTree& tree() { return tree_; }
  AdmissionQueue& queue() { return queue_; }

 private:
  QueueTree tree_;
  AdmissionQueue queue_;
  std::map<JobId, ResourceList> charges_;
  int64_t next_sequence_ = 0;
};

TEST(AdmissionQueueTest, LeafOrderPriorityThenSequence) {
  Fixture f({Q("a")});
  f.Add(1, "a", {}, 0);
  f.Add(2, "a", {}, 5);
  f.Add(3, "a", {}, 0);
  f.Add(4, "a", {}, 5);
  f.Add(5, "a", {}, -1);
  EXPECT_EQ(f.queue().size(), 5u);
  EXPECT_EQ(f.queue().size(0), 5u);
  EXPECT_EQ(f.queue().Position(2), 0);
  EXPECT_EQ(f.queue().Position(4), 1);
  EXPECT_EQ(f.queue().Position(5), 4);
  EXPECT_EQ(f.queue().Position(99), -1);
  EXPECT_THAT(f.RunCycle(), ElementsAre(2, 4, 1, 3, 5));
  EXPECT_EQ(f.queue().size(), 0u);
  EXPECT_FALSE(f.queue().Contains(1));
}

struct AgingCase {
  std::string name;
  Duration aging;
  // (priority, submitted at) of jobs 0, 1, 2, ...
  std::vector<std::pair<int32_t, Duration>> jobs;
  std::vector<JobId> order;
};

class AgingTest : public ::testing::TestWithParam<AgingCase> {};

TEST_P(AgingTest, Order) {
  Fixture f({Q("a")}, FairShareMode::kDrf, GetParam().aging);
  for (size_t i = 0; i < GetParam().jobs.size(); ++i) {
    const auto& [priority, submitted] = GetParam().jobs[i];
    f.Add(static_cast<JobId>(i), "a", {}, priority, At(submitted));
  }
  EXPECT_EQ(f.RunCycle(nullptr, At(minutes(60))), GetParam().order);
}

INSTANTIATE_TEST_SUITE_P(
    All, AgingTest,
    ::testing::Values(
        // Without aging, priority wins however long the others waited.
        AgingCase{"NoAging", Duration{0}, {{0, minutes(0)}, {1, minutes(30)}}, {1, 0}},
        // One point per minute: 30 minutes of waiting beat one point.
        AgingCase{"WaitBeatsPriority", minutes(1), {{0, minutes(0)}, {1, minutes(30)}}, {0, 1}},
        // Half a minute of waiting does not beat one point.
        AgingCase{
            "PriorityBeatsShortWait", minutes(1), {{0, minutes(0)}, {1, seconds(30)}}, {1, 0}},
        // Equal effective priority: submission sequence.
        AgingCase{"TieBySequence", minutes(1), {{1, minutes(1)}, {0, minutes(0)}}, {0, 1}},
        // Extreme priorities and a century of aging do not overflow.
        AgingCase{"Extremes",
                  std::chrono::hours(24 * 365 * 100),
                  {{INT32_MIN, minutes(0)}, {INT32_MAX, minutes(59)}, {0, minutes(1)}},
                  {1, 2, 0}}),
    [](const auto& info) { return info.param.name; });

TEST(AdmissionQueueTest, QueuePriorityThenShareThenName) {
  // c has the higher queue priority; a and b tie on priority and share: by name.
  Fixture f({Q("b"), Q("a"), Q("c", "", 1, 10)});
  f.Add(1, "a");
  f.Add(2, "b");
  f.Add(3, "c");
  f.Add(4, "c");
  // c first (priority) until empty; then a and b alternate by share (ties by name).
  f.Add(5, "a");
  f.Add(6, "b");
  EXPECT_THAT(f.RunCycle(), ElementsAre(3, 4, 1, 2, 5, 6));
}

TEST(AdmissionQueueTest, SharesMoveWithinTheCycle) {
  Fixture f({Q("a"), Q("b")});
  for (JobId j = 0; j < 3; ++j) f.Add(10 + j, "a");
  for (JobId j = 0; j < 3; ++j) f.Add(20 + j, "b");
  EXPECT_THAT(f.RunCycle(), ElementsAre(10, 20, 11, 21, 12, 22));
}

TEST(AdmissionQueueTest, WeightsSplitAdmissions) {
  Fixture f({Q("a"), Q("b", "", 2)});
  for (JobId j = 0; j < 3; ++j) f.Add(10 + j, "a");
  for (JobId j = 0; j < 6; ++j) f.Add(20 + j, "b");
  // b (weight 2) gets two admissions per one of a at equal shares.
  EXPECT_THAT(f.RunCycle(), ElementsAre(10, 20, 21, 11, 22, 23, 12, 24, 25));
}

TEST(AdmissionQueueTest, ExistingUseCountsInTheShare) {
  Fixture f({Q("a"), Q("b")});
  f.tree().Admit(f.tree().Find("a"), {{"gpu", 2000}});
  f.Add(10, "a");
  f.Add(20, "b");
  f.Add(21, "b");
  f.Add(22, "b");
  EXPECT_THAT(f.RunCycle(), ElementsAre(20, 21, 10, 22));
}

TEST(AdmissionQueueTest, FairShareNoneUsesNamesOnly) {
  Fixture f({Q("b"), Q("a")}, FairShareMode::kNone);
  f.tree().Admit(f.tree().Find("a"), {{"gpu", 50'000}});
  f.Add(20, "b");
  f.Add(10, "a");
  f.Add(11, "a");
  EXPECT_THAT(f.RunCycle(), ElementsAre(10, 11, 20));
}

TEST(AdmissionQueueTest, HierarchicalFairness) {
  // org1 has two leaves, org2 one: the top level alternates between the orgs (H-DRF), not
  // between the three leaves.
  Fixture f({Q("org1"), Q("org2"), Q("a1", "org1"), Q("a2", "org1"), Q("b", "org2")});
  for (JobId j = 0; j < 2; ++j) f.Add(10 + j, "a1");
  for (JobId j = 0; j < 2; ++j) f.Add(20 + j, "a2");
  for (JobId j = 0; j < 4; ++j) f.Add(30 + j, "b");
  EXPECT_THAT(f.RunCycle(), ElementsAre(10, 30, 20, 31, 11, 32, 21, 33));
}

TEST(AdmissionQueueTest, BestEffortSkipsStrictBlocks) {
  Fixture f({Q("be"), Q("strict", "", 1, 0, QueueOrdering::kStrictFifo)}, FairShareMode::kNone);
  f.Add(1, "be");
  f.Add(2, "be");
  f.Add(3, "be");
  f.Add(4, "strict");
  f.Add(5, "strict");
  const auto refuse = [](JobId j) { return j != 1 && j != 4; };
  EXPECT_THAT(f.RunCycle(refuse), ElementsAre(1, 2, 3, 4));
  EXPECT_TRUE(f.queue().Contains(1));
  EXPECT_TRUE(f.queue().Contains(4));
  EXPECT_TRUE(f.queue().Contains(5));
  EXPECT_EQ(f.queue().size(), 3u);
  // The next cycle sees the blocked jobs again.
  EXPECT_THAT(f.RunCycle(), ElementsAre(1, 4, 5));
}

TEST(AdmissionQueueTest, QuotaBlockedJobsLetOthersThrough) {
  std::vector<QueueSpec> specs = {Q("a"), Q("b")};
  specs[0].guaranteed = {{"gpu", 2000}};
  specs[0].borrowing_limit = {{"gpu", 0}};
  specs[1].guaranteed = {{"gpu", 2000}};
  Fixture f(specs);
  f.Add(1, "a", {{"gpu", 3000}});  // above a's limit: blocked
  f.Add(2, "a");
  f.Add(3, "b");
  EXPECT_THAT(f.RunCycle(), ElementsAre(1, 2, 3));
  EXPECT_THAT(f.RunCycle(), ElementsAre(1));
}

TEST(AdmissionQueueTest, BlockQueueEndsTheLeafsTurn) {
  Fixture f({Q("a"), Q("b")}, FairShareMode::kNone);
  f.Add(1, "a");
  f.Add(2, "a");
  f.Add(3, "b");
  std::vector<JobId> order;
  AdmissionQueue::Cycle cycle = f.queue().StartCycle(TimePoint{});
  while (std::optional<JobId> job = cycle.Next()) {
    order.push_back(*job);
    cycle.Admitted();
    if (*job == 1) cycle.BlockQueue(f.tree().Find("a"));
  }
  EXPECT_THAT(order, ElementsAre(1, 3));
  EXPECT_TRUE(f.queue().Contains(2));
}

TEST(AdmissionQueueTest, AddedDuringACycleWaitsForTheNext) {
  Fixture f({Q("a"), Q("b")}, FairShareMode::kNone);
  f.Add(1, "a");
  std::vector<JobId> order;
  AdmissionQueue::Cycle cycle = f.queue().StartCycle(TimePoint{});
  while (std::optional<JobId> job = cycle.Next()) {
    order.push_back(*job);
    cycle.Blocked();
    if (*job == 1) {
      f.Add(2, "a", {}, 100);   // ahead of job 1 in the order
      f.Add(3, "a", {}, -100);  // behind it
      f.Add(4, "b");            // in a leaf that was empty
    }
  }
  EXPECT_THAT(order, ElementsAre(1));
  EXPECT_THAT(f.RunCycle(), ElementsAre(2, 1, 3, 4));
}

TEST(AdmissionQueueTest, RemovedDuringACycleIsNotReturned) {
  Fixture f({Q("a")});
  f.Add(1, "a");
  f.Add(2, "a");
  f.Add(3, "a");
  std::vector<JobId> order;
  AdmissionQueue::Cycle cycle = f.queue().StartCycle(TimePoint{});
  while (std::optional<JobId> job = cycle.Next()) {
    order.push_back(*job);
    if (*job == 1) {
      f.queue().Remove(1);  // the job being answered
      f.queue().Remove(2);
      f.queue().Remove(42);  // absent: no-op
    }
    cycle.Blocked();
  }
  EXPECT_THAT(order, ElementsAre(1, 3));
  EXPECT_EQ(f.queue().size(), 1u);
  EXPECT_EQ(f.queue().Position(3), 0);
}

TEST(AdmissionQueueTest, UnansweredJobCountsAsBlocked) {
  Fixture f({Q("s", "", 1, 0, QueueOrdering::kStrictFifo), Q("t")}, FairShareMode::kNone);
  f.Add(1, "s");
  f.Add(2, "s");
  f.Add(3, "t");
  AdmissionQueue::Cycle cycle = f.queue().StartCycle(TimePoint{});
  EXPECT_EQ(cycle.Next(), 1);
  EXPECT_EQ(cycle.Next(), 3);  // 1 not answered: blocked, and s is strict FIFO
  cycle.Admitted();
  EXPECT_EQ(cycle.Next(), std::nullopt);
  EXPECT_EQ(cycle.Next(), std::nullopt);
  EXPECT_THAT(f.queue().size(), 2u);
}

TEST(AdmissionQueueTest, EmptyQueueAndNewCycleRestarts) {
  Fixture f({Q("a")});
  EXPECT_THAT(f.RunCycle(), IsEmpty());
  f.Add(1, "a");
  AdmissionQueue::Cycle first = f.queue().StartCycle(TimePoint{});
  EXPECT_EQ(first.Next(), 1);
  first.Blocked();
  EXPECT_EQ(first.Next(), std::nullopt);
  AdmissionQueue::Cycle second = f.queue().StartCycle(TimePoint{});
  EXPECT_EQ(second.Next(), 1);
}

TEST(AdmissionQueueTest, BlockedRereadsSharesAfterAdmitAndRelease) {
  Fixture f({Q("a"), Q("b")});
  f.Add(10, "a");
  f.Add(11, "a");
  f.Add(20, "b");
  AdmissionQueue::Cycle cycle = f.queue().StartCycle(TimePoint{});
  EXPECT_EQ(cycle.Next(), 10);
  // Admitted then its placement failed: released, and the share of a is back to 0. Meanwhile b
  // got use from elsewhere: b's share moves on its next re-read only, a is re-read now.
  f.tree().Admit(0, {{"gpu", 1000}});
  f.tree().Release(0, {{"gpu", 1000}});
  cycle.Blocked();
  EXPECT_EQ(cycle.Next(), 11);  // a and b tie at 0: by name
}

// Random trees, jobs and answers: within one cycle each job is returned at most once, each
// leaf's jobs in (priority with aging, sequence) order; a best-effort cycle where everything is
// blocked returns every job; admitted jobs leave the queue.
TEST(AdmissionQueueTest, RandomCyclesReturnEachJobOnceInLeafOrder) {
  std::mt19937_64 rng(7);
  const auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int round = 0; round < 50; ++round) {
    std::vector<QueueSpec> specs;
    const int n = static_cast<int>(uniform(1, 10));
    for (int q = 0; q < n; ++q) {
      QueueSpec s = Q("q" + std::to_string(q), "", static_cast<int32_t>(uniform(1, 3)),
                      static_cast<int32_t>(uniform(0, 1)));
      if (q > 0 && uniform(0, 2) > 0) s.parent = "q" + std::to_string(uniform(0, q - 1));
      specs.push_back(std::move(s));
    }
    const int64_t aging_ms = uniform(0, 2) * 1000;
    Fixture f(specs, uniform(0, 1) != 0 ? FairShareMode::kDrf : FairShareMode::kNone,
              Duration{aging_ms});
    std::vector<std::string> leaves;
    for (int32_t q = 0; q < f.tree().size(); ++q) {
      if (f.tree().IsLeaf(q)) leaves.push_back(f.tree().spec(q).name);
    }
    // The order of a leaf: higher priority * aging - submit (priority alone without aging), then
    // lower id (ids follow the sequence).
    std::map<JobId, std::pair<int64_t, JobId>> rank;
    const auto before = [&](JobId a, JobId b) {
      return rank[a].first != rank[b].first ? rank[a].first > rank[b].first : a < b;
    };
    JobId next = 0;
    for (int cycle = 0; cycle < 5; ++cycle) {
      for (int64_t i = uniform(0, 30); i > 0; --i) {
        const int32_t priority = static_cast<int32_t>(uniform(-2, 2));
        const int64_t submit_ms = uniform(0, 100) * 1000;
        rank[next] = {aging_ms > 0 ? priority * aging_ms - submit_ms : priority, next};
        f.Add(next++, leaves[uniform(0, static_cast<int64_t>(leaves.size()) - 1)],
              {{"gpu", uniform(0, 3) * 1000}}, priority, TimePoint{} + Duration{submit_ms});
      }
      const size_t queued = f.queue().size();
      std::map<int32_t, std::vector<JobId>> by_leaf;
      const bool block_all = uniform(0, 1) == 0;
      const std::vector<JobId> order = f.RunCycle([&](JobId job) {
        by_leaf[f.queue().LeafOf(job)].push_back(job);
        return !block_all && uniform(0, 1) == 0;
      });
      EXPECT_EQ(std::set<JobId>(order.begin(), order.end()).size(), order.size());
      for (const auto& [leaf, jobs] : by_leaf) {
        EXPECT_TRUE(std::is_sorted(jobs.begin(), jobs.end(), before)) << "leaf " << leaf;
      }
      if (block_all) {
        EXPECT_EQ(order.size(), queued);  // every leaf is best-effort here
        EXPECT_EQ(f.queue().size(), queued);
      }
      EXPECT_LE(f.queue().size(), queued);
    }
  }
}

}  // namespace
}  // namespace tessera
