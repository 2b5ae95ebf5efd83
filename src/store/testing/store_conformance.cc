#include "store/testing/store_conformance.h"

#include <gmock/gmock.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

namespace tessera::store::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;

// Guards against a hang only; no test asserts how long anything takes.
constexpr absl::Duration kHangGuard = absl::Seconds(120);

TxnResult MustCommit(Store& store, Txn txn) {
  absl::StatusOr<TxnResult> result = store.Commit(std::move(txn));
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : TxnResult{};
}

Revision Put(Store& store, std::string key, std::string value) {
  return MustCommit(store, Txn::Unconditional({Op::Put(std::move(key), std::move(value))}))
      .revision;
}

std::optional<KeyValue> MustGet(Store& store, std::string_view key) {
  absl::StatusOr<std::optional<KeyValue>> kv = store.Get(key);
  EXPECT_TRUE(kv.ok()) << kv.status();
  return kv.ok() ? *kv : std::nullopt;
}

RangeResult MustRange(Store& store, RangeRequest request) {
  absl::StatusOr<RangeResult> result = store.Range(request);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : RangeResult{};
}

std::vector<std::string> Keys(const std::vector<KeyValue>& kvs) {
  std::vector<std::string> keys;
  for (const KeyValue& kv : kvs) keys.push_back(kv.key);
  return keys;
}

std::vector<Revision> Revisions(const std::vector<Event>& events) {
  std::vector<Revision> revisions;
  for (const Event& event : events) revisions.push_back(event.revision());
  return revisions;
}

std::unique_ptr<Watcher> MustWatch(Store& store, std::string_view prefix, Revision from) {
  absl::StatusOr<std::unique_ptr<Watcher>> watcher = store.Watch(prefix, from);
  EXPECT_TRUE(watcher.ok()) << watcher.status();
  return watcher.ok() ? std::move(*watcher) : nullptr;
}

// Reads events until one of revision >= `until` arrived (or the hang guard fires).
std::vector<Event> ReadUntil(Watcher& watcher, Revision until) {
  std::vector<Event> all;
  absl::Time deadline = absl::Now() + kHangGuard;
  while (all.empty() || all.back().revision() < until) {
    absl::StatusOr<std::vector<Event>> events = watcher.Next(deadline);
    if (!events.ok() || events->empty()) {
      ADD_FAILURE() << "watch ended before revision " << until << ": "
                    << (events.ok() ? "hang guard" : events.status().ToString());
      break;
    }
    all.insert(all.end(), events->begin(), events->end());
  }
  return all;
}

// Every event available right now, without blocking.
std::vector<Event> Poll(Watcher& watcher) {
  std::vector<Event> all;
  while (true) {
    absl::StatusOr<std::vector<Event>> events = watcher.Next(absl::InfinitePast());
    EXPECT_TRUE(events.ok()) << events.status();
    if (!events.ok() || events->empty()) return all;
    all.insert(all.end(), events->begin(), events->end());
  }
}

}  // namespace

std::string StoreBackendName(const ::testing::TestParamInfo<StoreBackend>& info) {
  return info.param.name;
}

void StoreConformanceTest::SetUp() {
  env_ = GetParam().make_environment();
  absl::StatusOr<std::unique_ptr<Store>> store = env_->Open();
  ASSERT_TRUE(store.ok()) << store.status();
  store_ = std::move(*store);
}

void StoreConformanceTest::Reopen() {
  store_.reset();
  absl::StatusOr<std::unique_ptr<Store>> store = env_->Open();
  ASSERT_TRUE(store.ok()) << store.status();
  store_ = std::move(*store);
}

// --- Keys and revisions ---------------------------------------------------------------------

TEST_P(StoreConformanceTest, EmptyStoreIsAtRevisionZero) {
  RangeResult all = MustRange(*store_, {});
  EXPECT_TRUE(all.kvs.empty());
  EXPECT_EQ(all.revision, 0);
  EXPECT_EQ(MustGet(*store_, "/missing"), std::nullopt);
}

TEST_P(StoreConformanceTest, PutCreatesTheKeyAtTheNextRevision) {
  EXPECT_EQ(Put(*store_, "/jobs/1", "spec"), 1);
  EXPECT_THAT(MustGet(*store_, "/jobs/1"), Optional(KeyValue{.key = "/jobs/1",
                                                             .value = "spec",
                                                             .create_revision = 1,
                                                             .mod_revision = 1,
                                                             .version = 1}));
}

TEST_P(StoreConformanceTest, OverwriteKeepsCreateRevisionAndCountsVersions) {
  Put(*store_, "/a", "1");
  Put(*store_, "/b", "1");
  EXPECT_EQ(Put(*store_, "/a", "2"), 3);
  EXPECT_THAT(
      MustGet(*store_, "/a"),
      Optional(KeyValue{
          .key = "/a", .value = "2", .create_revision = 1, .mod_revision = 3, .version = 2}));
}

TEST_P(StoreConformanceTest, DeletedKeyStartsANewLifeWhenPutAgain) {
  Put(*store_, "/a", "1");
  TxnResult deleted = MustCommit(*store_, Txn::Unconditional({Op::Delete("/a")}));
  EXPECT_EQ(deleted.revision, 2);
  EXPECT_EQ(deleted.deleted, 1);
  EXPECT_EQ(MustGet(*store_, "/a"), std::nullopt);
  Put(*store_, "/a", "again");
  EXPECT_THAT(
      MustGet(*store_, "/a"),
      Optional(KeyValue{
          .key = "/a", .value = "again", .create_revision = 3, .mod_revision = 3, .version = 1}));
}

TEST_P(StoreConformanceTest, EmptyAndBinaryValuesRoundTrip) {
  std::string binary("\0\x01\xff\0tail", 8);
  binary += std::string(1 << 20, '\xab');
  Put(*store_, "/empty", "");
  Put(*store_, "/binary", binary);
  EXPECT_THAT(MustGet(*store_, "/empty"), Optional(::testing::Field(&KeyValue::value, "")));
  EXPECT_THAT(MustGet(*store_, "/binary"), Optional(::testing::Field(&KeyValue::value, binary)));
}

TEST_P(StoreConformanceTest, AllChangesOfATransactionShareOneRevision) {
  Put(*store_, "/c", "old");
  TxnResult result = MustCommit(
      *store_, Txn::Unconditional({Op::Put("/a", "1"), Op::Put("/b", "2"), Op::Delete("/c")}));
  EXPECT_TRUE(result.succeeded);
  EXPECT_EQ(result.revision, 2);
  EXPECT_EQ(result.deleted, 1);
  EXPECT_EQ(MustGet(*store_, "/a")->mod_revision, 2);
  EXPECT_EQ(MustGet(*store_, "/b")->mod_revision, 2);
  EXPECT_EQ(MustGet(*store_, "/c"), std::nullopt);
}

TEST_P(StoreConformanceTest, TransactionThatChangesNothingKeepsTheRevision) {
  Put(*store_, "/a", "1");
  TxnResult read_only = MustCommit(*store_, Txn{.compares = {Compare::Exists("/a")}});
  EXPECT_TRUE(read_only.succeeded);
  EXPECT_EQ(read_only.revision, 1);
  TxnResult no_op = MustCommit(*store_, Txn::Unconditional({Op::Delete("/missing")}));
  EXPECT_EQ(no_op.revision, 1);
  EXPECT_EQ(no_op.deleted, 0);
  EXPECT_EQ(Put(*store_, "/b", "1"), 2);
}

// --- Compares -------------------------------------------------------------------------------

TEST_P(StoreConformanceTest, ComparesChooseTheBranch) {
  Put(*store_, "/k", "v1");
  Put(*store_, "/k", "v2");  // create_revision 1, mod_revision 2, version 2
  using T = Compare::Target;
  using R = Compare::Relation;
  struct Case {
    std::string name;
    std::vector<Compare> compares;
    bool succeeded;
  };
  const std::vector<Case> cases = {
      {"no compares", {}, true},
      {"exists", {Compare::Exists("/k")}, true},
      {"exists on missing", {Compare::Exists("/missing")}, false},
      {"absent", {Compare::Absent("/k")}, false},
      {"absent on missing", {Compare::Absent("/missing")}, true},
      {"mod revision current", {Compare::ModRevisionIs("/k", 2)}, true},
      {"mod revision stale", {Compare::ModRevisionIs("/k", 1)}, false},
      {"mod revision 0 on missing", {Compare::ModRevisionIs("/missing", 0)}, true},
      {"value equal", {Compare::ValueIs("/k", "v2")}, true},
      {"value different", {Compare::ValueIs("/k", "v1")}, false},
      {"value on missing", {Compare::ValueIs("/missing", "")}, false},
      {"value not equal on missing",
       {{.key = "/missing", .target = T::kValue, .relation = R::kNotEqual, .value = "x"}},
       false},
      {"version greater",
       {{.key = "/k", .target = T::kVersion, .relation = R::kGreater, .number = 1}},
       true},
      {"create revision less",
       {{.key = "/k", .target = T::kCreateRevision, .relation = R::kLess, .number = 1}},
       false},
      {"mod revision not equal",
       {{.key = "/k", .target = T::kModRevision, .relation = R::kNotEqual, .number = 2}},
       false},
      {"all must hold", {Compare::Exists("/k"), Compare::Absent("/k")}, false},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    std::string ok_key = absl::StrCat("/ok/", i);
    std::string fail_key = absl::StrCat("/fail/", i);
    TxnResult result = MustCommit(*store_, Txn{.compares = c.compares,
                                               .success = {Op::Put(ok_key, "")},
                                               .failure = {Op::Put(fail_key, "")}});
    EXPECT_EQ(result.succeeded, c.succeeded) << c.name;
    EXPECT_EQ(MustGet(*store_, ok_key).has_value(), c.succeeded) << c.name;
    EXPECT_EQ(MustGet(*store_, fail_key).has_value(), !c.succeeded) << c.name;
  }
}

TEST_P(StoreConformanceTest, FailedCompareIsNotAnErrorAndChangesNothing) {
  Revision first = Put(*store_, "/k", "v1");
  Put(*store_, "/k", "v2");
  absl::StatusOr<TxnResult> stale = store_->Commit(
      Txn{.compares = {Compare::ModRevisionIs("/k", first)}, .success = {Op::Put("/k", "v3")}});
  ASSERT_TRUE(stale.ok()) << stale.status();
  EXPECT_FALSE(stale->succeeded);
  EXPECT_EQ(stale->revision, 2);
  EXPECT_EQ(MustGet(*store_, "/k")->value, "v2");
}

TEST_P(StoreConformanceTest, MalformedTransactionsAreInvalidArgumentAndWriteNothing) {
  const Txn txns[] = {
      Txn::Unconditional({Op::Put("", "v")}),
      Txn::Unconditional({Op::Put("/a", "1"), Op::Put("/a", "2")}),
      Txn::Unconditional({Op::Put("/jobs/1", "1"), Op::DeletePrefix("/jobs/")}),
      Txn::Unconditional({Op::DeletePrefix("")}),
      Txn{.compares = {Compare::Exists("")}},
  };
  for (const Txn& txn : txns) {
    EXPECT_EQ(store_->Commit(txn).status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(MustRange(*store_, {}).revision, 0);
}

// --- Delete-prefix and Range ----------------------------------------------------------------

TEST_P(StoreConformanceTest, DeletePrefixDeletesExactlyThePrefix) {
  for (const char* key : {"/job", "/jobs/1", "/jobs/2", "/jobs/2/tasks/0", "/jobs0", "/jobsx"}) {
    Put(*store_, key, "");
  }
  TxnResult result = MustCommit(*store_, Txn::Unconditional({Op::DeletePrefix("/jobs/")}));
  EXPECT_EQ(result.deleted, 3);
  EXPECT_THAT(Keys(MustRange(*store_, {}).kvs), ElementsAre("/job", "/jobs0", "/jobsx"));
}

TEST_P(StoreConformanceTest, RangeReturnsThePrefixInBytewiseOrder) {
  const std::string high = "/jobs/\xff";
  for (const std::string& key :
       {std::string("/jobs/b"), high, std::string("/jobs/a"), std::string("/jobs/a/x"),
        std::string("/jobs0"), std::string("/nodes/a")}) {
    Put(*store_, key, "v");
  }
  RangeResult jobs = MustRange(*store_, {.prefix = "/jobs/"});
  EXPECT_THAT(Keys(jobs.kvs), ElementsAre("/jobs/a", "/jobs/a/x", "/jobs/b", high));
  EXPECT_FALSE(jobs.more);
  EXPECT_EQ(jobs.revision, 6);
  EXPECT_THAT(Keys(MustRange(*store_, {.prefix = high}).kvs), ElementsAre(high));
  EXPECT_EQ(MustRange(*store_, {}).kvs.size(), 6u);
}

TEST_P(StoreConformanceTest, RangePagesWithLimitAndAfter) {
  std::vector<std::string> expected;
  for (int i = 0; i < 10; ++i) {
    expected.push_back(absl::StrCat("/p/", i));
    Put(*store_, expected.back(), "v");
  }
  Put(*store_, "/q", "outside");
  std::vector<std::string> seen;
  std::string after;
  int pages = 0;
  while (true) {
    RangeResult page = MustRange(*store_, {.prefix = "/p/", .limit = 3, .after = after});
    ++pages;
    ASSERT_LE(page.kvs.size(), 3u);
    for (const KeyValue& kv : page.kvs) seen.push_back(kv.key);
    if (!page.more) break;
    after = page.kvs.back().key;
  }
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(pages, 4);
  RangeResult exact = MustRange(*store_, {.prefix = "/p/", .limit = 10});
  EXPECT_EQ(exact.kvs.size(), 10u);
  EXPECT_FALSE(exact.more);
}

TEST_P(StoreConformanceTest, NegativeLimitIsInvalid) {
  EXPECT_EQ(store_->Range({.limit = -1}).status().code(), absl::StatusCode::kInvalidArgument);
}

// --- Watch ----------------------------------------------------------------------------------

TEST_P(StoreConformanceTest, WatchFromNowSeesEveryChangeUnderThePrefixInOrder) {
  Put(*store_, "/jobs/0", "before");
  std::unique_ptr<Watcher> watcher = MustWatch(*store_, "/jobs/", 0);
  ASSERT_NE(watcher, nullptr);
  Put(*store_, "/jobs/1", "a");
  Put(*store_, "/nodes/1", "x");
  MustCommit(*store_, Txn::Unconditional({Op::Put("/jobs/2", "b"), Op::Delete("/jobs/1")}));
  MustCommit(*store_, Txn::Unconditional({Op::DeletePrefix("/jobs/")}));
  std::vector<Event> events = ReadUntil(*watcher, 5);
  const std::vector<Event> expected = {
      {.type = Event::Type::kPut,
       .kv =
           {.key = "/jobs/1", .value = "a", .create_revision = 2, .mod_revision = 2, .version = 1}},
      {.type = Event::Type::kPut,
       .kv =
           {.key = "/jobs/2", .value = "b", .create_revision = 4, .mod_revision = 4, .version = 1}},
      {.type = Event::Type::kDelete, .kv = {.key = "/jobs/1", .mod_revision = 4}},
      {.type = Event::Type::kDelete, .kv = {.key = "/jobs/0", .mod_revision = 5}},
      {.type = Event::Type::kDelete, .kv = {.key = "/jobs/2", .mod_revision = 5}},
  };
  EXPECT_EQ(events, expected);
}

TEST_P(StoreConformanceTest, WatchFromAPastRevisionReplaysHistoryThenFollows) {
  for (int i = 1; i <= 5; ++i) Put(*store_, absl::StrCat("/k/", i), "v");
  std::unique_ptr<Watcher> watcher = MustWatch(*store_, "/k/", 3);
  ASSERT_NE(watcher, nullptr);
  EXPECT_THAT(Revisions(ReadUntil(*watcher, 5)), ElementsAre(3, 4, 5));
  Put(*store_, "/k/6", "v");
  EXPECT_THAT(Revisions(ReadUntil(*watcher, 6)), ElementsAre(6));
}

TEST_P(StoreConformanceTest, WatchResumesFromTheLastSeenRevisionPlusOne) {
  std::unique_ptr<Watcher> first = MustWatch(*store_, "", 0);
  ASSERT_NE(first, nullptr);
  for (int i = 0; i < 4; ++i) Put(*store_, "/k", absl::StrCat(i));
  std::vector<Event> seen = ReadUntil(*first, 2);
  first.reset();
  Revision last = seen.back().revision();
  for (int i = 4; i < 8; ++i) Put(*store_, "/k", absl::StrCat(i));
  std::unique_ptr<Watcher> resumed = MustWatch(*store_, "", last + 1);
  ASSERT_NE(resumed, nullptr);
  for (const Event& event : ReadUntil(*resumed, 8)) seen.push_back(event);
  EXPECT_THAT(Revisions(seen), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
  EXPECT_EQ(seen.back().kv.value, "7");
}

TEST_P(StoreConformanceTest, WatchFromAFutureRevisionWaitsForIt) {
  Put(*store_, "/k", "1");
  std::unique_ptr<Watcher> watcher = MustWatch(*store_, "", 3);
  ASSERT_NE(watcher, nullptr);
  Put(*store_, "/k", "2");
  EXPECT_TRUE(Poll(*watcher).empty());
  Put(*store_, "/k", "3");
  EXPECT_THAT(Revisions(ReadUntil(*watcher, 3)), ElementsAre(3));
}

TEST_P(StoreConformanceTest, WatchIsExactlyOnceWhileWritersRun) {
  constexpr int kWrites = 400;
  for (int i = 0; i < 50; ++i) Put(*store_, absl::StrCat("/w/", i % 7), absl::StrCat(i));
  std::thread writer([this] {
    for (int i = 50; i < kWrites; ++i) Put(*store_, absl::StrCat("/w/", i % 7), absl::StrCat(i));
  });
  // Starts in the past while the writer runs: history, then live events, with no seam.
  std::unique_ptr<Watcher> watcher = MustWatch(*store_, "/w/", 1);
  ASSERT_NE(watcher, nullptr);
  std::vector<Event> events = ReadUntil(*watcher, kWrites);
  writer.join();
  ASSERT_EQ(events.size(), static_cast<size_t>(kWrites));
  for (int i = 0; i < kWrites; ++i) {
    EXPECT_EQ(events[i].revision(), i + 1);
    EXPECT_EQ(events[i].kv.value, absl::StrCat(i));
  }
}

TEST_P(StoreConformanceTest, HistorySurvivesAReopen) {
  Put(*store_, "/a", "1");
  Put(*store_, "/a", "2");
  Reopen();
  std::unique_ptr<Watcher> watcher = MustWatch(*store_, "", 1);
  ASSERT_NE(watcher, nullptr);
  EXPECT_THAT(Revisions(ReadUntil(*watcher, 2)), ElementsAre(1, 2));
  EXPECT_EQ(Put(*store_, "/a", "3"), 3);
  EXPECT_THAT(Revisions(ReadUntil(*watcher, 3)), ElementsAre(3));
}

TEST_P(StoreConformanceTest, CancelEndsABlockedWatch) {
  std::unique_ptr<Watcher> watcher = MustWatch(*store_, "", 0);
  ASSERT_NE(watcher, nullptr);
  absl::StatusCode code = absl::StatusCode::kOk;
  std::thread consumer([&] { code = watcher->Next(absl::Now() + kHangGuard).status().code(); });
  watcher->Cancel();
  consumer.join();
  EXPECT_EQ(code, absl::StatusCode::kCancelled);
  EXPECT_EQ(watcher->Next().status().code(), absl::StatusCode::kCancelled);
}

TEST_P(StoreConformanceTest, WatcherOutlivingItsStoreEndsUnavailable) {
  std::unique_ptr<Watcher> watcher = MustWatch(*store_, "", 0);
  ASSERT_NE(watcher, nullptr);
  store_.reset();
  EXPECT_EQ(watcher->Next(absl::Now() + kHangGuard).status().code(),
            absl::StatusCode::kUnavailable);
}

TEST_P(StoreConformanceTest, NegativeWatchRevisionIsInvalid) {
  EXPECT_EQ(store_->Watch("", -1).status().code(), absl::StatusCode::kInvalidArgument);
}

// --- Compaction -----------------------------------------------------------------------------

TEST_P(StoreConformanceTest, CompactDiscardsHistoryBeforeTheRevisionOnly) {
  for (int i = 1; i <= 5; ++i) Put(*store_, absl::StrCat("/k/", i), "v");
  ASSERT_TRUE(store_->Compact(3).ok());
  absl::StatusOr<std::unique_ptr<Watcher>> compacted = store_->Watch("", 2);
  EXPECT_EQ(compacted.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(compacted.status().message(), HasSubstr("compacted"));
  std::unique_ptr<Watcher> watcher = MustWatch(*store_, "", 3);
  ASSERT_NE(watcher, nullptr);
  EXPECT_THAT(Revisions(ReadUntil(*watcher, 5)), ElementsAre(3, 4, 5));
  // Current keys are untouched.
  EXPECT_EQ(MustRange(*store_, {}).kvs.size(), 5u);
  EXPECT_EQ(MustGet(*store_, "/k/1")->mod_revision, 1);
}

TEST_P(StoreConformanceTest, CompactRefusesTheFutureAndThePast) {
  for (int i = 1; i <= 5; ++i) Put(*store_, "/k", "v");
  EXPECT_EQ(store_->Compact(6).code(), absl::StatusCode::kOutOfRange);
  ASSERT_TRUE(store_->Compact(4).ok());
  EXPECT_EQ(store_->Compact(4).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(store_->Compact(2).code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(store_->Compact(5).ok());
}

TEST_P(StoreConformanceTest, CompactionSurvivesAReopen) {
  for (int i = 1; i <= 3; ++i) Put(*store_, "/k", "v");
  ASSERT_TRUE(store_->Compact(3).ok());
  Reopen();
  EXPECT_EQ(store_->Watch("", 2).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(Put(*store_, "/k", "v"), 4);
}

// --- Concurrency ----------------------------------------------------------------------------

TEST_P(StoreConformanceTest, ConcurrentCompareAndPutIncrementsLoseNothing) {
  constexpr int kThreads = 8;
  constexpr int kAttempts = 40;
  Put(*store_, "/counter", "0");
  std::atomic<int> successes{0};
  absl::Mutex mu;
  std::vector<Revision> revisions;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kAttempts; ++i) {
        std::optional<KeyValue> kv = MustGet(*store_, "/counter");
        int value = 0;
        ASSERT_TRUE(kv && absl::SimpleAtoi(kv->value, &value));
        TxnResult result = MustCommit(
            *store_, Txn{.compares = {Compare::ModRevisionIs("/counter", kv->mod_revision)},
                         .success = {Op::Put("/counter", absl::StrCat(value + 1))}});
        if (!result.succeeded) continue;
        successes.fetch_add(1);
        absl::MutexLock lock(&mu);
        revisions.push_back(result.revision);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::optional<KeyValue> counter = MustGet(*store_, "/counter");
  ASSERT_TRUE(counter.has_value());
  EXPECT_EQ(counter->value, absl::StrCat(successes.load()));
  EXPECT_EQ(counter->version, successes.load() + 1);
  EXPECT_GT(successes.load(), 0);
  std::sort(revisions.begin(), revisions.end());
  EXPECT_EQ(std::adjacent_find(revisions.begin(), revisions.end()), revisions.end());
}

TEST_P(StoreConformanceTest, CreateIfAbsentHasExactlyOneWinner) {
  constexpr int kThreads = 16;
  std::atomic<int> winners{0};
  std::atomic<int> winner{-1};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      TxnResult result = MustCommit(*store_, Txn{.compares = {Compare::Absent("/leader")},
                                                 .success = {Op::Put("/leader", absl::StrCat(t))}});
      if (result.succeeded) {
        winners.fetch_add(1);
        winner.store(t);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(winners.load(), 1);
  EXPECT_EQ(MustGet(*store_, "/leader")->value, absl::StrCat(winner.load()));
}

TEST_P(StoreConformanceTest, CommitAsyncCallsBackExactlyOnceAfterCommit) {
  constexpr int kTxns = 100;
  absl::BlockingCounter pending(kTxns);
  absl::Mutex mu;
  std::vector<Revision> revisions;
  for (int i = 0; i < kTxns; ++i) {
    absl::Status admitted =
        store_->CommitAsync(Txn::Unconditional({Op::Put(absl::StrCat("/async/", i), "v")}),
                            [&](absl::StatusOr<TxnResult> result) {
                              EXPECT_TRUE(result.ok()) << result.status();
                              {
                                absl::MutexLock lock(&mu);
                                revisions.push_back(result.ok() ? result->revision : 0);
                              }
                              pending.DecrementCount();
                            });
    ASSERT_TRUE(admitted.ok()) << admitted;
  }
  pending.Wait();
  // Queued transactions may share a revision (store.h); each key carries its own's.
  ASSERT_EQ(revisions.size(), static_cast<size_t>(kTxns));
  std::sort(revisions.begin(), revisions.end());
  EXPECT_GE(revisions.front(), 1);
  EXPECT_LE(revisions.back(), kTxns);
  const RangeResult stored = MustRange(*store_, {.prefix = "/async/"});
  ASSERT_EQ(stored.kvs.size(), static_cast<size_t>(kTxns));
  std::vector<Revision> stored_revisions;
  for (const KeyValue& kv : stored.kvs) stored_revisions.push_back(kv.mod_revision);
  std::sort(stored_revisions.begin(), stored_revisions.end());
  EXPECT_EQ(stored_revisions, revisions);
}

TEST_P(StoreConformanceTest, QueuedTransactionsSeeTheOnesQueuedBefore) {
  Txn needs_a = Txn::Unconditional({Op::Put("/seq/b", "2")});
  needs_a.compares.push_back(Compare::ValueIs("/seq/a", "1"));
  Txn never = Txn::Unconditional({Op::Put("/seq/never", "x")});
  never.compares.push_back(Compare::ValueIs("/seq/missing", "x"));
  std::vector<Txn> txns;
  txns.push_back(Txn::Unconditional({Op::Put("/seq/a", "1")}));
  txns.push_back(std::move(needs_a));                            // sees the put before it
  txns.push_back(Txn::Unconditional({Op::Put("/seq/c", "3")}));  // independent
  txns.push_back(std::move(never));                              // its compare fails alone
  txns.push_back(Txn::Unconditional({Op::Put("/seq/d", "4")}));  // independent
  txns.push_back(Txn::Unconditional({Op::Put("/seq/a", "5")}));  // the later put wins
  const size_t count = txns.size();
  absl::BlockingCounter pending(static_cast<int>(count));
  absl::Mutex mu;
  std::vector<std::optional<TxnResult>> results(count);
  for (size_t i = 0; i < count; ++i) {
    ASSERT_TRUE(store_
                    ->CommitAsync(std::move(txns[i]),
                                  [&, i](absl::StatusOr<TxnResult> result) {
                                    EXPECT_TRUE(result.ok()) << result.status();
                                    {
                                      absl::MutexLock lock(&mu);
                                      if (result.ok()) results[i] = *result;
                                    }
                                    pending.DecrementCount();
                                  })
                    .ok());
  }
  pending.Wait();
  for (size_t i = 0; i < count; ++i) {
    ASSERT_TRUE(results[i].has_value()) << i;
    EXPECT_EQ(results[i]->succeeded, i != 3) << i;
  }
  EXPECT_EQ(MustGet(*store_, "/seq/a")->value, "5");
  EXPECT_EQ(MustGet(*store_, "/seq/b")->value, "2");
  EXPECT_FALSE(MustGet(*store_, "/seq/never").has_value());
  for (size_t i = 1; i < count; ++i) {
    if (i != 3) EXPECT_LE(results[i - 1]->revision, results[i]->revision) << i;
  }
}

// --- Durability -----------------------------------------------------------------------------

TEST_P(StoreConformanceTest, ReopenKeepsKeysAndContinuesRevisions) {
  Put(*store_, "/a", "1");
  Put(*store_, "/b", "2");
  MustCommit(*store_, Txn::Unconditional({Op::Delete("/b")}));
  Reopen();
  EXPECT_THAT(
      MustGet(*store_, "/a"),
      Optional(KeyValue{
          .key = "/a", .value = "1", .create_revision = 1, .mod_revision = 1, .version = 1}));
  EXPECT_EQ(MustGet(*store_, "/b"), std::nullopt);
  EXPECT_EQ(MustRange(*store_, {}).revision, 3);
  EXPECT_EQ(Put(*store_, "/c", "3"), 4);
}

namespace {

constexpr int kCrashWriters = 4;

// The child of the crash test: writers commit fresh keys and counter increments as fast as
// they can and report each acknowledged write on `ack_fd`, until SIGKILL ends the process.
// Lines: "P <key> <revision>" for a put, "C <value> <revision>" for a counter increment.
[[noreturn]] void RunCrashChild(StoreTestEnvironment& env, int ack_fd) {
  auto report = [ack_fd](const std::string& line) {
    // One write() of fewer than PIPE_BUF bytes: lines never interleave.
    if (write(ack_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(3);
  };
  absl::StatusOr<std::unique_ptr<Store>> store = env.Open();
  if (!store.ok()) {
    report(absl::StrCat("E ", store.status().ToString(), "\n"));
    _exit(2);
  }
  std::vector<std::thread> writers;
  for (int t = 0; t < kCrashWriters; ++t) {
    writers.emplace_back([&store, &report, t] {
      for (int i = 0;; ++i) {
        std::string key = absl::StrCat("/crash/", t, "/", i);
        absl::StatusOr<TxnResult> put =
            (*store)->Commit(Txn::Unconditional({Op::Put(key, absl::StrCat("value-", i))}));
        if (!put.ok()) report(absl::StrCat("E ", put.status().ToString(), "\n"));
        if (put.ok()) report(absl::StrCat("P ", key, " ", put->revision, "\n"));
        absl::StatusOr<std::optional<KeyValue>> counter = (*store)->Get("/crash/counter");
        if (!counter.ok()) continue;
        int value = 0;
        if (counter->has_value() && !absl::SimpleAtoi((*counter)->value, &value)) continue;
        Revision seen = counter->has_value() ? (*counter)->mod_revision : 0;
        absl::StatusOr<TxnResult> increment =
            (*store)->Commit(Txn{.compares = {Compare::ModRevisionIs("/crash/counter", seen)},
                                 .success = {Op::Put("/crash/counter", absl::StrCat(value + 1))}});
        if (increment.ok() && increment->succeeded) {
          report(absl::StrCat("C ", value + 1, " ", increment->revision, "\n"));
        }
      }
    });
  }
  for (std::thread& writer : writers) writer.join();  // never: the parent kills the process
  _exit(0);
}

}  // namespace

TEST_P(StoreConformanceTest, CrashLosesNoAcknowledgedWrite) {
  if (!GetParam().usable_after_fork) {
    GTEST_SKIP() << GetParam().name << "'s client cannot run in a forked child; its own tests "
                 << "kill the server instead";
  }
  constexpr int kAcksBeforeKill = 300;
  store_.reset();  // no store thread may run across fork()
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    RunCrashChild(*env_, fds[1]);
  }
  close(fds[1]);

  std::map<std::string, Revision> puts;
  int counter_value = 0;
  Revision counter_revision = 0;
  Revision max_revision = 0;
  int acks = 0;
  bool killed = false;
  std::string pending;
  absl::Time deadline = absl::Now() + kHangGuard;
  while (true) {
    if (!killed && (acks >= kAcksBeforeKill || absl::Now() > deadline)) {
      // Mid-stream: the writers are still committing.
      ASSERT_EQ(kill(child, SIGKILL), 0);
      killed = true;
    }
    pollfd poll_fd{.fd = fds[0], .events = POLLIN};
    if (poll(&poll_fd, 1, 1000) == 0) continue;  // nothing yet: check the hang guard again
    char buffer[4096];
    ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // every writer end is closed: the child is gone
    pending.append(buffer, static_cast<size_t>(n));
    size_t newline;
    while ((newline = pending.find('\n')) != std::string::npos) {
      std::vector<std::string> fields = absl::StrSplit(pending.substr(0, newline), ' ');
      pending.erase(0, newline + 1);
      ASSERT_NE(fields[0], "E") << "the child failed: " << absl::StrJoin(fields, " ");
      ASSERT_EQ(fields.size(), 3u);
      Revision revision = 0;
      ASSERT_TRUE(absl::SimpleAtoi(fields[2], &revision));
      max_revision = std::max(max_revision, revision);
      ++acks;
      if (fields[0] == "P") puts[fields[1]] = revision;
      int value = 0;
      if (fields[0] == "C" && absl::SimpleAtoi(fields[1], &value) && value > counter_value) {
        counter_value = value;
        counter_revision = revision;
      }
    }
  }
  close(fds[0]);
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL)
      << "the child ended otherwise: status " << wait_status;
  ASSERT_GE(acks, kAcksBeforeKill) << "the child wrote too little before the hang guard";

  Reopen();
  for (const auto& [key, revision] : puts) {
    std::optional<KeyValue> kv = MustGet(*store_, key);
    ASSERT_TRUE(kv.has_value()) << "acknowledged " << key << " at revision " << revision
                                << " is lost";
    EXPECT_EQ(kv->mod_revision, revision) << key;
  }
  std::optional<KeyValue> counter = MustGet(*store_, "/crash/counter");
  ASSERT_TRUE(counter.has_value());
  int stored = 0;
  ASSERT_TRUE(absl::SimpleAtoi(counter->value, &stored));
  EXPECT_GE(stored, counter_value);
  EXPECT_GE(counter->mod_revision, counter_revision);
  RangeResult all = MustRange(*store_, {.limit = 1});
  EXPECT_GE(all.revision, max_revision);
  // The recovered store takes writes at the next revision.
  EXPECT_EQ(Put(*store_, "/after-crash", "v"), all.revision + 1);
}

}  // namespace tessera::store::testing
