#include "server/job_snapshot.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tessera::server {
namespace {

std::shared_ptr<const PublishedJob> ViewOf(int64_t id, std::string tenant = "t") {
  auto job = std::make_shared<PublishedJob>();
  job->metadata.id = std::to_string(id);
  job->spec = std::make_shared<const JobSpec>();
  job->tenant = std::move(tenant);
  return job;
}

std::vector<int64_t> Listed(const JobSnapshot& snapshot, int64_t after, ListOrder order) {
  std::vector<int64_t> ids;
  snapshot.ForEachInListOrder(after, order, [&](const PublishedJob& job) {
    ids.push_back(std::stoll(job.metadata.id));
  });
  return ids;
}

TEST(JobSnapshotTest, EmptyFindsNothing) {
  JobSnapshot empty;
  EXPECT_EQ(empty.Find(1), nullptr);
  EXPECT_EQ(empty.Find(0), nullptr);
  EXPECT_EQ(empty.Find(-5), nullptr);
  EXPECT_EQ(empty.size(), 0);
  EXPECT_TRUE(Listed(empty, 0, ListOrder::kNewestFirst).empty());
}

TEST(JobSnapshotTest, WithLeavesTheOriginalAsItWas) {
  JobSnapshot empty;
  std::vector<JobSnapshot::Change> first = {{1, ViewOf(1, "a")}, {2, ViewOf(2)}};
  std::shared_ptr<const JobSnapshot> one = empty.With(first);
  std::vector<JobSnapshot::Change> second = {{1, ViewOf(1, "b")}, {2, nullptr}};
  std::shared_ptr<const JobSnapshot> two = one->With(second);

  EXPECT_EQ(empty.size(), 0);
  ASSERT_NE(one->Find(1), nullptr);
  EXPECT_EQ(one->Find(1)->tenant, "a");
  EXPECT_NE(one->Find(2), nullptr);
  EXPECT_EQ(one->size(), 2);
  EXPECT_EQ(two->Find(1)->tenant, "b");
  EXPECT_EQ(two->Find(2), nullptr);
  EXPECT_EQ(two->size(), 1);
}

TEST(JobSnapshotTest, TheLaterChangeOfOneIdWins) {
  std::vector<JobSnapshot::Change> changes = {
      {7, ViewOf(7, "first")}, {7, ViewOf(7, "second")}, {8, ViewOf(8)}, {8, nullptr}};
  std::shared_ptr<const JobSnapshot> snapshot = JobSnapshot().With(changes);
  EXPECT_EQ(snapshot->Find(7)->tenant, "second");
  EXPECT_EQ(snapshot->Find(8), nullptr);
  EXPECT_EQ(snapshot->size(), 1);
}

TEST(JobSnapshotTest, BlocksNotChangedAreShared) {
  std::vector<JobSnapshot::Change> changes;
  for (int64_t id = 1; id <= 3 * JobSnapshot::kJobsPerBlock; ++id) {
    changes.push_back({id, ViewOf(id)});
  }
  std::shared_ptr<const JobSnapshot> before = JobSnapshot().With(changes);
  std::vector<JobSnapshot::Change> one = {{5, ViewOf(5, "changed")}};
  std::shared_ptr<const JobSnapshot> after = before->With(one);
  const int64_t far = 2 * JobSnapshot::kJobsPerBlock + 3;
  EXPECT_EQ(after->Find(far).get(), before->Find(far).get());
  EXPECT_EQ(after->Find(6).get(), before->Find(6).get());  // same job, copied block
  EXPECT_EQ(after->Find(5)->tenant, "changed");
  EXPECT_EQ(before->Find(5)->tenant, "t");
  EXPECT_EQ(after->size(), 3 * JobSnapshot::kJobsPerBlock);
}

TEST(JobSnapshotTest, ListsInBothOrdersAfterAnId) {
  std::vector<JobSnapshot::Change> changes;
  for (int64_t id : {1, 2, 4, 600, 1100}) changes.push_back({id, ViewOf(id)});
  std::shared_ptr<const JobSnapshot> snapshot = JobSnapshot().With(changes);

  EXPECT_EQ(Listed(*snapshot, 0, ListOrder::kOldestFirst),
            (std::vector<int64_t>{1, 2, 4, 600, 1100}));
  EXPECT_EQ(Listed(*snapshot, 2, ListOrder::kOldestFirst), (std::vector<int64_t>{4, 600, 1100}));
  EXPECT_EQ(Listed(*snapshot, 0, ListOrder::kNewestFirst),
            (std::vector<int64_t>{1100, 600, 4, 2, 1}));
  EXPECT_EQ(Listed(*snapshot, 600, ListOrder::kNewestFirst), (std::vector<int64_t>{4, 2, 1}));
  EXPECT_EQ(Listed(*snapshot, 5000, ListOrder::kNewestFirst),
            (std::vector<int64_t>{1100, 600, 4, 2, 1}));
  EXPECT_TRUE(Listed(*snapshot, 1100, ListOrder::kOldestFirst).empty());
  EXPECT_TRUE(Listed(*snapshot, 1, ListOrder::kNewestFirst).empty());
}

TEST(PublishedJobTest, ViewJoinsTheSharedSpecWithTheVersionsStatus) {
  auto spec = std::make_shared<JobSpec>();
  spec->name = "train";
  spec->queue = "research";
  PublishedJob pending{.tenant = "a", .metadata = {.id = "3", .request_id = "r-1"}, .spec = spec};
  pending.status.phase = JobPhase::kPending;
  PublishedJob running = pending;
  running.status.phase = JobPhase::kRunning;

  const JobView view = running.View();
  EXPECT_EQ(view.tenant, "a");
  EXPECT_EQ(view.document.metadata.id, "3");
  EXPECT_EQ(view.document.metadata.request_id, "r-1");
  EXPECT_EQ(view.document.spec.name, "train");
  EXPECT_EQ(view.document.spec.queue, "research");
  ASSERT_TRUE(view.document.status.has_value());
  EXPECT_EQ(view.document.status->phase, JobPhase::kRunning);
  EXPECT_EQ(pending.View().document.status->phase, JobPhase::kPending);
  EXPECT_EQ(running.spec.get(), pending.spec.get());
}

}  // namespace
}  // namespace tessera::server
