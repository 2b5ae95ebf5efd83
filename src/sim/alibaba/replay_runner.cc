#include "sim/alibaba/replay_runner.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "sim/alibaba/cluster_metrics.h"
#include "sim/alibaba/curve.h"
#include "sim/alibaba/pod_job.h"
#include "sim/alibaba/sim_wiring.h"
#include "sim/engine/event_queue.h"
#include "tessera/common/status_macros.h"

namespace tessera::sim::alibaba {
namespace {

double Seconds(TimePoint t) { return std::chrono::duration<double>(t.time_since_epoch()).count(); }

// One replay: the wiring, the event queue and the bookkeeping the event actions share.
class Replay {
 public:
  Replay(const TraceInput& input, const ReplayOptions& options, SimWiring wiring)
      : input_(input),
        options_(options),
        wiring_(std::move(wiring)),
        metrics_(*wiring_.state, *input.prepared) {}

  absl::StatusOr<ReplayResult> Run() {
    const std::vector<TraceTask>& tasks = input_.pods.tasks;
    std::vector<int32_t> order(tasks.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      return *tasks[a].creation_time < *tasks[b].creation_time;
    });
    origin_ = *tasks[order.front()].creation_time;
    for (int32_t i : order) {
      const double at_s =
          static_cast<double>(*tasks[i].creation_time - origin_) / options_.arrival_speedup;
      queue_.Push(
          TimePoint{} + std::chrono::duration_cast<Duration>(std::chrono::duration<double>(at_s)),
          EventClass::kSubmission, [this, i] { Submit(i); });
    }
    queue_.Push(TimePoint{}, EventClass::kObserve, [this] { Observe(/*periodic=*/true); });
    while (!queue_.empty() && error_.ok()) {
      queue_.RunNext();
      if (submitted_ == static_cast<int64_t>(tasks.size()) && OnlyObserversLeft()) break;
    }
    TESSERA_RETURN_IF_ERROR(error_);
    Observe(/*periodic=*/false);
    return Finish();
  }

 private:
  struct Running {
    int32_t task;
    Placement placement;
  };

  // Nothing but periodic samples can happen any more: every completion has run (tasks without
  // a deletion_time hold their resources to the end) and no cycle is queued.
  bool OnlyObserversLeft() const { return outstanding_completions_ == 0 && !cycle_queued_; }

  // Adds the metrics' values times the time they have held since the last state change, and
  // raises the peak. Called at the start of every event that may change the state, so the means
  // and the peak are exact: they do not depend on the sample interval.
  void Integrate() {
    const double now_s = Seconds(queue_.Now());
    const double dt = now_s - integrated_until_s_;
    if (dt <= 0) return;
    const double gpu = metrics_.GpuAllocationPct();
    result_.gpu_alloc_peak_pct = std::max(result_.gpu_alloc_peak_pct, gpu);
    gpu_alloc_integral_ += dt * gpu;
    frag_ratio_integral_ += dt * metrics_.FragmentRatioPct();
    integrated_until_s_ = now_s;
  }

  void Submit(int32_t task) {
    Integrate();
    ++submitted_;
    result_.last_arrival_s = Seconds(queue_.Now());
    if (options_.progress != nullptr) options_.progress->fetch_add(1, std::memory_order_relaxed);
    submitted_at_[task] = queue_.Now();
    std::optional<bool> placed = TryPlace(task);
    if (!placed.has_value()) return;
    if (*placed) {
      ++result_.placed_on_arrival;
      return;
    }
    if (!Satisfiable(task)) {
      ++result_.failed;
      return;
    }
    pending_.push_back(task);
  }

  // True when placed, false when it does not fit now; nullopt after an error.
  std::optional<bool> TryPlace(int32_t task) {
    const TraceTask& t = input_.pods.tasks[task];
    TaskAttempt attempt = wiring_.framework->PlaceTask(*wiring_.state, t.request);
    if (attempt.status.code() == SchedStatus::Code::kError) {
      error_ = absl::InternalError(fmt::format("task {}: plugin {}: {}", t.name,
                                               attempt.status.plugin(), attempt.status.message()));
      return std::nullopt;
    }
    if (!attempt.status.ok()) return false;
    const absl::Status assumed = wiring_.state->Assume(t.request, *attempt.placement);
    if (!assumed.ok()) {
      error_ =
          absl::InternalError(fmt::format("task {}: the state refused node {}: {}", t.name,
                                          attempt.placement->node, std::string(assumed.message())));
      return std::nullopt;
    }
    metrics_.NodeChanged(attempt.placement->node_index);
    const int64_t id = next_running_id_++;
    running_.emplace(id, Running{task, std::move(*attempt.placement)});
    if (const std::optional<int64_t> hold = PodRunSeconds(t)) {
      ++outstanding_completions_;
      queue_.Push(queue_.Now() + std::chrono::seconds(*hold), EventClass::kTaskCompletion,
                  [this, id] { Complete(id); });
    }
    return true;
  }

  bool Satisfiable(int32_t task) {
    const TaskRequest& r = input_.pods.tasks[task].request;
    const std::string key = r.EquivalenceKey();
    auto it = satisfiable_.find(key);
    if (it == satisfiable_.end()) {
      const TaskAttempt a =
          wiring_.framework->PlaceTask(*wiring_.state, r, MatchMode::kSatisfiability);
      it = satisfiable_.emplace(key, a.status.ok()).first;
    }
    return it->second;
  }

  void Complete(int64_t id) {
    Integrate();
    --outstanding_completions_;
    auto it = running_.find(id);
    const TraceTask& t = input_.pods.tasks[it->second.task];
    wiring_.state->Forget(t.request, it->second.placement);
    metrics_.NodeChanged(it->second.placement.node_index);
    running_.erase(it);
    ++result_.completed;
    if (!pending_.empty() && !cycle_queued_) {
      cycle_queued_ = true;
      queue_.Push(queue_.Now(), EventClass::kCycle, [this] { RetryPending(); });
    }
  }

  // FIFO over the pending tasks; a class that failed in this pass is not tried again in it
  // (placements only take capacity away during the pass).
  void RetryPending() {
    Integrate();
    cycle_queued_ = false;
    std::unordered_set<std::string> failed_classes;
    std::deque<int32_t> still;
    while (!pending_.empty()) {
      const int32_t task = pending_.front();
      pending_.pop_front();
      const std::string key = input_.pods.tasks[task].request.EquivalenceKey();
      if (failed_classes.contains(key)) {
        still.push_back(task);
        continue;
      }
      std::optional<bool> placed = TryPlace(task);
      if (!placed.has_value()) return;
      if (*placed) {
        ++result_.placed_after_wait;
        waits_.push_back(Seconds(queue_.Now()) - Seconds(submitted_at_[task]));
      } else {
        failed_classes.insert(key);
        still.push_back(task);
      }
    }
    pending_ = std::move(still);
  }

  void Observe(bool periodic) {
    ReplaySample s;
    s.time_s = Seconds(queue_.Now());
    s.gpu_alloc_pct = metrics_.GpuAllocationPct();
    s.cpu_alloc_pct = metrics_.CpuAllocationPct();
    s.memory_alloc_pct = metrics_.MemoryAllocationPct();
    s.frag_pct = metrics_.FragmentPctOfCapacity();
    s.frag_ratio_pct = metrics_.FragmentRatioPct();
    s.running = static_cast<int64_t>(running_.size());
    s.pending = static_cast<int64_t>(pending_.size());
    s.failed = result_.failed;
    s.completed = result_.completed;
    result_.samples.push_back(s);
    if (periodic) {
      queue_.Push(queue_.Now() + options_.sample_interval, EventClass::kObserve,
                  [this] { Observe(true); });
    }
  }

  ReplayResult Finish() {
    result_.workload = input_.workload_name;
    result_.policy = options_.policy;
    result_.seed = options_.seed;
    result_.submitted = submitted_;
    result_.still_pending = static_cast<int64_t>(pending_.size());
    result_.simulated_seconds = Seconds(queue_.Now());
    if (!waits_.empty()) {
      result_.wait_mean_s =
          std::accumulate(waits_.begin(), waits_.end(), 0.0) / static_cast<double>(waits_.size());
      result_.wait_p50_s = Quantile(waits_, 0.5);
      result_.wait_p95_s = Quantile(waits_, 0.95);
    }
    // Time-weighted means over [0, end]; a run that ends at 0 gives the state it ends in.
    Integrate();
    result_.gpu_alloc_peak_pct = std::max(result_.gpu_alloc_peak_pct, metrics_.GpuAllocationPct());
    if (integrated_until_s_ > 0) {
      result_.gpu_alloc_time_mean_pct = gpu_alloc_integral_ / integrated_until_s_;
      result_.frag_ratio_time_mean_pct = frag_ratio_integral_ / integrated_until_s_;
    } else {
      result_.gpu_alloc_time_mean_pct = metrics_.GpuAllocationPct();
      result_.frag_ratio_time_mean_pct = metrics_.FragmentRatioPct();
    }
    return std::move(result_);
  }

  const TraceInput& input_;
  const ReplayOptions& options_;
  SimWiring wiring_;
  ClusterMetrics metrics_;
  EventQueue queue_;
  int64_t origin_ = 0;
  int64_t submitted_ = 0;
  int64_t next_running_id_ = 0;
  int64_t outstanding_completions_ = 0;
  std::unordered_map<int64_t, Running> running_;
  std::deque<int32_t> pending_;
  bool cycle_queued_ = false;
  std::vector<TimePoint> submitted_at_ = std::vector<TimePoint>(input_.pods.tasks.size());
  std::unordered_map<std::string, bool> satisfiable_;
  std::vector<double> waits_;
  double integrated_until_s_ = 0;
  double gpu_alloc_integral_ = 0;   // % x seconds
  double frag_ratio_integral_ = 0;  // % x seconds
  ReplayResult result_;
  absl::Status error_;
};

}  // namespace

absl::StatusOr<ReplayResult> RunReplay(const TraceInput& input, const ReplayOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  if (!input.pods.has_times) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: the pod list has no creation/deletion times (the 5-column form); use --mode paper",
        input.pods_path.empty() ? input.workload_name : input.pods_path));
  }
  for (const TraceTask& t : input.pods.tasks) {
    if (!t.creation_time.has_value()) {
      return absl::InvalidArgumentError(
          fmt::format("{}:{}: creation_time: required in replay mode", input.pods_path, t.line));
    }
  }
  if (options.sample_interval <= Duration::zero()) {
    return absl::InvalidArgumentError("--sample-interval: must be > 0");
  }
  if (!(options.arrival_speedup > 0)) {
    return absl::InvalidArgumentError("--arrival-speedup: must be > 0");
  }
  std::vector<int32_t> node_order(input.nodes.nodes.size());
  std::iota(node_order.begin(), node_order.end(), 0);
  TESSERA_ASSIGN_OR_RETURN(SimWiring wiring,
                           SimWiring::Create(input.nodes.nodes, node_order, options.policy,
                                             input.target, std::make_unique<Rng>(options.seed)));
  Replay replay(input, options, std::move(wiring));
  TESSERA_ASSIGN_OR_RETURN(ReplayResult result, replay.Run());
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace tessera::sim::alibaba
