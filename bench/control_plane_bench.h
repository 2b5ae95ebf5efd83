// What the control-plane benchmarks (restart_benchmark, job_read_benchmark, memory_benchmark)
// share: how they stop on an error, one-task job documents, batched submission, a SQLite store
// in a directory of their own, and waiting for a job's first pending reason.
// Single-threaded helpers, except SubmitAll and WaitForReason, which any thread may call.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "server/job_manager.h"
#include "spec/job_document.h"
#include "store/sqlite/sqlite_store.h"

namespace tessera::bench {

// Prints "<program>: <what>: <status>" on stderr and exits 1.
[[noreturn]] void Die(std::string_view what, const absl::Status& status);

// A one-task job in queue "default" for the simulated clusters (it tolerates their taint):
// `resources` as the job spec writes them ("{cpu: 100m}"), `duration` ("1h") how long it runs
// there. `placeable` false adds a clusterSelector that no cluster matches, so that it stays
// pending.
spec::JobDocument OneTaskJob(std::string_view resources, std::string_view duration,
                             bool placeable);

// Submits `count` copies of `job` in batches of server::kMaxSubmitBatchItems, exiting on any
// refusal; returns the id of the last one ("" when count is 0).
std::string SubmitAll(server::JobManager& manager, const server::Caller& caller,
                      const spec::JobDocument& job, int64_t count);

// The SQLite store in `dir` (created when missing), synchronous=NORMAL.
std::unique_ptr<store::SqliteStore> OpenStore(const std::filesystem::path& dir);

// Blocks until job `id` shows a pending reason: a cycle has considered it (a restarted manager
// shows none until then). Reads every `poll`.
void WaitForReason(server::JobManager& manager, const server::Caller& caller,
                   const std::string& id, std::chrono::milliseconds poll);

}  // namespace tessera::bench
