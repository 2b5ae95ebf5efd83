#include "server/cycle_writes.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// "put key=value" / "delete key" of each op, in transaction order.
std::vector<std::string> Ops(const store::Txn& txn) {
  std::vector<std::string> out;
  for (const store::Op& op : txn.success) {
    out.push_back(op.type == store::Op::Type::kPut ? "put " + op.key + "=" + op.value
                                                   : "delete " + op.key);
  }
  return out;
}

JobEvent Event(std::string job, int64_t sequence) {
  return {.job_id = std::move(job), .sequence = sequence, .type = "Placed"};
}

TEST(CycleWritesTest, StepsOfSeveralJobsAreOneTransaction) {
  CycleWrites writes{store::TxnLimits{}};
  EXPECT_TRUE(writes.empty());
  std::vector<std::string> calls;
  writes.Add({store::Op::Put("/j/1", "a"), store::Op::Put("/e/1/1", "x")}, "t1", {Event("1", 1)},
             [&] { calls.push_back("1"); });
  writes.Add({store::Op::Put("/j/2", "b")}, "t2", {Event("2", 1)}, [&] { calls.push_back("2"); });
  EXPECT_FALSE(writes.empty());
  CycleWrites::Batch batch = writes.Take();
  EXPECT_TRUE(writes.empty());
  EXPECT_EQ(batch.steps, 2);
  EXPECT_THAT(Ops(batch.txn), ElementsAre("put /j/1=a", "put /e/1/1=x", "put /j/2=b"));
  ASSERT_EQ(batch.events.size(), 2u);
  EXPECT_EQ(batch.events[0].first.job_id, "1");
  EXPECT_EQ(batch.events[0].second, "t1");
  EXPECT_EQ(batch.events[1].second, "t2");
  for (const auto& done : batch.done) done();
  EXPECT_THAT(calls, ElementsAre("1", "2"));
  EXPECT_THAT(Ops(writes.Take().txn), IsEmpty());
}

TEST(CycleWritesTest, AKeyWrittenTwiceKeepsItsLastOpInItsFirstPlace) {
  CycleWrites writes{store::TxnLimits{}};
  writes.Add({store::Op::Put("/j/1", "placed"), store::Op::Put("/t/1/0", "pending")}, "t", {},
             nullptr);
  writes.Add({store::Op::Put("/j/2", "other")}, "t", {}, nullptr);
  // The job is requeued (its task key deleted), then placed again in the same turn.
  writes.Add({store::Op::Put("/j/1", "requeued"), store::Op::Delete("/t/1/0")}, "t", {}, nullptr);
  writes.Add({store::Op::Put("/j/1", "placed again"), store::Op::Put("/t/1/0", "bound")}, "t", {},
             nullptr);
  CycleWrites::Batch batch = writes.Take();
  EXPECT_EQ(batch.steps, 3 + 1);
  EXPECT_THAT(Ops(batch.txn),
              ElementsAre("put /j/1=placed again", "put /t/1/0=bound", "put /j/2=other"));
  EXPECT_TRUE(batch.done.empty());
}

TEST(CycleWritesTest, APutThenADeleteIsADelete) {
  CycleWrites writes{store::TxnLimits{}};
  writes.Add({store::Op::Put("/t/1/0", "placed")}, "t", {}, nullptr);
  writes.Add({store::Op::Delete("/t/1/0")}, "t", {}, nullptr);
  EXPECT_THAT(Ops(writes.Take().txn), ElementsAre("delete /t/1/0"));
}

TEST(CycleWritesTest, AStepPastTheLimitsDoesNotFitButAlwaysFitsAnEmptyTransaction) {
  CycleWrites writes{store::TxnLimits{.max_entries = 3, .max_total_bytes = 20}};
  const std::vector<store::Op> two = {store::Op::Put("/a", "1"), store::Op::Put("/b", "2")};
  EXPECT_TRUE(writes.Fits(two));
  writes.Add(two, "t", {}, nullptr);
  EXPECT_FALSE(writes.Fits(two));  // 4 entries > 3
  EXPECT_TRUE(writes.Fits({store::Op::Put("/c", "3")}));
  EXPECT_FALSE(writes.Fits({store::Op::Put("/c", std::string(20, 'x'))}));  // bytes
  // Coalesced keys still count: the bound is never exceeded, whatever the merge saves.
  EXPECT_FALSE(writes.Fits(two));
  writes.Take();
  const std::vector<store::Op> huge = {store::Op::Put("/h", std::string(100, 'x'))};
  EXPECT_TRUE(writes.Fits(huge));
}

}  // namespace
}  // namespace tessera::server
