// SimCluster: a simulated fleet — nodes from a node list (the Alibaba trace's, for instance)
// whose tasks "run" for their job's spec.duration without running anything, so a live control
// plane can carry a replayed real workload next to real tasks.
//
// Every node carries the taint tessera.io/simulated=true:NoSchedule, so only jobs that
// tolerate it (replayed traces do) land here and a real command never "runs" on a simulated
// node. A launched task starts at once and ends Succeeded after its duration; with a time limit
// shorter than the duration (or no duration) it ends Failed "TimeLimitExceeded" at the limit;
// with neither it runs until cancelled. Cancel ends it at once, Cancelled. Tasks have no logs.
// After a restart, Recover keeps a task whose end lies in the future and ends the others at
// their due time. Usage reports each node's GPU utilisation as the share its tasks hold.
//
// Time: the injected Clock is read by one timer thread that sleeps in real time, at most
// `tick` between reads. Thread-safety: as Cluster.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tessera/cluster/cluster.h"

namespace tessera::agent {

inline constexpr std::string_view kSimulatedTaint = "tessera.io/simulated";

struct SimClusterOptions {
  std::string name = "sim";
  std::map<std::string, std::string, std::less<>> labels;  // tessera.io/cluster is added
  std::vector<Node> nodes;
  const Clock* clock = nullptr;  // required
  Duration tick{100};
};

class SimCluster final : public Cluster {
 public:
  SimCluster(SimClusterOptions options, TaskObserver* observer);
  ~SimCluster() override;

  const std::string& name() const override { return options_.name; }
  std::string_view backend() const override { return "sim"; }
  const std::map<std::string, std::string, std::less<>>& labels() const override {
    return options_.labels;
  }
  std::vector<Node> Inventory() const override { return options_.nodes; }
  // GPU utilisation as simulated: the share of each node's GPU capacity its tasks hold.
  std::vector<NodeUsage> Usage() const override;
  void Launch(const TaskLaunchSpec& spec) override;
  void Cancel(std::string_view launch_id, Duration grace) override;
  std::vector<std::string> Recover(const std::vector<KnownLaunch>& known) override;
  void Forget(std::string_view launch_id) override {}
  absl::StatusOr<LogChunk> ReadLog(std::string_view launch_id, LogStream stream, int64_t offset,
                                   int64_t limit) const override;

 private:
  struct Running {
    std::optional<TimePoint> end;  // nullopt: until cancelled
    bool time_limit = false;       // the end is the time limit, not the duration
    std::string node;
    int64_t gpu_milli = 0;         // over all its devices
  };
  void Track(const TaskLaunchSpec& spec, TimePoint start);
  void TimerLoop();

  SimClusterOptions options_;
  TaskObserver* const observer_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::map<std::string, Running, std::less<>> running_;
  std::set<std::pair<TimePoint, std::string>> due_;  // (end, launch id)
  bool stopping_ = false;
  std::thread timer_;
};

}  // namespace tessera::agent
