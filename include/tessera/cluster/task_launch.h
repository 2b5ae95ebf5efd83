// What the control plane asks a cluster to run (TaskLaunchSpec), and what the cluster tells back
// about it (TaskObserver: started, and how it ended).
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/job_phase.h"
#include "core/placement.h"
#include "tessera/common/clock.h"

namespace tessera {

// The node names of a job's tasks in rank order. Copies share one immutable list, so that the
// launches of a wide job hold it once (4,096 tasks would otherwise hold 4,096 copies of 4,096
// names). Read-only once built: safe to read from any thread.
class PeerNodes {
 public:
  using value_type = std::string;
  using const_iterator = std::vector<std::string>::const_iterator;
  using iterator = const_iterator;

  PeerNodes() = default;
  PeerNodes(std::vector<std::string> nodes)  // implicit, as the list it stands for
      : nodes_(nodes.empty() ? nullptr
                             : std::make_shared<const std::vector<std::string>>(std::move(nodes))) {}
  PeerNodes(std::initializer_list<std::string> nodes) : PeerNodes(std::vector<std::string>(nodes)) {}

  size_t size() const { return nodes_ == nullptr ? 0 : nodes_->size(); }
  bool empty() const { return size() == 0; }
  // `rank` < size().
  const std::string& operator[](size_t rank) const { return (*nodes_)[rank]; }
  const_iterator begin() const { return list().begin(); }
  const_iterator end() const { return list().end(); }
  void clear() { nodes_.reset(); }

  friend bool operator==(const PeerNodes& a, const PeerNodes& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  const std::vector<std::string>& list() const {
    static const std::vector<std::string> kNone;
    return nodes_ == nullptr ? kNone : *nodes_;
  }

  std::shared_ptr<const std::vector<std::string>> nodes_;
};

// One task to run: the spec's task group fields and the placement.
struct TaskLaunchSpec {
  std::string launch_id;  // [A-Za-z0-9._-]: "<job>-<task>-a<attempt>"
  std::string job_id;
  std::string task_name;   // "worker-0"
  Placement placement;     // a node of this cluster and its GPU devices
  int64_t cpu = 0;         // millicores the task requested (0: none)
  int64_t memory = 0;      // bytes the task requested (0: none)
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::string working_dir;
  std::optional<Duration> time_limit;
  Duration termination_grace{0};
  std::optional<Duration> duration;  // simulated clusters: how long the task runs
  // The job's tasks in rank order (node names), when it has more than one: the
  // distributed-training environment is derived from them.
  PeerNodes peer_nodes;
  int32_t rank = 0;
};

// How a task ended, as the job's lifecycle needs it.
struct TaskEnd {
  std::string launch_id;
  TaskPhase phase = TaskPhase::kFailed;  // kSucceeded, kFailed or kCancelled
  std::optional<int32_t> exit_code;
  // "" | "Error" | "TimeLimitExceeded" | "StartFailed" | "Killed" | "LostOnRestart" | "Lost"
  // (its node left the inventory)
  std::string reason;
  std::string message;
  TimePoint time{};
};

// Hears of a cluster's tasks. Called from any thread of the cluster, inside Launch or Recover
// included, with no cluster lock held: an implementation only hands the news on (queues it)
// and returns. A launch's start, when the cluster saw it, is reported before its end.
class TaskObserver {
 public:
  virtual ~TaskObserver() = default;
  virtual void OnTaskStarted(std::string_view launch_id, TimePoint time) = 0;
  virtual void OnTaskEnded(const TaskEnd& end) = 0;
};

}  // namespace tessera
