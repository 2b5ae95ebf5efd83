// Scenario: one acceptance test of scheduling behaviour, as parsed from its YAML file.
//
// A scenario is a cluster (clusters, nodes with their state at t=0), queues, a timed stream of
// jobs and cluster events, and expectations checked while a simulated run goes on. The file
// format is the contract of ../shared/SCENARIOS.md; scenario_parser.h reads it and
// scenario_runner.h runs it. Every element keeps the 1-based line of the file it came from, so
// later errors (a profile the framework rejects, a failed expectation) can name it.
//
// Units: times are Durations since the start of the run (t=0); quantities are in the standard
// units of core/resources.h (millicores, bytes, milli-GPU).
// A value type; safe to share when const.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/job.h"
#include "core/node.h"
#include "sched/profile.h"
#include "sched/queue/queue_spec.h"
#include "sched/scheduling_policy.h"
#include "tessera/common/clock.h"

namespace tessera::sim {

struct ScenarioConfig {
  Profile profile;       // resolved: built-in, file or inline
  int profile_line = 0;  // where `config.profile` was given (0: the default profile)
  uint64_t seed = 1;
  Duration requeue_backoff{0};  // first retry after this, doubling with each restart
  SchedulingPolicy policy;      // backfill, preemption, fair_share and the added policy keys
};

struct ScenarioCluster {
  std::string name;
  Labels labels;
  int line = 0;
};

enum class InitialNodeState { kUp, kDown, kCordoned };

struct ScenarioNode {
  Node node;  // name, cluster, pool, labels (with its cluster's), taints, capacity, devices
  InitialNodeState state = InitialNodeState::kUp;
  int line = 0;
};

struct ScenarioQueue {
  QueueSpec spec;  // name, parent (empty for a root), quotas, weight, priority, ordering
  bool leaf = true;
  int line = 0;
  const std::string& name() const { return spec.name; }
};

struct ScenarioJob {
  JobSpec spec;
  Duration at{0};        // submission time
  Duration duration{0};  // how long the job runs once its gang started (> 0)
  bool fails = false;    // outcome: fail — every task exits with failure after `duration`
  int line = 0;
};

enum class EventAction {
  kDown,
  kUp,
  kCordon,
  kUncordon,
  kDrain,
  kRemove,
  kGpuUnhealthy,
  kGpuHealthy,
  kTaint,
  kUntaint,
  kCancel,
};

struct ScenarioEvent {
  Duration at{0};
  EventAction action = EventAction::kDown;
  std::string node;  // node actions
  std::string job;   // kCancel
  int32_t gpu = -1;  // kGpuUnhealthy / kGpuHealthy: device index
  Taint taint;       // kTaint (and kUntaint: key, with effect when `has_effect`)
  bool has_effect = true;
  int line = 0;
};

// An inclusive range; an unset end is open.
struct Bounds {
  std::optional<int64_t> min;
  std::optional<int64_t> max;
  bool Contains(int64_t v) const { return (!min || v >= *min) && (!max || v <= *max); }
};

// Bounds per named quantity ("cpu", "memory", "gpu", "gpu_memory"), in standard units.
struct ResourceBounds {
  std::vector<std::pair<std::string, int64_t>> min;
  std::vector<std::pair<std::string, int64_t>> max;
};

enum class Invariant { kNoOvercommit, kGangAtomic, kQuotaRespected, kPendingHasReason };

enum class CheckKind {
  kPhase,              // text
  kReason,             // text
  kReasonContains,     // text
  kRunningTasks,       // bounds (min == max)
  kRunningTasksIn,     // counts
  kNodesIn,            // names
  kNodeModel,          // text
  kCluster,            // text
  kPool,               // text
  kPreemptions,        // bounds
  kRestarts,           // bounds
  kStartTime,          // bounds, milliseconds
  kEndTime,            // bounds, milliseconds
  kStartedAfter,       // text: the other job
  kStartedBefore,      // text: the other job
  kStartedAfterEndOf,  // text: the other job
  kAllocated,          // resources (queue)
  kInvariant,          // invariant
};

struct Check {
  CheckKind kind = CheckKind::kPhase;
  std::string key;  // the key as written ("phase"), for messages
  std::string text;
  Bounds bounds;
  std::vector<int64_t> counts;
  std::vector<std::string> names;
  ResourceBounds resources;
  Invariant invariant = Invariant::kNoOvercommit;
};

enum class Timing { kAt, kBy, kAlways, kEnd };

struct Expectation {
  Timing timing = Timing::kAlways;
  Duration time{0};  // kAt, kBy
  std::string job;   // the subject: a job, a queue, or neither for an invariant
  std::string queue;
  std::vector<Check> checks;  // all must hold at one instant
  std::string text;           // the entry as written (flow style), for messages
  int index = 0;              // position in `expect`
  int line = 0;
};

struct Scenario {
  std::string file;  // as given; errors start with it
  std::string name;
  std::string description;
  ScenarioConfig config;
  std::vector<ScenarioCluster> clusters;
  std::vector<ScenarioNode> nodes;  // brace ranges expanded
  std::vector<ScenarioQueue> queues;
  std::vector<ScenarioJob> jobs;
  std::vector<ScenarioEvent> events;
  std::vector<Expectation> expectations;
  std::optional<Duration> until;
};

std::string_view ToString(EventAction action);
std::string_view ToString(Invariant invariant);

}  // namespace tessera::sim
