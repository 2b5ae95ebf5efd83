// Write throughput of the etcd state store (src/store/etcd/etcd_store.h), the same measures as
// store_benchmark.cc takes of SQLite: committed transactions per second with 1, 8 and 64
// concurrent writers each waiting for its commit, and one thread pipelining CommitAsync (at
// most 1,000 in flight) — the way the scheduling loop hands decisions to the store.
//
// Each benchmark starts a real etcd on loopback (Debian's etcd-server; src/store/etcd/testing/
// etcd_process.h) with 1 or 3 members, each on this machine's disk under /tmp, and puts one
// 512-byte value (about a job record) per transaction under its writer's prefix.
//
//   build/bench/etcd_store_benchmark
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "pipelined_commits.h"
#include "store/etcd/etcd_store.h"
#include "store/etcd/testing/etcd_process.h"

namespace tessera::store {
namespace {

constexpr int kKeysPerWriter = 1000;
const std::string kValue(512, 'v');

// One etcd cluster per member count, started when a benchmark first needs it and kept until
// the program ends (Google Benchmark calls each benchmark several times). Set up by thread 0
// before the timed loop; Google Benchmark starts every thread's loop together.
struct Cluster {
  std::unique_ptr<testing::EtcdProcess> etcd;
  std::unique_ptr<EtcdStore> store;
  std::string error;
};
std::map<int, Cluster> clusters;
EtcdStore* store = nullptr;

// Sets `store` to a store on `members` etcd members; an error string, or "" when ready.
std::string UseCluster(int members) {
  Cluster& cluster = clusters[members];
  if (cluster.store == nullptr && cluster.error.empty()) {
    absl::StatusOr<std::unique_ptr<testing::EtcdProcess>> started =
        testing::EtcdProcess::Start(members);
    if (!started.ok()) {
      cluster.error = started.status().ToString();
    } else {
      cluster.etcd = std::move(*started);
      absl::StatusOr<std::unique_ptr<EtcdStore>> opened =
          EtcdStore::Open({.endpoints = cluster.etcd->endpoints()});
      if (opened.ok()) {
        cluster.store = std::move(*opened);
      } else {
        cluster.error = opened.status().ToString();
      }
    }
  }
  store = cluster.store.get();
  return cluster.error;
}

void BM_Commit(benchmark::State& state) {
  if (state.thread_index() == 0) {
    if (std::string error = UseCluster(static_cast<int>(state.range(0))); !error.empty()) {
      state.SkipWithError(error.c_str());
    }
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
}

// One thread keeps up to 1,000 transactions in flight with CommitAsync.
void BM_CommitAsyncPipelined(benchmark::State& state) {
  if (std::string error = UseCluster(static_cast<int>(state.range(0))); !error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  CommitPipelined(state, *store, /*window=*/1000, kKeysPerWriter);
}

BENCHMARK(BM_Commit)
    ->Name("EtcdCommit")
    ->ArgName("members")
    ->Arg(1)
    ->Arg(3)
    ->Threads(1)
    ->Threads(8)
    ->Threads(64)
    ->UseRealTime();
BENCHMARK(BM_CommitAsyncPipelined)
    ->Name("EtcdCommitAsync/pipelined")
    ->ArgName("members")
    ->Arg(1)
    ->Arg(3)
    ->UseRealTime();

}  // namespace
}  // namespace tessera::store

BENCHMARK_MAIN();
