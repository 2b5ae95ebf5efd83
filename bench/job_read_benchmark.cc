// How long API reads take while the scheduling loop is busy. A JobManager over a real SQLite
// store (temporary directory) holds PENDING jobs that no cluster matches (each cycle considers
// every one of them and tells each its pending reason), while a submitter keeps the loop turning
// with short jobs that run 1 s on a simulated cluster (one SubmitBatch of 10 every 10 ms). For
// SECONDS, READERS threads each alternate a Get of a random stored job and a List (newest first,
// 100 jobs), back to back, and the benchmark reports per kind of read the count and the wall
// time p50 / p99 / max (steady_clock), and the loop's scheduling cycles meanwhile.
//
// Usage: job_read_benchmark [PENDING] [SECONDS] [READERS]   (defaults 100000 10 2)
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "agent/local/system_clock.h"
#include "agent/sim/sim_cluster.h"
#include "bench/control_plane_bench.h"
#include "fmt/format.h"
#include "prometheus/registry.h"
#include "sched/profile.h"
#include "server/job_manager.h"
#include "store/sqlite/sqlite_store.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using bench::Die;
using bench::SubmitAll;
using server::JobManager;
using Steady = std::chrono::steady_clock;

constexpr int64_t kGi = int64_t{1} << 30;
const server::Caller kTenant{.tenant = "bench"};

// A one-task job of 100m CPU that runs 1 s on the simulated nodes; `placeable` false: it stays
// pending.
spec::JobDocument Job(bool placeable) { return bench::OneTaskJob("{cpu: 100m}", "1s", placeable); }

// Wall times of one kind of read, in microseconds.
struct Latencies {
  std::vector<int64_t> micros;

  void Print(const char* what) {
    std::sort(micros.begin(), micros.end());
    const auto at = [&](double q) {
      return micros.empty() ? 0 : micros[static_cast<size_t>(q * (micros.size() - 1))];
    };
    std::printf("%-34s %8zu reads   p50 %7.3f ms   p99 %7.3f ms   max %7.3f ms\n", what,
                micros.size(), at(0.5) / 1e3, at(0.99) / 1e3,
                micros.empty() ? 0.0 : micros.back() / 1e3);
  }
};

int64_t MicrosSince(Steady::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Steady::now() - start).count();
}

void Read(JobManager& manager, int64_t jobs, Steady::time_point until, uint64_t seed,
          Latencies& gets, Latencies& lists) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> id(1, jobs);
  while (Steady::now() < until) {
    Steady::time_point start = Steady::now();
    absl::StatusOr<server::JobView> job = manager.Get(kTenant, std::to_string(id(rng)));
    if (!job.ok()) Die("Get", job.status());
    gets.micros.push_back(MicrosSince(start));
    start = Steady::now();
    absl::StatusOr<server::ListJobsResult> page =
        manager.List(kTenant, {.order = server::ListOrder::kNewestFirst, .limit = 100});
    if (!page.ok()) Die("List", page.status());
    lists.micros.push_back(MicrosSince(start));
  }
}

int Run(int64_t pending, int seconds, int readers) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("job_read_benchmark_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::unique_ptr<store::SqliteStore> store = bench::OpenStore(dir);
    absl::StatusOr<Profile> profile = BuiltinProfile("default");
    if (!profile.ok()) Die("profile", profile.status());
    prometheus::Registry metrics;
    absl::StatusOr<std::unique_ptr<JobManager>> manager =
        JobManager::Create({.store = store.get(),
                            .clock = &agent::SystemClock::Get(),
                            .profile = *profile,
                            .metrics = &metrics});
    if (!manager.ok()) Die("JobManager::Create", manager.status());
    std::vector<Node> nodes(4);
    for (size_t i = 0; i < nodes.size(); ++i) {
      nodes[i].name = fmt::format("sim-{}", i);
      nodes[i].capacity = Resources{.cpu = 64'000, .memory = 256 * kGi};
      nodes[i].allocatable = nodes[i].capacity;
    }
    agent::SimCluster sim({.nodes = nodes, .clock = &agent::SystemClock::Get()}, manager->get());
    if (absl::Status s = (*manager)->Start({&sim}); !s.ok()) Die("Start", s);

    SubmitAll(**manager, kTenant, Job(false), pending);
    std::atomic<bool> done{false};
    std::atomic<int64_t> submitted{0};
    std::thread submitter([&] {
      const spec::JobDocument job = Job(true);
      while (!done.load()) {
        SubmitAll(**manager, kTenant, job, 10);
        submitted += 10;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
    const Steady::time_point until = Steady::now() + std::chrono::seconds(seconds);
    std::vector<Latencies> gets(readers);
    std::vector<Latencies> lists(readers);
    std::vector<std::thread> threads;
    for (int r = 0; r < readers; ++r) {
      threads.emplace_back(
          [&, r] { Read(**manager, pending, until, 1 + r, gets[r], lists[r]); });
    }
    for (std::thread& thread : threads) thread.join();
    done = true;
    submitter.join();

    Latencies all_gets;
    Latencies all_lists;
    for (int r = 0; r < readers; ++r) {
      all_gets.micros.insert(all_gets.micros.end(), gets[r].micros.begin(), gets[r].micros.end());
      all_lists.micros.insert(all_lists.micros.end(), lists[r].micros.begin(),
                              lists[r].micros.end());
    }
    std::printf("%lld pending jobs, %d s, %d readers, %lld short jobs submitted meanwhile\n",
                static_cast<long long>(pending), seconds, readers,
                static_cast<long long>(submitted.load()));
    all_gets.Print("Get (a random job)");
    all_lists.Print("List (newest first, 100 jobs)");
    for (const prometheus::MetricFamily& family : metrics.Collect()) {
      if (family.name != "tessera_scheduling_cycle_seconds") continue;
      for (const prometheus::ClientMetric& metric : family.metric) {
        std::printf("scheduling cycles since start: %llu, %.3f s in all\n",
                    static_cast<unsigned long long>(metric.histogram.sample_count),
                    metric.histogram.sample_sum);
      }
    }
    (*manager)->Stop();
  }
  fs::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  const int64_t pending = argc > 1 ? std::atoll(argv[1]) : 100'000;
  const int seconds = argc > 2 ? std::atoi(argv[2]) : 10;
  const int readers = argc > 3 ? std::atoi(argv[3]) : 2;
  if (pending < 1 || seconds < 1 || readers < 1) {
    std::fprintf(stderr, "usage: job_read_benchmark [PENDING >= 1] [SECONDS >= 1] [READERS >= 1]\n");
    return 2;
  }
  return tessera::Run(pending, seconds, readers);
}
