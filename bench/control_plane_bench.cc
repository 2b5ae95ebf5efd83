#include "bench/control_plane_bench.h"

#include <errno.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "spec/jobspec.h"

namespace tessera::bench {

void Die(std::string_view what, const absl::Status& status) {
  fmt::print(stderr, "{}: {}: {}\n", program_invocation_short_name, what, status.ToString());
  std::exit(1);
}

spec::JobDocument OneTaskJob(std::string_view resources, std::string_view duration,
                             bool placeable) {
  const std::string_view selector = placeable ? "" : "clusterSelector: {region: nowhere}";
  absl::StatusOr<spec::JobDocument> doc = spec::ParseJobDocument(fmt::format(R"(
apiVersion: tessera/v1
kind: Job
metadata: {{}}
spec:
  queue: default
  duration: {}
  {}
  tolerations: [{{key: tessera.io/simulated, operator: Exists}}]
  tasks: [{{name: w, replicas: 1, resources: {}, command: [run]}}]
)",
                                                                 duration, selector, resources));
  if (!doc.ok()) Die("job document", doc.status());
  return *std::move(doc);
}

std::string SubmitAll(server::JobManager& manager, const server::Caller& caller,
                      const spec::JobDocument& job, int64_t count) {
  std::string last;
  for (int64_t done = 0; done < count;) {
    const int64_t n = std::min<int64_t>(count - done, server::kMaxSubmitBatchItems);
    absl::StatusOr<server::SubmitBatchResult> result =
        manager.SubmitBatch(caller, std::vector<spec::JobDocument>(n, job));
    if (!result.ok()) Die("SubmitBatch", result.status());
    for (const absl::StatusOr<server::SubmitResult>& item : *result) {
      if (!item.ok()) Die("SubmitBatch item", item.status());
      last = item->job.document.metadata.id;
    }
    done += n;
  }
  return last;
}

std::unique_ptr<store::SqliteStore> OpenStore(const std::filesystem::path& dir) {
  absl::StatusOr<std::unique_ptr<store::SqliteStore>> opened = store::SqliteStore::Open(
      {.data_dir = dir.string(), .sync = store::SqliteStoreOptions::Sync::kNormal});
  if (!opened.ok()) Die("SqliteStore::Open", opened.status());
  return *std::move(opened);
}

void WaitForReason(server::JobManager& manager, const server::Caller& caller,
                   const std::string& id, std::chrono::milliseconds poll) {
  while (true) {
    absl::StatusOr<server::JobView> job = manager.Get(caller, id);
    if (!job.ok()) Die("Get", job.status());
    if (job->document.status.has_value() && !job->document.status->reason.empty()) return;
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace tessera::bench
