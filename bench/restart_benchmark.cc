// How long the control plane takes to be ready after a restart with many stored jobs (the
// aim: 100,000 stored jobs ready in <= 2 s). A real SQLite store in a temporary directory is
// filled the way the server stores jobs: a JobManager takes them through SubmitBatch (1,000 a
// batch). RUNNING_PERCENT of the jobs (one 100m-CPU task of 1h each) land on a simulated
// cluster and run; the others
// carry a clusterSelector no cluster matches, so they stay Pending (the control plane keeps an
// unplaceable job waiting, it does not refuse it). The manager is stopped, then a fresh one is
// created on the same store and started, and the benchmark reports:
//   - the database size on disk (the store's directory, WAL included),
//   - time to Ready: JobManager::Create + Start (load and decode every record, restore the
//     placements of the running jobs, reconcile the simulated cluster, start the loop),
//   - time to the first cycle: until the newest pending job shows a pending reason again
//     (reasons are not stored, so a restarted manager shows none until its first cycle has
//     considered the job; the newest job is among the last the cycle reaches),
//   - after that, on the same (warm) store, how much of Ready two steps of Start take on their
//     own: reading every job and task record (Range pages of 1,000, as Start reads them) and
//     decoding the job records (DecodeJobRecord); the rest is rebuilding the manager's and the
//     scheduler's state.
// Times are wall time (steady_clock) on this machine.
//
// Usage: restart_benchmark [JOBS] [RUNNING_PERCENT]   (defaults 100000 0)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/local/system_clock.h"
#include "agent/sim/sim_cluster.h"
#include "bench/control_plane_bench.h"
#include "fmt/format.h"
#include "sched/profile.h"
#include "server/job_manager.h"
#include "server/job_record.h"
#include "spec/jobspec.h"
#include "store/sqlite/sqlite_store.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using bench::Die;
using bench::OpenStore;
using bench::SubmitAll;
using server::JobManager;
using Steady = std::chrono::steady_clock;

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kTasksPerNode = 640;  // 64 cores of 100m tasks
const server::Caller kTenant{.tenant = "bench"};

// A one-task job of 100m CPU that runs 1h on the simulated nodes; `placeable` false: it stays
// pending.
spec::JobDocument Job(bool placeable) { return bench::OneTaskJob("{cpu: 100m}", "1h", placeable); }

double SecondsSince(Steady::time_point start) {
  return std::chrono::duration<double>(Steady::now() - start).count();
}

std::vector<Node> SimNodes(int64_t running) {
  std::vector<Node> nodes;
  const int64_t count = std::max<int64_t>(1, (running + kTasksPerNode - 1) / kTasksPerNode);
  for (int64_t i = 0; i < count; ++i) {
    Node node;
    node.name = fmt::format("sim-{}", i);
    node.capacity = Resources{.cpu = kTasksPerNode * 100, .memory = 256 * kGi};
    node.allocatable = node.capacity;
    nodes.push_back(std::move(node));
  }
  return nodes;
}

// One control plane over the store: the manager and the simulated cluster it starts with.
struct ControlPlane {
  std::unique_ptr<JobManager> manager;
  std::unique_ptr<agent::SimCluster> sim;

  ~ControlPlane() {
    if (manager != nullptr) manager->Stop();
    sim.reset();
    manager.reset();
  }
};

void Boot(store::Store* store, const std::vector<Node>& nodes, ControlPlane& plane) {
  absl::StatusOr<Profile> profile = BuiltinProfile("default");
  if (!profile.ok()) Die("profile", profile.status());
  absl::StatusOr<std::unique_ptr<JobManager>> manager = JobManager::Create(
      {.store = store, .clock = &agent::SystemClock::Get(), .profile = *profile});
  if (!manager.ok()) Die("JobManager::Create", manager.status());
  plane.manager = *std::move(manager);
  plane.sim = std::make_unique<agent::SimCluster>(
      agent::SimClusterOptions{.nodes = nodes, .clock = &agent::SystemClock::Get()},
      plane.manager.get());
  if (absl::Status s = plane.manager->Start({plane.sim.get()}); !s.ok()) Die("Start", s);
}

int64_t CountRunning(JobManager& manager) {
  absl::StatusOr<server::ListJobsResult> page =
      manager.List(kTenant, {.phase = JobPhase::kRunning, .limit = 1});
  if (!page.ok()) Die("List", page.status());
  return static_cast<int64_t>(page->jobs.size()) + page->remaining;
}

int64_t DirectoryBytes(const fs::path& dir) {
  int64_t bytes = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) bytes += static_cast<int64_t>(entry.file_size());
  }
  return bytes;
}

// Reads every record under `prefix` in pages of 1,000, as JobManager::Start does.
std::vector<store::KeyValue> ReadAll(store::Store& store, std::string_view prefix) {
  std::vector<store::KeyValue> out;
  store::RangeRequest request{.prefix = std::string(prefix), .limit = 1000};
  while (true) {
    absl::StatusOr<store::RangeResult> page = store.Range(request);
    if (!page.ok()) Die("Range", page.status());
    for (store::KeyValue& kv : page->kvs) out.push_back(std::move(kv));
    if (!page->more) break;
    request.after = out.back().key;
  }
  return out;
}

// The two first steps of Start on their own: reading the records and decoding the jobs.
void TimeLoadSteps(store::Store& store) {
  Steady::time_point start = Steady::now();
  const std::vector<store::KeyValue> specs = ReadAll(store, server::kSpecPrefix);
  const std::vector<store::KeyValue> jobs = ReadAll(store, server::kJobPrefix);
  const std::vector<store::KeyValue> tasks = ReadAll(store, server::kTaskPrefix);
  const double read = SecondsSince(start);
  start = Steady::now();
  if (specs.size() != jobs.size()) Die("specs", absl::DataLossError("a spec for each job"));
  for (size_t i = 0; i < jobs.size(); ++i) {
    absl::StatusOr<spec::JobDocument> spec = server::DecodeJobSpec(specs[i].key, specs[i].value);
    if (!spec.ok()) Die("DecodeJobSpec", spec.status());
    absl::StatusOr<server::JobRecord> record =
        server::DecodeJobRecord(jobs[i].key, jobs[i].value, *std::move(spec));
    if (!record.ok()) Die("DecodeJobRecord", record.status());
  }
  const double decode = SecondsSince(start);
  std::printf(
      "of which (measured apart, warm store, one thread): reading %zu spec + %zu job + "
      "%zu task records: %.3f s, decoding the specs and job records: %.3f s\n",
      specs.size(), jobs.size(), tasks.size(), read, decode);
}

int Run(int64_t jobs, int64_t running) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("restart_benchmark_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::vector<Node> nodes = SimNodes(running);
  std::string newest_pending;

  {  // Fill the store.
    const Steady::time_point start = Steady::now();
    std::unique_ptr<store::SqliteStore> store = OpenStore(dir / "store");
    ControlPlane plane;
    Boot(store.get(), nodes, plane);
    SubmitAll(*plane.manager, kTenant, Job(true), running);
    while (CountRunning(*plane.manager) < running) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    newest_pending = SubmitAll(*plane.manager, kTenant, Job(false), jobs - running);
    std::printf("filled: %lld jobs (%lld running, %lld pending) in %.1f s\n",
                static_cast<long long>(jobs), static_cast<long long>(running),
                static_cast<long long>(jobs - running), SecondsSince(start));
  }  // The manager stops, then the store closes.
  std::printf("database size on disk: %.1f MiB\n",
              static_cast<double>(DirectoryBytes(dir / "store")) / (1 << 20));

  {  // Restart.
    const Steady::time_point start = Steady::now();
    std::unique_ptr<store::SqliteStore> store = OpenStore(dir / "store");
    const double open = SecondsSince(start);
    ControlPlane plane;
    Boot(store.get(), nodes, plane);
    const double ready = SecondsSince(start);
    double first_cycle = -1;
    if (!newest_pending.empty()) {
      bench::WaitForReason(*plane.manager, kTenant, newest_pending, std::chrono::milliseconds(1));
      first_cycle = SecondsSince(start);
    }
    const int64_t still_running = CountRunning(*plane.manager);
    std::printf("store open: %.3f s\n", open);
    std::printf("time to Ready (open + Create + Start): %.3f s\n", ready);
    if (first_cycle >= 0) {
      std::printf("time to first cycle (newest pending job has a reason): %.3f s\n",
                  first_cycle);
    }
    std::printf("running after restart: %lld of %lld\n", static_cast<long long>(still_running),
                static_cast<long long>(running));
    std::printf("within 2 s (the aim for 100,000 jobs): Ready %s, first cycle %s\n",
                ready <= 2.0 ? "yes" : "no",
                first_cycle >= 0 && first_cycle <= 2.0 ? "yes" : "no");
    plane.manager->Stop();
    TimeLoadSteps(*store);
  }
  fs::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  const int64_t jobs = argc > 1 ? std::atoll(argv[1]) : 100'000;
  const int64_t percent = argc > 2 ? std::atoll(argv[2]) : 0;
  if (jobs < 1 || percent < 0 || percent > 100) {
    std::fprintf(stderr, "usage: restart_benchmark [JOBS >= 1] [RUNNING_PERCENT 0..100]\n");
    return 2;
  }
  return tessera::Run(jobs, jobs * percent / 100);
}
