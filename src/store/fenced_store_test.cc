// FencedStore over a real SQLite store: writes take effect only while the fence holds.
#include "store/fenced_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <future>
#include <memory>
#include <string>

#include "store/sqlite/sqlite_store.h"

namespace tessera::store {
namespace {

using ::testing::HasSubstr;

constexpr char kLeaderKey[] = "/tessera/leader/a";

class FencedStoreTest : public ::testing::Test {
 protected:
  FencedStoreTest() {
    std::string pattern = std::filesystem::temp_directory_path() / "tessera-fenced-XXXXXX";
    dir_ = mkdtemp(pattern.data());
    absl::StatusOr<std::unique_ptr<SqliteStore>> inner =
        SqliteStore::Open({.data_dir = dir_, .sync = SqliteStoreOptions::Sync::kNormal});
    EXPECT_TRUE(inner.ok()) << inner.status();
    inner_ = *std::move(inner);
    absl::StatusOr<TxnResult> elected =
        inner_->Commit(Txn::Unconditional({Op::Put(kLeaderKey, "replica a")}));
    EXPECT_TRUE(elected.ok()) << elected.status();
    term_ = elected->revision;
    fenced_ = std::make_unique<FencedStore>(
        inner_.get(),
        Compare{.key = kLeaderKey, .target = Compare::Target::kCreateRevision, .number = term_},
        [this] { ++fenced_calls_; });
  }
  ~FencedStoreTest() override {
    fenced_.reset();
    inner_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Another replica takes over: the leader key is deleted and created again.
  void Depose() {
    ASSERT_TRUE(inner_->Commit(Txn::Unconditional({Op::Delete(kLeaderKey)})).ok());
    ASSERT_TRUE(inner_->Commit(Txn::Unconditional({Op::Put(kLeaderKey, "replica b")})).ok());
  }

  std::string dir_;
  std::unique_ptr<SqliteStore> inner_;
  Revision term_ = 0;
  int fenced_calls_ = 0;
  std::unique_ptr<FencedStore> fenced_;
};

TEST_F(FencedStoreTest, TheLeaderWrites) {
  absl::StatusOr<TxnResult> result = fenced_->Commit(Txn::Unconditional({Op::Put("/k", "v")}));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->succeeded);
  absl::StatusOr<std::optional<KeyValue>> read = fenced_->Get("/k");
  ASSERT_TRUE(read.ok() && read->has_value());
  EXPECT_EQ((*read)->value, "v");
  EXPECT_EQ(fenced_calls_, 0);
}

TEST_F(FencedStoreTest, ADeposedLeadersWritesFailAndWriteNothing) {
  Depose();
  absl::StatusOr<TxnResult> result = fenced_->Commit(Txn::Unconditional({Op::Put("/k", "v")}));
  ASSERT_TRUE(absl::IsFailedPrecondition(result.status())) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("fenced"));
  EXPECT_THAT(result.status().message(), HasSubstr(kLeaderKey));
  EXPECT_FALSE(fenced_->Get("/k")->has_value());
  EXPECT_EQ(fenced_calls_, 1);

  std::promise<absl::StatusOr<TxnResult>> async;
  ASSERT_TRUE(fenced_
                  ->CommitAsync(Txn::Unconditional({Op::Put("/k", "v")}),
                                [&](absl::StatusOr<TxnResult> r) { async.set_value(r); })
                  .ok());
  absl::StatusOr<TxnResult> async_result = async.get_future().get();
  EXPECT_TRUE(absl::IsFailedPrecondition(async_result.status())) << async_result.status();
  EXPECT_FALSE(fenced_->Get("/k")->has_value());
  EXPECT_EQ(fenced_calls_, 1) << "on_fenced is called once";
}

TEST_F(FencedStoreTest, AMissingFenceKeyFencesToo) {
  ASSERT_TRUE(inner_->Commit(Txn::Unconditional({Op::Delete(kLeaderKey)})).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(
      fenced_->Commit(Txn::Unconditional({Op::Put("/k", "v")})).status()));
}

TEST_F(FencedStoreTest, TheCallersOwnCompareFailingIsNoFence) {
  ASSERT_TRUE(fenced_->Commit(Txn::Unconditional({Op::Put("/k", "v")})).ok());
  absl::StatusOr<TxnResult> result =
      fenced_->Commit(Txn{.compares = {Compare::Absent("/k")}, .success = {Op::Put("/k", "w")}});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->succeeded);
  EXPECT_EQ((*fenced_->Get("/k"))->value, "v");
  EXPECT_EQ(fenced_calls_, 0);
}

TEST_F(FencedStoreTest, AFailureBranchIsRefused) {
  absl::StatusOr<TxnResult> result = fenced_->Commit(
      Txn{.compares = {Compare::Absent("/k")}, .failure = {Op::Put("/other", "x")}});
  ASSERT_TRUE(absl::IsInvalidArgument(result.status())) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("failure"));
}

TEST_F(FencedStoreTest, TheLimitsLeaveRoomForTheFence) {
  EXPECT_EQ(fenced_->limits().max_entries, inner_->limits().max_entries - 1);
  EXPECT_EQ(fenced_->limits().max_total_bytes,
            inner_->limits().max_total_bytes - std::string(kLeaderKey).size());
}

}  // namespace
}  // namespace tessera::store
