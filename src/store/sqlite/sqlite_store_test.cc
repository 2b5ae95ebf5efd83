#include "store/sqlite/sqlite_store.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "store/testing/store_conformance.h"

namespace tessera::store {
namespace {

using ::testing::HasSubstr;
using testing::StoreBackend;
using testing::StoreConformanceTest;
using testing::StoreTestEnvironment;

// A fresh temporary directory, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tessera-store-XXXXXX");
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class SqliteEnvironment final : public StoreTestEnvironment {
 public:
  absl::StatusOr<std::unique_ptr<Store>> Open() override {
    absl::StatusOr<std::unique_ptr<SqliteStore>> store =
        SqliteStore::Open({.data_dir = dir_.path() + "/data"});
    if (!store.ok()) return store.status();
    return std::unique_ptr<Store>(std::move(*store));
  }

 private:
  TempDir dir_;
};

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreConformanceTest,
                         ::testing::Values(StoreBackend{
                             "Sqlite", [] { return std::make_unique<SqliteEnvironment>(); }}),
                         testing::StoreBackendName);

// Holds the writer thread in before_batch_for_test until Release().
class WriterGate {
 public:
  std::function<void()> Hook() {
    return [this] {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(&released_));
    };
  }
  void Release() {
    absl::MutexLock lock(&mu_);
    released_ = true;
  }

 private:
  absl::Mutex mu_;
  bool released_ = false;
};

class SqliteStoreTest : public ::testing::Test {
 protected:
  std::string DataDir() const { return dir_.path() + "/data"; }

  std::unique_ptr<SqliteStore> MustOpen(SqliteStoreOptions options) {
    absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(std::move(options));
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  static void WriteFile(const std::string& path, const std::string& contents) {
    std::ofstream(path, std::ios::binary) << contents;
  }

  TempDir dir_;
};

TEST_F(SqliteStoreTest, CreatesTheDataDirectoryWithItsParents) {
  std::string nested = dir_.path() + "/a/b/c";
  ASSERT_NE(MustOpen({.data_dir = nested}), nullptr);
  EXPECT_TRUE(std::filesystem::exists(nested + "/tessera.db"));
  EXPECT_TRUE(std::filesystem::exists(nested + "/LOCK"));
}

TEST_F(SqliteStoreTest, RejectsBadOptions) {
  EXPECT_EQ(SqliteStore::Open({}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SqliteStore::Open({.data_dir = DataDir(), .max_queued_txns = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(SqliteStoreTest, CorruptDatabaseIsDataLoss) {
  std::filesystem::create_directories(DataDir());
  std::string garbage;
  for (int i = 0; i < 1000; ++i) garbage += "this is not an SQLite database ";
  WriteFile(DataDir() + "/tessera.db", garbage);
  absl::Status status = SqliteStore::Open({.data_dir = DataDir()}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_THAT(status.message(), HasSubstr(DataDir() + "/tessera.db"));
}

TEST_F(SqliteStoreTest, ForeignSqliteDatabaseIsRefused) {
  std::filesystem::create_directories(DataDir());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((DataDir() + "/tessera.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE users(name TEXT)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  absl::Status status = SqliteStore::Open({.data_dir = DataDir()}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_THAT(status.message(), HasSubstr("not a Tessera store"));
}

TEST_F(SqliteStoreTest, DataDirectoryThatIsAFileIsRefused) {
  WriteFile(DataDir(), "a file");
  absl::Status status = SqliteStore::Open({.data_dir = DataDir()}).status();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr(DataDir()));
  status = SqliteStore::Open({.data_dir = DataDir() + "/below"}).status();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr(DataDir() + "/below"));
}

// Makes a file or directory unwritable for its lifetime — for root too, whom permission bits do
// not stop: root gets the immutable attribute (where the filesystem and capabilities allow it),
// others read-only permission bits.
class Unwritable {
 public:
  explicit Unwritable(std::string path) : path_(std::move(path)) {
    if (geteuid() != 0) {
      std::filesystem::permissions(path_, std::filesystem::perms::owner_write,
                                   std::filesystem::perm_options::remove);
      ok_ = true;
      return;
    }
    ok_ = SetImmutable(true);
  }
  ~Unwritable() {
    if (!ok_) return;
    if (geteuid() != 0) {
      std::filesystem::permissions(path_, std::filesystem::perms::owner_write,
                                   std::filesystem::perm_options::add);
    } else {
      SetImmutable(false);
    }
  }
  bool ok() const { return ok_; }

 private:
  bool SetImmutable(bool on) {
    int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    int flags = 0;
    bool done = ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
    flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
    done = done && ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
    close(fd);
    return done;
  }

  std::string path_;
  bool ok_ = false;
};

TEST_F(SqliteStoreTest, UnwritableDataDirectoryIsPermissionDenied) {
  std::filesystem::create_directories(DataDir());
  Unwritable unwritable(DataDir());
  if (!unwritable.ok()) GTEST_SKIP() << "cannot make a directory unwritable here";
  absl::Status status = SqliteStore::Open({.data_dir = DataDir()}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
  EXPECT_THAT(status.message(), HasSubstr(DataDir() + " is not writable"));
}

TEST_F(SqliteStoreTest, ReadOnlyDatabaseIsPermissionDenied) {
  ASSERT_NE(MustOpen({.data_dir = DataDir()}), nullptr);  // creates, then closes
  Unwritable unwritable(DataDir() + "/tessera.db");
  if (!unwritable.ok()) GTEST_SKIP() << "cannot make a file unwritable here";
  absl::Status status = SqliteStore::Open({.data_dir = DataDir()}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
  EXPECT_THAT(status.message(), HasSubstr(DataDir() + "/tessera.db is read-only"));
}

TEST_F(SqliteStoreTest, OneStorePerDataDirectory) {
  std::unique_ptr<SqliteStore> first = MustOpen({.data_dir = DataDir()});
  ASSERT_NE(first, nullptr);
  absl::Status second = SqliteStore::Open({.data_dir = DataDir()}).status();
  EXPECT_EQ(second.code(), absl::StatusCode::kFailedPrecondition) << second;
  EXPECT_THAT(second.message(), HasSubstr("in use"));
  first.reset();
  EXPECT_NE(MustOpen({.data_dir = DataDir()}), nullptr);
}

TEST_F(SqliteStoreTest, FullQueueAnswersResourceExhausted) {
  WriterGate gate;
  std::unique_ptr<SqliteStore> store =
      MustOpen({.data_dir = DataDir(), .max_queued_txns = 2, .before_batch_for_test = gate.Hook()});
  ASSERT_NE(store, nullptr);
  absl::BlockingCounter committed(2);
  auto done = [&](absl::StatusOr<TxnResult> result) {
    EXPECT_TRUE(result.ok()) << result.status();
    committed.DecrementCount();
  };
  // The writer cannot take anything off the queue while the gate is closed.
  ASSERT_TRUE(store->CommitAsync(Txn::Unconditional({Op::Put("/a", "1")}), done).ok());
  ASSERT_TRUE(store->CommitAsync(Txn::Unconditional({Op::Put("/b", "1")}), done).ok());
  absl::Status refused = store->CommitAsync(Txn::Unconditional({Op::Put("/c", "1")}), [](auto) {
    ADD_FAILURE() << "a refused transaction was called back";
  });
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_EQ(store->Stats().queued, 2);
  gate.Release();
  committed.Wait();
  absl::StatusOr<std::optional<KeyValue>> c = store->Get("/c");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->has_value());
}

TEST_F(SqliteStoreTest, QueuedTransactionsCommitAsOneBatchInOrder) {
  constexpr int kTxns = 10;
  WriterGate gate;
  std::unique_ptr<SqliteStore> store =
      MustOpen({.data_dir = DataDir(), .before_batch_for_test = gate.Hook()});
  ASSERT_NE(store, nullptr);
  absl::BlockingCounter committed(kTxns);
  absl::Mutex mu;
  std::vector<std::pair<int, TxnResult>> results;
  for (int i = 0; i < kTxns; ++i) {
    // Each creates /leader if absent, else appends itself to /losers/.
    Txn txn{.compares = {Compare::Absent("/leader")},
            .success = {Op::Put("/leader", absl::StrCat(i))},
            .failure = {Op::Put(absl::StrCat("/losers/", i), "")}};
    ASSERT_TRUE(store
                    ->CommitAsync(std::move(txn),
                                  [&, i](absl::StatusOr<TxnResult> result) {
                                    ASSERT_TRUE(result.ok()) << result.status();
                                    absl::MutexLock lock(&mu);
                                    results.emplace_back(i, *result);
                                    committed.DecrementCount();
                                  })
                    .ok());
  }
  gate.Release();
  committed.Wait();
  SqliteStoreStats stats = store->Stats();
  EXPECT_EQ(stats.batches_committed, 1);
  EXPECT_EQ(stats.largest_batch, kTxns);
  EXPECT_EQ(stats.txns_committed, kTxns);
  // Queue order is revision order; only the first found /leader absent.
  ASSERT_EQ(results.size(), static_cast<size_t>(kTxns));
  for (const auto& [i, result] : results) {
    EXPECT_EQ(result.succeeded, i == 0) << i;
    EXPECT_EQ(result.revision, i + 1) << i;
  }
}

TEST_F(SqliteStoreTest, SlowWatcherCatchesUpWithoutLosingOrRepeatingEvents) {
  constexpr int kWrites = 300;
  std::unique_ptr<SqliteStore> store = MustOpen({.data_dir = DataDir(), .watch_buffer_events = 4});
  ASSERT_NE(store, nullptr);
  absl::StatusOr<std::unique_ptr<Watcher>> watcher = store->Watch("/k/", 0);
  ASSERT_TRUE(watcher.ok());
  for (int i = 0; i < kWrites; ++i) {
    ASSERT_TRUE(store
                    ->Commit(Txn::Unconditional({Op::Put(absl::StrCat("/k/", i % 5), "v"),
                                                 Op::Put(absl::StrCat("/other/", i), "v")}))
                    .ok());
  }
  std::vector<Revision> seen;
  while (seen.size() < static_cast<size_t>(kWrites)) {
    absl::StatusOr<std::vector<Event>> events = (*watcher)->Next(absl::Now() + absl::Seconds(60));
    ASSERT_TRUE(events.ok()) << events.status();
    ASSERT_FALSE(events->empty());
    for (const Event& event : *events) seen.push_back(event.revision());
  }
  ASSERT_EQ(seen.size(), static_cast<size_t>(kWrites));
  for (int i = 0; i < kWrites; ++i) EXPECT_EQ(seen[i], i + 1);
}

TEST_F(SqliteStoreTest, CompactionOvertakingALaggingWatcherEndsItWithOutOfRange) {
  std::unique_ptr<SqliteStore> store = MustOpen({.data_dir = DataDir(), .watch_buffer_events = 1});
  ASSERT_NE(store, nullptr);
  absl::StatusOr<std::unique_ptr<Watcher>> watcher = store->Watch("", 0);
  ASSERT_TRUE(watcher.ok());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(store->Commit(Txn::Unconditional({Op::Put("/k", "v")})).ok());
  }
  ASSERT_TRUE(store->Compact(5).ok());
  absl::StatusOr<std::vector<Event>> buffered = (*watcher)->Next();
  ASSERT_TRUE(buffered.ok());
  EXPECT_EQ(buffered->size(), 1u);
  absl::Status lagging = (*watcher)->Next().status();
  EXPECT_EQ(lagging.code(), absl::StatusCode::kOutOfRange) << lagging;
  EXPECT_THAT(lagging.message(), HasSubstr("list again"));
}

TEST_F(SqliteStoreTest, OversizedValueIsInvalidArgument) {
  std::unique_ptr<SqliteStore> store =
      MustOpen({.data_dir = DataDir(), .limits = {.max_value_bytes = 16}});
  ASSERT_NE(store, nullptr);
  absl::Status status =
      store->Commit(Txn::Unconditional({Op::Put("/k", std::string(17, 'x'))})).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("success[0].value"));
  // Callers read the bounds to refuse oversized input before they write.
  EXPECT_EQ(store->limits().max_value_bytes, 16u);
  EXPECT_EQ(store->limits().max_entries, TxnLimits{}.max_entries);
}

TEST_F(SqliteStoreTest, FullDatabaseFailsTheBatchAndAppliesNothingOfIt) {
  const std::string value(64 * 1024, 'x');
  std::unique_ptr<SqliteStore> store =
      MustOpen({.data_dir = DataDir(), .max_database_bytes = 1 << 20});
  ASSERT_NE(store, nullptr);
  Revision last = 0;
  absl::Status full;
  for (int i = 0; i < 100 && full.ok(); ++i) {
    absl::StatusOr<TxnResult> result = store->Commit(
        Txn::Unconditional({Op::Put(absl::StrCat("/k/", i), value), Op::Put("/last", "")}));
    if (result.ok()) last = result->revision;
    full = result.status();
  }
  ASSERT_EQ(full.code(), absl::StatusCode::kResourceExhausted) << full;
  ASSERT_GT(last, 0);
  // The refused transaction left no trace, and the revision did not move.
  absl::StatusOr<RangeResult> keys = store->Range({.prefix = "/k/"});
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->kvs.size(), static_cast<size_t>(last));
  EXPECT_EQ(keys->revision, last);
  // A full disk is not fatal: freeing space lets writes through again, at the next revision.
  absl::StatusOr<TxnResult> freed = store->Commit(Txn::Unconditional({Op::DeletePrefix("/k/")}));
  ASSERT_TRUE(freed.ok()) << freed.status();
  EXPECT_EQ(freed->revision, last + 1);
  store.reset();
  store = MustOpen({.data_dir = DataDir()});
  ASSERT_NE(store, nullptr);
  absl::StatusOr<TxnResult> after = store->Commit(Txn::Unconditional({Op::Put("/k/0", value)}));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->revision, last + 2);
}

TEST_F(SqliteStoreTest, NormalSyncModeStillCommits) {
  std::unique_ptr<SqliteStore> store =
      MustOpen({.data_dir = DataDir(), .sync = SqliteStoreOptions::Sync::kNormal});
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Commit(Txn::Unconditional({Op::Put("/k", "v")})).ok());
  store.reset();
  store = MustOpen({.data_dir = DataDir()});
  ASSERT_NE(store, nullptr);
  absl::StatusOr<std::optional<KeyValue>> kv = store->Get("/k");
  ASSERT_TRUE(kv.ok());
  EXPECT_TRUE(kv->has_value());
}

}  // namespace
}  // namespace tessera::store
