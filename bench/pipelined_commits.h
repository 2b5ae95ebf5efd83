// CommitPipelined: the write pattern of the scheduling loop, shared by the store benchmarks —
// one thread hands transactions to Store::CommitAsync, each one 512-byte put, keeping at most
// `window` in flight, and waits for every callback before it returns.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "tessera/store/store.h"

namespace tessera::store {

// One benchmark iteration per transaction, on keys "/bench/0" .. "/bench/<keys - 1>" in turn.
// Skips the benchmark with an error when the store refuses a transaction or one fails.
inline void CommitPipelined(benchmark::State& state, Store& store, int64_t window, int keys) {
  const std::string value(512, 'v');
  absl::Mutex mu;
  int64_t in_flight = 0;
  bool failed = false;
  auto done = [&](absl::StatusOr<TxnResult> result) {
    absl::MutexLock lock(&mu);
    --in_flight;
    failed = failed || !result.ok();
  };
  auto below_window = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return in_flight < window; };
  auto drained = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return in_flight == 0; };
  int64_t i = 0;
  for (auto _ : state) {
    {
      absl::MutexLock lock(&mu);
      mu.Await(absl::Condition(&below_window));
      ++in_flight;
    }
    absl::Status admitted = store.CommitAsync(
        Txn::Unconditional({Op::Put(absl::StrCat("/bench/", i++ % keys), value)}), done);
    if (!admitted.ok()) {
      absl::MutexLock lock(&mu);
      --in_flight;  // refused: no callback will come
      state.SkipWithError(admitted.ToString().c_str());
      break;
    }
  }
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(&drained));
  if (failed) state.SkipWithError("a pipelined commit failed");
  state.SetItemsProcessed(state.iterations());
}

}  // namespace tessera::store
