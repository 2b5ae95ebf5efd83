#include "store/etcd/txn_batch.h"

#include <gtest/gtest.h>

namespace tessera::store::etcd {
namespace {

Txn Put(std::string key) { return Txn::Unconditional({Op::Put(std::move(key), "v")}); }

Txn Fenced(std::string key) {
  Txn txn = Put(std::move(key));
  txn.compares.push_back(Compare::ModRevisionIs("/tessera/leader/1", 7));
  return txn;
}

TEST(TxnBatchTest, MergesIndependentTransactionsAndSendsAnIdenticalCompareOnce) {
  TxnBatch batch(TxnLimits{});
  EXPECT_TRUE(batch.Add(Fenced("/a")));
  EXPECT_TRUE(batch.Add(Fenced("/b")));
  EXPECT_TRUE(batch.Add(Put("/c")));
  EXPECT_EQ(batch.size(), 3u);
  EXPECT_EQ(batch.merged().compares.size(), 1u);
  EXPECT_EQ(batch.merged().success.size(), 3u);
}

TEST(TxnBatchTest, RefusesACompareOnAKeyAnEarlierOneWrites) {
  TxnBatch batch(TxnLimits{});
  ASSERT_TRUE(batch.Add(Txn::Unconditional({Op::Put("/a", "1"), Op::DeletePrefix("/dir/")})));
  Txn on_written = Put("/x");
  on_written.compares.push_back(Compare::ValueIs("/a", "1"));
  EXPECT_FALSE(batch.Add(on_written));
  Txn under_deleted = Put("/y");
  under_deleted.compares.push_back(Compare::Absent("/dir/k"));
  EXPECT_FALSE(batch.Add(under_deleted));
  EXPECT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch.merged().compares.size(), 0u);
}

TEST(TxnBatchTest, RefusesAKeyWrittenTwiceOrUnderADeletedPrefix) {
  TxnBatch batch(TxnLimits{});
  ASSERT_TRUE(batch.Add(Txn::Unconditional({Op::Put("/a", "1"), Op::DeletePrefix("/dir/")})));
  EXPECT_FALSE(batch.Add(Put("/a")));
  EXPECT_FALSE(batch.Add(Txn::Unconditional({Op::Delete("/a")})));
  EXPECT_FALSE(batch.Add(Put("/dir/k")));
  EXPECT_FALSE(batch.Add(Txn::Unconditional({Op::DeletePrefix("/")})));       // covers /a
  EXPECT_FALSE(batch.Add(Txn::Unconditional({Op::DeletePrefix("/dir/x")})));  // under /dir/
  EXPECT_TRUE(batch.Add(Put("/b")));
}

TEST(TxnBatchTest, KeepsTransactionsWithFailureBranchesAlone) {
  Txn with_failure = Put("/a");
  with_failure.compares.push_back(Compare::Absent("/a"));
  with_failure.failure.push_back(Op::Put("/conflicts", "1"));
  TxnBatch alone(TxnLimits{});
  ASSERT_TRUE(alone.Add(with_failure));
  EXPECT_FALSE(alone.Add(Put("/b")));
  TxnBatch after(TxnLimits{});
  ASSERT_TRUE(after.Add(Put("/b")));
  EXPECT_FALSE(after.Add(with_failure));
}

TEST(TxnBatchTest, StaysWithinTheLimits) {
  TxnBatch batch(TxnLimits{.max_entries = 3});
  ASSERT_TRUE(batch.Add(Fenced("/a")));  // 2 entries
  EXPECT_TRUE(batch.Add(Fenced("/b")));  // the compare is shared: 3
  EXPECT_FALSE(batch.Add(Put("/c")));    // 4
  TxnBatch small(TxnLimits{.max_total_bytes = 6});
  ASSERT_TRUE(small.Add(Put("/a")));  // 3 bytes
  EXPECT_TRUE(small.Add(Put("/b")));  // 6
  EXPECT_FALSE(small.Add(Put("/c")));
}

TEST(TxnBatchTest, SplitsTheAnswerIntoEachTransactionsResult) {
  TxnBatch batch(TxnLimits{});
  ASSERT_TRUE(batch.Add(Txn::Unconditional({Op::Put("/a", "1"), Op::DeletePrefix("/old/")})));
  ASSERT_TRUE(batch.Add(Txn::Unconditional({Op::Delete("/gone")})));
  etcdserverpb::TxnResponse response;
  response.set_succeeded(true);
  response.mutable_header()->set_revision(11);  // etcd's: the store's 10
  response.add_responses()->mutable_response_put();
  response.add_responses()->mutable_response_delete_range()->set_deleted(4);
  response.add_responses()->mutable_response_delete_range()->set_deleted(1);
  std::vector<TxnResult> results = batch.Split(response);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].succeeded && results[1].succeeded);
  EXPECT_EQ(results[0].revision, 10);
  EXPECT_EQ(results[1].revision, 10);
  EXPECT_EQ(results[0].deleted, 4);
  EXPECT_EQ(results[1].deleted, 1);
}

}  // namespace
}  // namespace tessera::store::etcd
