#include "sched/queue/queue_tree.h"

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kGiB = int64_t{1} << 30;

QueueSpec Q(std::string name, std::string parent = "", ResourceList guaranteed = {},
            ResourceList borrowing = {}, ResourceList lending = {}) {
  return QueueSpec{.name = std::move(name),
                   .parent = std::move(parent),
                   .guaranteed = std::move(guaranteed),
                   .borrowing_limit = std::move(borrowing),
                   .lending_limit = std::move(lending)};
}

QueueTree MustCreate(const std::vector<QueueSpec>& specs) {
  absl::StatusOr<QueueTree> tree = QueueTree::Create(specs);
  EXPECT_TRUE(tree.ok()) << tree.status();
  return *std::move(tree);
}

TEST(JobChargeTest, SumsTasksAndChargesSingleModelGpus) {
  TaskRequest a{
      .cpu = 2000, .memory = 4 * kGiB, .gpu_count = 2, .gpu_milli = 1000, .gpu_models = {"A100"}};
  TaskRequest b{.cpu = 500, .gpu_count = 1, .gpu_milli = 250, .gpu_models = {"A100", "H100"}};
  TaskRequest c{.memory = kGiB};
  const std::vector<TaskRequest> tasks = {a, a, b, c};
  EXPECT_EQ(JobCharge(tasks),
            (ResourceList{{"cpu", 4500}, {"memory", 9 * kGiB}, {"gpu", 4250}, {"gpu:A100", 4000}}));
  EXPECT_EQ(JobCharge(std::span<const TaskRequest>{}), ResourceList{});
  const std::vector<TaskRequest> empty_task = {TaskRequest{}};
  EXPECT_EQ(JobCharge(empty_task), ResourceList{});  // zero entries omitted
}

TEST(JobChargeTest, JobSpecCountsReplicas) {
  JobSpec spec;
  spec.tasks.push_back(TaskGroup{
      .name = "w", .replicas = 3, .request = {.cpu = 1000, .gpu_count = 8, .gpu_milli = 1000}});
  spec.tasks.push_back(TaskGroup{.name = "m", .replicas = 0, .request = {.cpu = 5000}});
  EXPECT_EQ(JobCharge(spec), (ResourceList{{"cpu", 3000}, {"gpu", 24000}}));
}

TEST(FormatQuantityTest, UserUnits) {
  EXPECT_EQ(FormatQuantity("gpu", 8000), "8 GPUs");
  EXPECT_EQ(FormatQuantity("gpu", 1000), "1 GPU");
  EXPECT_EQ(FormatQuantity("gpu:A100", 500), "0.5 GPUs");
  EXPECT_EQ(FormatQuantity("cpu", 2500), "2.5 cores");
  EXPECT_EQ(FormatQuantity("cpu", 1000), "1 core");
  EXPECT_EQ(FormatQuantity("memory", 16 * kGiB), "16 GiB");
  EXPECT_EQ(FormatQuantity("memory", kGiB / 2), "0.5 GiB");
}

struct CreateErrorCase {
  std::string name;
  std::vector<QueueSpec> specs;
  std::string error;
};

class CreateErrorTest : public ::testing::TestWithParam<CreateErrorCase> {};

TEST_P(CreateErrorTest, NamesTheField) {
  absl::StatusOr<QueueTree> tree = QueueTree::Create(GetParam().specs);
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tree.status().message(), GetParam().error);
}

QueueSpec Weighted(std::string name, int32_t weight) {
  QueueSpec s = Q(std::move(name));
  s.weight = weight;
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    All, CreateErrorTest,
    ::testing::Values(
        CreateErrorCase{"Empty", {}, "queues: at least one queue is required"},
        CreateErrorCase{"EmptyName", {Q("a"), Q("")}, "queues[1].name: required"},
        CreateErrorCase{
            "Twice", {Q("a"), Q("b"), Q("c"), Q("d"), Q("a")}, "queues[4].name: \"a\" given twice"},
        CreateErrorCase{"UnknownParent",
                        {Q("a"), Q("b"), Q("c"), Q("x", "org")},
                        "queues[3].parent: unknown queue \"org\""},
        CreateErrorCase{"SelfParent", {Q("a", "a")}, "queues[0].parent: cycle a -> a"},
        CreateErrorCase{
            "Cycle", {Q("r"), Q("a", "b"), Q("b", "a")}, "queues[1].parent: cycle a -> b -> a"},
        CreateErrorCase{
            "Weight", {Q("a"), Q("b"), Weighted("c", 0)}, "queues[2].weight: must be >= 1"},
        CreateErrorCase{"UnknownResource",
                        {Q("a"), Q("b", "", {{"gpuu", 1}})},
                        "queues[1].guaranteed.gpuu: unknown resource (cpu, memory, gpu, "
                        "gpu:<model>)"},
        CreateErrorCase{"EmptyModel",
                        {Q("a", "", {}, {{"gpu:", 1}})},
                        "queues[0].borrowing_limit.gpu:: unknown resource (cpu, memory, gpu, "
                        "gpu:<model>)"},
        CreateErrorCase{"Negative",
                        {Q("a"), Q("b", "", {}, {}, {{"cpu", -1}})},
                        "queues[1].lending_limit.cpu: must be >= 0"}),
    [](const auto& info) { return info.param.name; });

TEST(QueueTreeTest, StructureAnyOrder) {
  // Children before their parent; two roots.
  QueueTree tree = MustCreate({Q("team-b", "org"), Q("team-a", "org"), Q("org"), Q("solo")});
  EXPECT_EQ(tree.size(), 4);
  EXPECT_EQ(tree.Find("org"), 2);
  EXPECT_EQ(tree.Find("nope"), -1);
  EXPECT_EQ(tree.parent(0), 2);
  EXPECT_EQ(tree.parent(2), -1);
  EXPECT_TRUE(tree.IsLeaf(0));
  EXPECT_FALSE(tree.IsLeaf(2));
  EXPECT_TRUE(tree.IsLeaf(3));
  EXPECT_EQ(tree.TreeOrder(), (std::vector<int32_t>{2, 0, 1, 3}));
  EXPECT_EQ(tree.PathFromRoot(1), (std::vector<int32_t>{2, 1}));
  EXPECT_EQ(tree.spec(1).name, "team-a");
}

TEST(QueueTreeTest, ParentGuaranteeDefaultsToChildrenSum) {
  QueueTree tree = MustCreate(
      {Q("org"), Q("a", "org", {{"gpu", 4000}}), Q("b", "org", {{"gpu", 2000}, {"cpu", 8000}}),
       Q("capped", "", {{"gpu", 1000}}), Q("c", "capped", {{"gpu", 5000}})});
  EXPECT_EQ(tree.Guaranteed(0), (ResourceList{{"cpu", 8000}, {"gpu", 6000}}));
  // An explicit parent guarantee wins, even below its children's sum.
  EXPECT_EQ(tree.Guaranteed(3), (ResourceList{{"cpu", 0}, {"gpu", 1000}}));
}

// One admission question: after `before` admissions (leaf name, charge), may `charge` be admitted
// to `leaf`?
struct AdmitCase {
  std::string name;
  std::vector<QueueSpec> specs;
  std::vector<std::pair<std::string, ResourceList>> before;
  std::string leaf;
  ResourceList charge;
  bool fits;
  std::string message;  // a substring when !fits
};

class AdmitTest : public ::testing::TestWithParam<AdmitCase> {};

TEST_P(AdmitTest, Verdict) {
  const AdmitCase& c = GetParam();
  QueueTree tree = MustCreate(c.specs);
  for (const auto& [leaf, charge] : c.before) {
    ASSERT_GE(tree.Find(leaf), 0) << leaf;
    ASSERT_TRUE(tree.CanAdmit(tree.Find(leaf), charge).fits) << leaf;
    tree.Admit(tree.Find(leaf), charge);
  }
  const QueueTree::Verdict v = tree.CanAdmit(tree.Find(c.leaf), c.charge);
  EXPECT_EQ(v.fits, c.fits) << v.message;
  if (!c.fits) EXPECT_THAT(v.message, HasSubstr(c.message));
}

// Two teams of an org, 16 GPUs guaranteed each; a borrowing limit of 8 for a.
std::vector<QueueSpec> Org(ResourceList a_borrow = {{"gpu", 8000}}, ResourceList b_lend = {}) {
  return {Q("org"), Q("a", "org", {{"gpu", 16000}}, std::move(a_borrow)),
          Q("b", "org", {{"gpu", 16000}}, {}, std::move(b_lend))};
}

INSTANTIATE_TEST_SUITE_P(
    All, AdmitTest,
    ::testing::Values(
        AdmitCase{"WithinGuarantee", Org(), {}, "a", {{"gpu", 16000}}, true, ""},
        AdmitCase{"BorrowUpToLimit", Org(), {}, "a", {{"gpu", 24000}}, true, ""},
        AdmitCase{"AboveBorrowingLimit",
                  Org(),
                  {},
                  "a",
                  {{"gpu", 25000}},
                  false,
                  "queue \"a\" gpu: needs 25 GPUs, 24 GPUs available (0 GPUs admitted, may use "
                  "24 GPUs now: guaranteed 16 GPUs, borrowing limit 8 GPUs)"},
        AdmitCase{"NothingLeftToBorrow",
                  Org({}),
                  {{"b", {{"gpu", 10000}}}},
                  "a",
                  {{"gpu", 23000}},
                  false,
                  "queue \"org\" gpu: needs 23 GPUs, 22 GPUs available (10 GPUs admitted, may "
                  "use 32 GPUs now"},
        AdmitCase{"BorrowWhatSiblingLeaves",
                  Org({}),
                  {{"b", {{"gpu", 10000}}}},
                  "a",
                  {{"gpu", 22000}},
                  true,
                  ""},
        AdmitCase{"LendingLimitKeepsGuarantee",
                  Org({}, {{"gpu", 4000}}),
                  {},
                  "a",
                  {{"gpu", 20001}},
                  false,
                  "queue \"a\" gpu: needs 20.001 GPUs, 20 GPUs available"},
        AdmitCase{
            "LendingLimitLendsUpTo", Org({}, {{"gpu", 4000}}), {}, "a", {{"gpu", 20000}}, true, ""},
        AdmitCase{"LenderUsingMoreThanUnlent",
                  Org({}, {{"gpu", 4000}}),
                  {{"b", {{"gpu", 14000}}}},
                  "a",
                  {{"gpu", 18000}},
                  true,
                  ""},
        AdmitCase{"GuaranteeAlwaysAvailableWhenSiblingWithinItsOwn",
                  Org({}),
                  {{"b", {{"gpu", 16000}}}},
                  "a",
                  {{"gpu", 16000}},
                  true,
                  ""},
        AdmitCase{"SiblingBorrowedBlocksGuarantee",
                  Org({}),
                  {{"b", {{"gpu", 30000}}}},
                  "a",
                  {{"gpu", 3000}},
                  false,
                  "2 GPUs available"},
        AdmitCase{"ParentCapsSubtree",
                  {Q("org", "", {{"gpu", 8000}}), Q("a", "org", {{"gpu", 8000}}),
                   Q("b", "org", {{"gpu", 8000}})},
                  {{"a", {{"gpu", 6000}}}},
                  "b",
                  {{"gpu", 3000}},
                  false,
                  "queue \"org\" gpu: needs 3 GPUs, 2 GPUs available"},
        AdmitCase{"UnmanagedResourceUnlimited",
                  Org(),
                  {},
                  "a",
                  {{"cpu", 1'000'000'000}, {"memory", 1000 * kGiB}, {"gpu", 1000}},
                  true,
                  ""},
        AdmitCase{"ManagedCpuShownInCores",
                  {Q("a", "", {{"cpu", 4000}})},
                  {},
                  "a",
                  {{"cpu", 4500}},
                  false,
                  "queue \"a\" cpu: needs 4.5 cores, 4 cores available"},
        AdmitCase{"ManagedMemoryShownInGiB",
                  {Q("a", "", {{"memory", 8 * kGiB}})},
                  {},
                  "a",
                  {{"memory", 9 * kGiB}},
                  false,
                  "needs 9 GiB, 8 GiB available"},
        AdmitCase{"PerModelQuota",
                  {Q("a", "", {{"gpu:A100", 8000}, {"gpu", 16000}})},
                  {},
                  "a",
                  {{"gpu", 9000}, {"gpu:A100", 9000}},
                  false,
                  "queue \"a\" gpu:A100: needs 9 GPUs"},
        AdmitCase{"PerModelQuotaOtherModelFree",
                  {Q("a", "", {{"gpu:A100", 8000}})},
                  {},
                  "a",
                  {{"gpu", 9000}, {"gpu:H100", 9000}},
                  true,
                  ""},
        AdmitCase{"LeafWithoutGuaranteeBorrows",
                  {Q("org"), Q("a", "org", {{"gpu", 4000}}), Q("b", "org")},
                  {},
                  "b",
                  {{"gpu", 4000}},
                  true,
                  ""},
        AdmitCase{"TopLevelQueuesShareOneCohort",
                  {Q("x", "", {{"gpu", 4000}}), Q("y", "", {{"gpu", 4000}}, {{"gpu", 2000}})},
                  {{"x", {{"gpu", 1000}}}},
                  "y",
                  {{"gpu", 6000}},
                  true,
                  ""},
        AdmitCase{"TopLevelBorrowingLimit",
                  {Q("x", "", {{"gpu", 4000}}), Q("y", "", {{"gpu", 4000}}, {{"gpu", 2000}})},
                  {},
                  "y",
                  {{"gpu", 7000}},
                  false,
                  "queue \"y\" gpu: needs 7 GPUs, 6 GPUs available"},
        AdmitCase{"DeepBorrowing",
                  {Q("root"), Q("org1", "root", {{"gpu", 8000}}),
                   Q("org2", "root", {{"gpu", 8000}}), Q("t1", "org1", {{"gpu", 4000}}),
                   Q("t2", "org1", {{"gpu", 4000}}), Q("t3", "org2", {{"gpu", 8000}})},
                  {{"t2", {{"gpu", 2000}}}},
                  "t1",
                  {{"gpu", 14000}},
                  true,
                  ""},
        AdmitCase{"DeepBorrowingLimitedByOther",
                  {Q("root"), Q("org1", "root", {{"gpu", 8000}}),
                   Q("org2", "root", {{"gpu", 8000}}), Q("t1", "org1", {{"gpu", 4000}}),
                   Q("t2", "org1", {{"gpu", 4000}}), Q("t3", "org2", {{"gpu", 8000}})},
                  {{"t2", {{"gpu", 2000}}}, {"t3", {{"gpu", 1000}}}},
                  "t1",
                  {{"gpu", 14000}},
                  false,
                  "queue \"root\" gpu: needs 14 GPUs, 13 GPUs available"}),
    [](const auto& info) { return info.param.name; });

TEST(QueueTreeTest, CanEverAdmit) {
  QueueTree tree = MustCreate(Org({{"gpu", 8000}}, {{"gpu", 4000}}));
  const int32_t a = tree.Find("a");
  const int32_t b = tree.Find("b");
  tree.Admit(b, {{"gpu", 16000}});  // does not matter for "ever"
  EXPECT_TRUE(tree.CanEverAdmit(a, {{"gpu", 20000}}).fits);
  const QueueTree::Verdict v = tree.CanEverAdmit(a, {{"gpu", 20001}});
  EXPECT_FALSE(v.fits);
  EXPECT_EQ(v.message,
            "queue \"a\" gpu: needs 20.001 GPUs, more than the queue can ever use (20 GPUs: "
            "guaranteed 16 GPUs, borrowing limit 8 GPUs)");
  EXPECT_TRUE(tree.CanEverAdmit(b, {{"gpu", 32000}, {"cpu", 123}}).fits);
  EXPECT_FALSE(tree.CanEverAdmit(b, {{"gpu", 32001}}).fits);
}

TEST(QueueTreeTest, CanEverAdmitWithoutBorrowingLimitMessage) {
  QueueTree tree = MustCreate({Q("a", "", {{"gpu", 2000}})});
  EXPECT_THAT(tree.CanEverAdmit(0, {{"gpu", 3000}}).message,
              HasSubstr("guaranteed 2 GPUs, borrowing limit unbounded"));
}

TEST(QueueTreeTest, AdmitReleaseUsageAndBorrowing) {
  QueueTree tree = MustCreate(Org());
  const int32_t org = tree.Find("org");
  const int32_t a = tree.Find("a");
  const ResourceList charge = {{"cpu", 4000}, {"gpu", 20000}};
  EXPECT_FALSE(tree.IsBorrowing(a));
  tree.Admit(a, charge);
  EXPECT_EQ(tree.Usage(a), charge);
  EXPECT_EQ(tree.Usage(org), charge);
  EXPECT_TRUE(tree.Usage(tree.Find("b")).empty());
  EXPECT_TRUE(tree.IsBorrowing(a));
  EXPECT_FALSE(tree.IsBorrowing(org));  // 20 of 32
  tree.Release(a, charge);
  EXPECT_TRUE(tree.Usage(a).empty());
  EXPECT_TRUE(tree.Usage(org).empty());
  EXPECT_FALSE(tree.IsBorrowing(a));
  // Release gives back what siblings may borrow again.
  tree.Admit(a, {{"gpu", 24000}});
  EXPECT_FALSE(tree.CanAdmit(tree.Find("b"), {{"gpu", 9000}}).fits);
  tree.Release(a, {{"gpu", 24000}});
  EXPECT_TRUE(tree.CanAdmit(tree.Find("b"), {{"gpu", 32000}}).fits);
}

TEST(QueueTreeTest, WithinGuarantee) {
  QueueTree tree = MustCreate(Org());
  const int32_t a = tree.Find("a");
  const int32_t b = tree.Find("b");
  tree.Admit(b, {{"gpu", 24000}});  // b borrows 8 from a
  EXPECT_TRUE(tree.WithinGuarantee(a, {{"gpu", 8000}}));
  EXPECT_TRUE(tree.WithinGuarantee(a, {{"gpu", 8000}, {"cpu", 1'000'000}}));  // cpu unmanaged
  EXPECT_FALSE(tree.WithinGuarantee(a, {{"gpu", 8001}}));  // the org is at 24 + 8.001 > 32
  EXPECT_FALSE(tree.CanAdmit(a, {{"gpu", 8001}}).fits);
  tree.Admit(a, {{"gpu", 4000}});
  EXPECT_TRUE(tree.WithinGuarantee(a, {{"gpu", 4000}}));
  EXPECT_FALSE(tree.WithinGuarantee(a, {{"gpu", 4001}}));
  EXPECT_FALSE(tree.WithinGuarantee(b, {{"gpu", 1}}));
}

TEST(QueueTreeTest, BorrowingAndGuaranteeArePerResource) {
  QueueTree tree = MustCreate({Q("a", "", {{"gpu", 8000}, {"cpu", 16000}}),
                               Q("b", "", {{"gpu", 8000}, {"cpu", 16000}})});
  const int32_t a = tree.Find("a");
  const int32_t b = tree.Find("b");
  tree.Admit(a, {{"gpu", 4000}, {"cpu", 20000}, {"memory", kGiB}});  // borrows cpu, not gpu
  EXPECT_TRUE(tree.IsBorrowing(a));
  EXPECT_TRUE(tree.IsBorrowing(a, "cpu"));
  EXPECT_FALSE(tree.IsBorrowing(a, "gpu"));
  EXPECT_FALSE(tree.IsBorrowing(a, "memory"));  // unmanaged: nobody borrows it
  EXPECT_TRUE(tree.Manages("cpu"));
  EXPECT_FALSE(tree.Manages("memory"));
  EXPECT_FALSE(tree.IsBorrowing(b, "cpu"));
  EXPECT_TRUE(tree.WithinOwnGuarantee(a, "gpu", 4000));
  EXPECT_FALSE(tree.WithinOwnGuarantee(a, "gpu", 4001));
  EXPECT_FALSE(tree.WithinOwnGuarantee(a, "cpu", 0));
  EXPECT_FALSE(tree.WithinOwnGuarantee(a, "memory", 0));  // nothing of it is guaranteed
  EXPECT_TRUE(tree.WithinOwnGuarantee(b, "cpu", 16000));
}

TEST(QueueTreeTest, DominantShareWithWeights) {
  std::vector<QueueSpec> specs = {Q("a"), Q("b")};
  specs[1].weight = 2;
  QueueTree tree = MustCreate(specs);
  tree.SetCapacity({{"cpu", 100'000}, {"memory", 100 * kGiB}, {"gpu", 10'000}});
  tree.Admit(0, {{"cpu", 10'000}, {"gpu", 5'000}});    // dominant: gpu 0.5
  tree.Admit(1, {{"cpu", 60'000}, {"memory", kGiB}});  // dominant: cpu 0.6, weight 2
  EXPECT_DOUBLE_EQ(tree.Share(0), 0.5);
  EXPECT_DOUBLE_EQ(tree.Share(1), 0.3);
  // A resource without capacity counts for no share; capacity may be set after admissions.
  tree.SetCapacity({{"cpu", 20'000}});
  EXPECT_DOUBLE_EQ(tree.Share(0), 0.5);
  EXPECT_DOUBLE_EQ(tree.Share(1), 1.5);
}

TEST(QueueTreeTest, ParentShareIsItsSubtree) {
  QueueTree tree = MustCreate({Q("org"), Q("a", "org"), Q("b", "org")});
  tree.SetCapacity({{"gpu", 8000}});
  tree.Admit(1, {{"gpu", 2000}});
  tree.Admit(2, {{"gpu", 4000}});
  EXPECT_DOUBLE_EQ(tree.Share(0), 0.75);
  EXPECT_DOUBLE_EQ(tree.Share(1), 0.25);
  EXPECT_DOUBLE_EQ(tree.Share(2), 0.5);
}

TEST(QueueTreeTest, HistoryDecaysWithHalfLife) {
  QueueTree tree = MustCreate({Q("a"), Q("b")});
  tree.SetCapacity({{"gpu", 1000}});
  tree.Configure(FairShareMode::kDrf, std::chrono::seconds(10));
  const TimePoint t0{};
  tree.AdvanceTime(t0);
  tree.Admit(0, {{"gpu", 1000}});
  tree.AdvanceTime(t0 + std::chrono::seconds(10));  // one half-life at share 1
  EXPECT_DOUBLE_EQ(tree.Share(0), 1.5);
  tree.Release(0, {{"gpu", 1000}});
  EXPECT_DOUBLE_EQ(tree.Share(0), 0.5);
  tree.AdvanceTime(t0 + std::chrono::seconds(10));  // idempotent
  EXPECT_DOUBLE_EQ(tree.Share(0), 0.5);
  tree.AdvanceTime(t0 + std::chrono::seconds(20));  // decays by half
  EXPECT_DOUBLE_EQ(tree.Share(0), 0.25);
  EXPECT_DOUBLE_EQ(tree.Share(1), 0.0);
  // Without a half-life: current use only.
  tree.Configure(FairShareMode::kDrf, Duration{0});
  EXPECT_DOUBLE_EQ(tree.Share(0), 0.0);
  EXPECT_EQ(tree.fair_share(), FairShareMode::kDrf);
}

// Random trees and random admissions (only those CanAdmit accepts) and releases: no queue ever
// goes above its guarantee plus borrowing limit, the top-level queues together stay within
// their guarantees, use adds up the tree, a charge that fits now could fit ever, and releasing
// everything gives back the empty tree.
TEST(QueueTreeTest, RandomAdmissionsRespectEveryLimit) {
  std::mt19937_64 rng(42);
  const auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const std::vector<std::string> resources = {"cpu", "gpu"};
  for (int round = 0; round < 200; ++round) {
    std::vector<QueueSpec> specs;
    const int n = static_cast<int>(uniform(1, 12));
    for (int q = 0; q < n; ++q) {
      QueueSpec s = Q("q" + std::to_string(q));
      if (q > 0 && uniform(0, 3) > 0) s.parent = "q" + std::to_string(uniform(0, q - 1));
      for (const std::string& r : resources) {
        if (uniform(0, 2) > 0) s.guaranteed[r] = uniform(0, 8) * 1000;
        if (uniform(0, 2) == 0) s.borrowing_limit[r] = uniform(0, 4) * 1000;
        if (uniform(0, 2) == 0) s.lending_limit[r] = uniform(0, 4) * 1000;
      }
      specs.push_back(std::move(s));
    }
    std::shuffle(specs.begin(), specs.end(), rng);  // any order
    QueueTree tree = MustCreate(specs);
    std::vector<int32_t> leaves;
    for (int32_t q = 0; q < tree.size(); ++q) {
      if (tree.IsLeaf(q)) leaves.push_back(q);
    }
    std::vector<std::pair<int32_t, ResourceList>> admitted;
    const auto random_charge = [&] {
      ResourceList charge;
      for (const std::string& r : resources) {
        if (uniform(0, 1) == 0) charge[r] = uniform(1, 6) * 500;
      }
      return charge;
    };
    const auto check_limits = [&] {
      std::map<std::string, int64_t> top_use;
      std::map<std::string, int64_t> top_guarantee;
      for (int32_t q = 0; q < tree.size(); ++q) {
        const ResourceList& use = tree.Usage(q);
        const ResourceList g = tree.Guaranteed(q);
        for (const std::string& r : resources) {
          const int64_t u = use.contains(r) ? use.at(r) : 0;
          const auto b = tree.spec(q).borrowing_limit.find(r);
          if (g.contains(r) && b != tree.spec(q).borrowing_limit.end()) {
            EXPECT_LE(u, g.at(r) + b->second) << tree.spec(q).name << " " << r;
          }
          if (tree.parent(q) < 0) {
            top_use[r] += u;
            top_guarantee[r] += g.contains(r) ? g.at(r) : 0;
          }
          int64_t children = 0;
          for (int32_t c : tree.children(q)) {
            children += tree.Usage(c).contains(r) ? tree.Usage(c).at(r) : 0;
          }
          if (!tree.IsLeaf(q)) EXPECT_EQ(u, children);
        }
      }
      for (const std::string& r : resources) {
        if (tree.Guaranteed(0).contains(r)) EXPECT_LE(top_use[r], top_guarantee[r]) << r;
      }
    };
    for (int step = 0; step < 60; ++step) {
      if (!admitted.empty() && uniform(0, 3) == 0) {
        const size_t i = static_cast<size_t>(uniform(0, static_cast<int64_t>(admitted.size()) - 1));
        tree.Release(admitted[i].first, admitted[i].second);
        admitted.erase(admitted.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        const int32_t leaf = leaves[uniform(0, static_cast<int64_t>(leaves.size()) - 1)];
        ResourceList charge = random_charge();
        const QueueTree::Verdict now = tree.CanAdmit(leaf, charge);
        if (now.fits) {
          EXPECT_TRUE(tree.CanEverAdmit(leaf, charge).fits);
          tree.Admit(leaf, charge);
          admitted.emplace_back(leaf, std::move(charge));
        } else {
          EXPECT_THAT(now.message, HasSubstr("needs"));
        }
      }
      check_limits();
    }
    for (const auto& [leaf, charge] : admitted) tree.Release(leaf, charge);
    for (int32_t q = 0; q < tree.size(); ++q) EXPECT_TRUE(tree.Usage(q).empty());
    for (int i = 0; i < 10; ++i) {
      const int32_t leaf = leaves[uniform(0, static_cast<int64_t>(leaves.size()) - 1)];
      const ResourceList charge = random_charge();
      EXPECT_EQ(tree.CanAdmit(leaf, charge).fits, tree.CanEverAdmit(leaf, charge).fits);
    }
  }
}

TEST(QueueTreeTest, LargeQuantitiesDoNotOverflow) {
  const int64_t huge = int64_t{1} << 62;
  std::vector<QueueSpec> specs = {Q("org")};
  for (int i = 0; i < 8; ++i) {
    specs.push_back(Q("t" + std::to_string(i), "org", {{"memory", huge}}, {{"memory", huge}}));
  }
  QueueTree tree = MustCreate(specs);
  EXPECT_TRUE(tree.CanAdmit(1, {{"memory", huge}}).fits);
  tree.Admit(1, {{"memory", huge}});
  EXPECT_TRUE(tree.CanAdmit(2, {{"memory", huge}}).fits);
  EXPECT_EQ(tree.Guaranteed(0).at("memory"), std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace tessera
