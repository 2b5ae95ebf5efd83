// Write throughput of the SQLite state store: committed transactions per second with 1, 8 and
// 64 concurrent writers, with group commit and without it (one SQLite transaction, and so one
// WAL sync, per store transaction), plus what one thread reaches by pipelining CommitAsync —
// the way the scheduling loop hands decisions to the store.
//
// Each transaction puts one 512-byte value (about a job record) under its writer's prefix.
// The data directory is created under $TESSERA_BENCH_DIR, else the system temporary directory;
// it must be on a real disk (on tmpfs a sync costs nothing and the numbers mean little).
//
//   build/bench/store_benchmark
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "pipelined_commits.h"
#include "store/sqlite/sqlite_store.h"

namespace tessera::store {
namespace {

constexpr int kKeysPerWriter = 1000;
const std::string kValue(512, 'v');

std::string MakeDataDir() {
  const char* base = getenv("TESSERA_BENCH_DIR");
  std::string pattern =
      (std::filesystem::path(base != nullptr ? base : std::filesystem::temp_directory_path()) /
       "tessera-store-bench-XXXXXX");
  return mkdtemp(pattern.data());
}

enum class Mode { kNoGroupCommit, kGroupCommit, kGroupCommitNormalSync };

// Shared by the benchmark's threads: opened by thread 0 before the timed loop (Google
// Benchmark starts every thread's loop together), closed by it after.
std::unique_ptr<SqliteStore> store;
std::string data_dir;

template <Mode mode>
void BM_Commit(benchmark::State& state) {
  if (state.thread_index() == 0) {
    data_dir = MakeDataDir();
    absl::StatusOr<std::unique_ptr<SqliteStore>> opened = SqliteStore::Open(
        {.data_dir = data_dir,
         .sync = mode == Mode::kGroupCommitNormalSync ? SqliteStoreOptions::Sync::kNormal
                                                      : SqliteStoreOptions::Sync::kFull,
         .max_batch_txns = mode == Mode::kNoGroupCommit ? size_t{1} : size_t{1000}});
    if (!opened.ok()) state.SkipWithError(opened.status().ToString().c_str());
    store = opened.ok() ? std::move(*opened) : nullptr;
  }
  const std::string prefix = absl::StrCat("/bench/", state.thread_index(), "/");
  int64_t i = 0;
  for (auto _ : state) {
    if (store == nullptr) break;
    absl::StatusOr<TxnResult> result = store->Commit(
        Txn::Unconditional({Op::Put(absl::StrCat(prefix, i++ % kKeysPerWriter), kValue)}));
    if (!result.ok()) {
      state.SkipWithError(result.status().ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0 && store != nullptr) {
    SqliteStoreStats stats = store->Stats();
    state.counters["txns_per_batch"] =
        static_cast<double>(stats.txns_committed) / static_cast<double>(stats.batches_committed);
    store.reset();
    std::filesystem::remove_all(data_dir);
  }
}

// One thread keeps up to `window` transactions in flight with CommitAsync.
void BM_CommitAsyncPipelined(benchmark::State& state) {
  const int64_t window = state.range(0);
  std::string dir = MakeDataDir();
  absl::StatusOr<std::unique_ptr<SqliteStore>> opened = SqliteStore::Open({.data_dir = dir});
  if (!opened.ok()) {
    state.SkipWithError(opened.status().ToString().c_str());
    return;
  }
  CommitPipelined(state, **opened, window, kKeysPerWriter);
  SqliteStoreStats stats = (*opened)->Stats();
  state.counters["txns_per_batch"] =
      static_cast<double>(stats.txns_committed) / static_cast<double>(stats.batches_committed);
  opened->reset();
  std::filesystem::remove_all(dir);
}

BENCHMARK_TEMPLATE(BM_Commit, Mode::kNoGroupCommit)
    ->Name("Commit/no_group_commit")
    ->Threads(1)
    ->Threads(8)
    ->Threads(64)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_Commit, Mode::kGroupCommit)
    ->Name("Commit/group_commit")
    ->Threads(1)
    ->Threads(8)
    ->Threads(64)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_Commit, Mode::kGroupCommitNormalSync)
    ->Name("Commit/group_commit_sync_normal")
    ->Threads(1)
    ->Threads(8)
    ->Threads(64)
    ->UseRealTime();
BENCHMARK(BM_CommitAsyncPipelined)->Name("CommitAsync/pipelined")->Arg(1000)->UseRealTime();

}  // namespace
}  // namespace tessera::store

BENCHMARK_MAIN();
