// How much memory the control plane holds for its nodes and its pending jobs (the aim: 100,000
// nodes and 1,000,000 pending jobs in at most 8 GiB). A JobManager over a real, empty SQLite
// store (temporary directory) is started with NODES simulated nodes (8 GPUs, 64 cores, 512 GiB
// each) and PENDING one-task jobs of one GPU handed to it as stored records
// (JobManagerOptions::stored_jobs, as a standby hands its mirror over at an election), each with
// a clusterSelector that no cluster matches so that all stay pending; the benchmark waits for
// the first cycle to have told the newest job its pending reason, then prints the resident set
// (VmRSS) and its peak (VmHWM) at each step: the process at start, the records built, the manager
// started with its nodes, and after the first cycle. Bytes per node and per job come from runs
// with and without jobs (see docs/benchmarks.md).
//
// Usage: memory_benchmark [NODES] [PENDING]   (defaults 100000 1000000)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
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
#include "store/sqlite/sqlite_store.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using bench::Die;
using server::JobManager;
using Steady = std::chrono::steady_clock;

constexpr int64_t kGi = int64_t{1} << 30;

// A line of /proc/self/status ("VmRSS", "VmHWM"), in MiB.
double StatusMiB(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atof(line.c_str() + field.size() + 1) / 1024;
  }
  return 0;
}

void Report(const char* step, Steady::time_point start) {
  std::printf("%-44s RSS %9.1f MiB   peak %9.1f MiB   at %6.1f s\n", step, StatusMiB("VmRSS"),
              StatusMiB("VmHWM"), std::chrono::duration<double>(Steady::now() - start).count());
  std::fflush(stdout);
}

std::vector<Node> SimNodes(int64_t count) {
  std::vector<Node> nodes;
  nodes.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    Node node;
    node.name = fmt::format("sim-{}", i);
    node.capacity = Resources{.cpu = 64'000, .memory = 512 * kGi, .gpu = 8'000};
    node.allocatable = node.capacity;
    for (int32_t d = 0; d < 8; ++d) {
      node.gpus.push_back(GpuDevice{.index = d, .model = "A100", .memory = 80 * kGi});
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

int Run(int64_t node_count, int64_t pending) {
  const Steady::time_point start = Steady::now();
  Report("start", start);
  const fs::path dir = fs::temp_directory_path() / fmt::format("memory_benchmark_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::unique_ptr<store::SqliteStore> store = bench::OpenStore(dir);
    std::map<int64_t, server::JobRecord> records;
    const spec::JobDocument job =
        bench::OneTaskJob("{cpu: \"4\", memory: 32Gi, gpu: 1}", "1h", /*placeable=*/false);
    const TimePoint now = agent::SystemClock::Get().Now();
    for (int64_t id = 1; id <= pending; ++id) {
      records.emplace_hint(records.end(), id, server::NewJobRecord(id, "bench", job, now));
    }
    Report(fmt::format("{} job records built", pending).c_str(), start);

    absl::StatusOr<Profile> profile = BuiltinProfile("default");
    if (!profile.ok()) Die("profile", profile.status());
    absl::StatusOr<std::unique_ptr<JobManager>> manager =
        JobManager::Create({.store = store.get(),
                            .clock = &agent::SystemClock::Get(),
                            .profile = *profile,
                            .stored_jobs = std::move(records)});
    if (!manager.ok()) Die("JobManager::Create", manager.status());
    agent::SimCluster sim({.nodes = SimNodes(node_count), .clock = &agent::SystemClock::Get()},
                          manager->get());
    if (absl::Status s = (*manager)->Start({&sim}); !s.ok()) Die("Start", s);
    Report(fmt::format("started with {} nodes", node_count).c_str(), start);

    if (pending > 0) {
      const server::Caller admin{.tenant = "bench", .admin = true};
      bench::WaitForReason(**manager, admin, std::to_string(pending),
                           std::chrono::milliseconds(20));
    }
    Report("first cycle done", start);
    (*manager)->Stop();
  }
  fs::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  const int64_t nodes = argc > 1 ? std::atoll(argv[1]) : 100'000;
  const int64_t pending = argc > 2 ? std::atoll(argv[2]) : 1'000'000;
  if (nodes < 0 || pending < 0) {
    std::fprintf(stderr, "usage: memory_benchmark [NODES >= 0] [PENDING >= 0]\n");
    return 2;
  }
  return tessera::Run(nodes, pending);
}
