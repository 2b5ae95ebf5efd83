// SimCluster: a simulated fleet — nodes from a node list (the Alibaba trace's, for instance)
// whose tasks "run" for their job's spec.duration without running anything, so a live control
// plane can carry a replayed real workload next to real tasks.
//
// Every node carries the taint tessera.io/simulated=true:NoSchedule (unless
// SimClusterOptions::simulated_taint is false), so only jobs that tolerate it (replayed traces
// do) land here and a real command never "runs" on a simulated node. A launched task starts at
// once and ends Succeeded after its duration (Failed "Error", exit code 1, when
// SimClusterOptions::fails says so); with a time limit shorter than the duration (or no
// duration) it ends Failed "TimeLimitExceeded" at the limit; with neither it runs until
// cancelled. Cancel ends it at once, Cancelled. With SimClusterOptions::exit_after_grace a
// signalled task behaves as a program that takes its whole termination grace to exit: a
// cancelled one ends after the grace Cancel gives it, and one past its time limit ends Failed
// "TimeLimitExceeded" at the limit plus its spec's termination grace; an end of its duration
// inside the grace is ignored. The first signal sets the deadline: a cancel after the time limit
// passed, or a second cancel, keeps it; a task whose time limit passes inside a cancel's grace
// ends "TimeLimitExceeded" when that grace ends. Tasks have no
// logs. After a restart, Recover keeps a task whose end lies in the future and ends the others
// at their due time. Usage reports each node's GPU utilisation as the share its tasks hold.
//
// Time: the injected Clock. Without SimClusterOptions::timers, one timer thread reads it,
// sleeping in real time, at most `tick` between reads. With timers (a SimulatedClock,
// tessera/common/simulated_clock.h), each task's end is armed on them and the cluster owns no
// thread: on simulated time a task ends exactly at its instant, reported from the timers'
// firing thread. Thread-safety: as Cluster.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tessera/cluster/cluster.h"
#include "tessera/common/timers.h"

namespace tessera::agent {

inline constexpr std::string_view kSimulatedTaint = "tessera.io/simulated";

struct SimClusterOptions {
  std::string name = "sim";
  std::map<std::string, std::string, std::less<>> labels;  // tessera.io/cluster is added
  std::vector<Node> nodes;
  const Clock* clock = nullptr;  // required
  Duration tick{100};            // without timers: the longest real-time sleep between reads
  // Task ends are armed on these (on `clock`'s time); nullptr: the real-time timer thread.
  // Outlives the cluster.
  Timers* timers = nullptr;
  bool simulated_taint = true;      // false: nodes keep their own taints only
  bool exit_after_grace = false;  // a signalled task ends after its grace, not at once
  // Whether a launched task fails (exit code 1) at the end of its duration; nullptr: none.
  // Called inside Launch and Recover.
  std::function<bool(const TaskLaunchSpec&)> fails;
  // Hears of ChangeNode; nullptr: nobody (the nodes never change then). Outlives the cluster.
  InventoryObserver* inventory_observer = nullptr;
};

class SimCluster final : public Cluster {
 public:
  SimCluster(SimClusterOptions options, TaskObserver* observer);
  // Joins the timer thread, or cancels the timers still armed, before it returns.
  ~SimCluster() override;

  const std::string& name() const override { return options_.name; }
  std::string_view backend() const override { return "sim"; }
  const std::map<std::string, std::string, std::less<>>& labels() const override {
    return options_.labels;
  }
  std::vector<Node> Inventory() const override;
  // GPU utilisation as simulated: the share of each node's GPU capacity its tasks hold.
  std::vector<NodeUsage> Usage() const override;
  void Launch(const TaskLaunchSpec& spec) override;
  void Cancel(std::string_view launch_id, Duration grace) override;
  std::vector<std::string> Recover(const std::vector<KnownLaunch>& known) override;
  void Forget(std::string_view launch_id) override {}
  absl::StatusOr<LogChunk> ReadLog(std::string_view launch_id, LogStream stream, int64_t offset,
                                   int64_t limit) const override;

  // A node of the simulated fleet changes (it goes down or comes up, is cordoned, removed, a
  // GPU turns unhealthy...): `node` replaces the node of the same name (given as Inventory
  // shows it), the inventory observer hears of it, and then, when `lose` says so, every task
  // on the node (only those on GPU `lost_gpu`, when given) ends Failed "Lost" at once, as a
  // real backend reports tasks whose node failed. NotFound for a name the fleet does not have.
  absl::Status ChangeNode(Node node, bool lose, std::optional<int32_t> lost_gpu = std::nullopt);

 private:
  enum class Outcome { kSucceeded, kFailed, kTimeLimit, kCancelled };
  struct Running {
    std::optional<TimePoint> end;  // nullopt: until cancelled
    Outcome outcome = Outcome::kSucceeded;  // how it ends at `end`
    std::optional<TimePoint> limit;  // when its time limit passes; nullopt: it has none
    bool cancelled = false;          // signalled by Cancel (exit_after_grace)
    std::string node;
    std::vector<int32_t> gpus;     // its devices on the node
    int64_t gpu_milli = 0;         // over all its devices
  };
  void Track(const TaskLaunchSpec& spec, TimePoint start);
  // Sets the task's end (replacing any earlier one). REQUIRES: mu_ held.
  void ScheduleLocked(const std::string& launch_id, Running& running, TimePoint end,
                      Outcome outcome);
  // Removes the task due at `end` and returns how it ended; nullopt when it is gone or its end
  // moved. REQUIRES: mu_ held.
  std::optional<TaskEnd> EndLocked(const std::string& launch_id, TimePoint end);
  void TimerFired(TimerId id, const std::string& launch_id, TimePoint end);
  void TimerLoop();

  SimClusterOptions options_;
  TaskObserver* const observer_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::map<std::string, Running, std::less<>> running_;
  std::set<std::pair<TimePoint, std::string>> due_;  // (end, launch id)
  std::set<TimerId> armed_;  // with options_.timers: the timers that have not fired yet
  bool stopping_ = false;
  std::thread timer_;  // without options_.timers only
};

}  // namespace tessera::agent
