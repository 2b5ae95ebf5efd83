#include "sched/backfill/backfill_planner.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/inlined_vector.h"

namespace tessera {
namespace {

constexpr TimePoint kNever = TimePoint::max();

// t + d, saturating at kNever; a negative d counts as zero.
TimePoint AddSaturating(TimePoint t, Duration d) {
  if (d <= Duration::zero()) return t;
  if (t == kNever || d >= kNever - t) return kNever;
  return t + d;
}

// What some tasks hold on one node, in every quantity the ClusterState tracks there: cpu,
// memory, extended resources, and each device's milli-GPU and memory. Values may be negative
// (a difference between two instants).
struct Load {
  int64_t cpu = 0;
  int64_t memory = 0;
  std::map<std::string, int64_t, std::less<>> extended;
  absl::InlinedVector<int64_t, 8> milli;       // per device index
  absl::InlinedVector<int64_t, 8> gpu_memory;  // per device index

  explicit Load(size_t devices) : milli(devices, 0), gpu_memory(devices, 0) {}

  // Adds `sign` (+1 or -1) times what the task holds at the placement.
  void Add(const TaskRequest& task, const Placement& placement, int64_t sign) {
    AddHost(task, sign);
    for (int32_t d : placement.gpus) {
      milli[d] += sign * placement.gpu_milli;
      gpu_memory[d] += sign * placement.gpu_memory;
    }
  }

  // Adds what the task holds outside its devices.
  void AddHost(const TaskRequest& task, int64_t sign) {
    cpu += sign * task.cpu;
    memory += sign * task.memory;
    for (const auto& [name, value] : task.extended) extended[name] += sign * value;
  }

  // Raises every quantity to at least `other`'s (a missing extended entry counts as zero).
  void RaiseTo(const Load& other) {
    cpu = std::max(cpu, other.cpu);
    memory = std::max(memory, other.memory);
    for (const auto& [name, value] : other.extended) {
      int64_t& mine = extended[name];
      mine = std::max(mine, value);
    }
    for (size_t d = 0; d < milli.size(); ++d) {
      milli[d] = std::max(milli[d], other.milli[d]);
      gpu_memory[d] = std::max(gpu_memory[d], other.gpu_memory[d]);
    }
  }
};

// Whether every placement names a node of the state and devices of that node, one per task.
bool ValidPlacements(const ClusterState& state, std::span<const TaskRequest> tasks,
                     std::span<const Placement> placements) {
  if (tasks.size() != placements.size()) return false;
  for (const Placement& p : placements) {
    if (p.node_index < 0 || p.node_index >= state.size()) return false;
    if (p.gpus.empty()) continue;
    const auto devices = static_cast<int32_t>(state.node(p.node_index).gpus.size());
    for (int32_t d : p.gpus) {
      if (d < 0 || d >= devices) return false;
    }
  }
  return true;
}

// A task that leaves the cluster at `end`.
struct Release {
  TimePoint end;
  const TaskRequest* task;
  const Placement* placement;
};

// The running tasks that will end (a finite end and valid placements), in end order overall and
// per node, with pointers into the `running` span they were built from (valid while it is).
class ReleaseIndex {
 public:
  ReleaseIndex(const ClusterState& state, std::span<const PlannedRelease> running)
      : nodes_(state.size()) {
    std::vector<const PlannedRelease*> ending;
    for (const PlannedRelease& job : running) {
      if (job.end != kNever && ValidPlacements(state, job.tasks, job.placements)) {
        ending.push_back(&job);
      }
    }
    std::stable_sort(
        ending.begin(), ending.end(),
        [](const PlannedRelease* a, const PlannedRelease* b) { return a->end < b->end; });
    for (const PlannedRelease* job : ending) {
      for (size_t k = 0; k < job->tasks.size(); ++k) {
        by_end_.push_back(Release{job->end, &job->tasks[k], &job->placements[k]});
      }
    }
  }

  // Every release, by end (ties in span order).
  std::span<const Release> by_end() const { return by_end_; }
  // The releases on `node`, by end. The first call sorts every release by node.
  std::span<const Release> on_node(int32_t node) {
    if (node_begin_.empty()) IndexByNode();
    return std::span(by_node_).subspan(node_begin_[node],
                                       node_begin_[node + 1] - node_begin_[node]);
  }

 private:
  // A counting sort of by_end_ by node, which keeps the end order within each node.
  void IndexByNode() {
    node_begin_.assign(static_cast<size_t>(nodes_) + 1, 0);
    for (const Release& r : by_end_) ++node_begin_[r.placement->node_index + 1];
    for (size_t n = 1; n < node_begin_.size(); ++n) node_begin_[n] += node_begin_[n - 1];
    std::vector<int32_t> next(node_begin_.begin(), node_begin_.end() - 1);
    by_node_.resize(by_end_.size());
    for (const Release& r : by_end_) by_node_[next[r.placement->node_index]++] = r;
  }

  int32_t nodes_;
  std::vector<Release> by_end_;
  std::vector<Release> by_node_;  // node n's: by_node_[node_begin_[n], node_begin_[n + 1])
  std::vector<int32_t> node_begin_;
};

// A copy of what a running task holds on its node and when it releases it.
struct Freed {
  int32_t node = -1;
  TimePoint end{};
  TaskRequest host;   // cpu, memory and extended resources only
  Placement devices;  // gpus, gpu_milli, gpu_memory only

  Freed(TimePoint at, const TaskRequest& task, const Placement& placement)
      : node(placement.node_index), end(at) {
    host.cpu = task.cpu;
    host.memory = task.memory;
    host.extended = task.extended;
    devices.gpus = placement.gpus;
    devices.gpu_milli = placement.gpu_milli;
    devices.gpu_memory = placement.gpu_memory;
  }
};

}  // namespace

// What the running jobs release on the nodes of the last plan's reservations, copied, and the
// `running` span it came from: Delays uses it while given that span (see Covers), which spares
// it a pass over every running job.
class BackfillPlanner::ReservedNodeReleases {
 public:
  ReservedNodeReleases(const ClusterState& state, std::span<const PlannedRelease> running,
                       const ReleaseIndex& index, std::span<const Reservation> plan)
      : state_uid_(state.uid()), data_(running.data()), size_(running.size()) {
    for (const Reservation& r : plan) {
      for (const Placement& p : r.placements) nodes_.push_back(p.node_index);
    }
    std::sort(nodes_.begin(), nodes_.end());
    nodes_.erase(std::unique(nodes_.begin(), nodes_.end()), nodes_.end());
    freed_.resize(nodes_.size());
    std::vector<int32_t> slot(static_cast<size_t>(state.size()), -1);
    for (size_t i = 0; i < nodes_.size(); ++i) slot[nodes_[i]] = static_cast<int32_t>(i);
    for (const Release& r : index.by_end()) {
      const int32_t i = slot[r.placement->node_index];
      if (i >= 0) freed_[i].emplace_back(r.end, *r.task, *r.placement);
    }
    const size_t samples = std::min<size_t>(size_, 8);
    for (size_t i = 0; i < samples; ++i) {
      const size_t at = samples == 1 ? 0 : i * (size_ - 1) / (samples - 1);
      fingerprint_.push_back(Fingerprint(running[at], at));
    }
  }

  // Whether it was built from this span of this state: the same elements first (the caller may
  // have appended some since), judged by the address and by the jobs at sampled positions.
  bool Covers(const ClusterState& state, std::span<const PlannedRelease> running) const {
    if (state.uid() != state_uid_ || running.data() != data_ || running.size() < size_) {
      return false;
    }
    return std::all_of(fingerprint_.begin(), fingerprint_.end(), [&](const auto& f) {
      return Fingerprint(running[std::get<0>(f)], std::get<0>(f)) == f;
    });
  }

  // How many leading elements of the span it covers.
  size_t size() const { return size_; }

  // What is released on `node`, by end; nullptr when the node held no reservation.
  const std::vector<Freed>* Find(int32_t node) const {
    auto it = std::lower_bound(nodes_.begin(), nodes_.end(), node);
    if (it == nodes_.end() || *it != node) return nullptr;
    return &freed_[it - nodes_.begin()];
  }

 private:
  using Sample = std::tuple<size_t, int64_t, TimePoint, size_t>;
  static Sample Fingerprint(const PlannedRelease& r, size_t at) {
    return {at, r.job, r.end, r.tasks.size()};
  }

  uint64_t state_uid_;
  const PlannedRelease* data_;
  size_t size_;
  std::vector<Sample> fingerprint_;
  std::vector<int32_t> nodes_;             // ascending
  std::vector<std::vector<Freed>> freed_;  // per entry of nodes_
};

namespace {

// The state moved to any instant at or after now: the running tasks released by then forgotten,
// the others assumed. A task whose end is already past (it overran its limit) is released now.
// The destructor takes every forgotten task back, so the state ends exactly as it began.
class Timeline {
 public:
  Timeline(ClusterState& state, TimePoint now, ReleaseIndex& index)
      : state_(state), now_(now), index_(index) {
    for (const Release& r : index.by_end()) {
      const TimePoint end = std::max(r.end, now);
      if (instants_.empty() || instants_.back() != end) instants_.push_back(end);
    }
  }

  ~Timeline() {
    const std::span<const Release> releases = index_.by_end();
    while (applied_ > 0) {
      --applied_;
      state_.Reassume(*releases[applied_].task, *releases[applied_].placement);
    }
  }

  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // The distinct release instants, ascending; none before now.
  const std::vector<TimePoint>& instants() const { return instants_; }

  // The instant the state was last moved to (TimePoint::min() before any move: as given).
  TimePoint at() const { return at_; }

  // Moves the state to instant t: forgets every task released at or before t, takes back the
  // others.
  void MoveTo(TimePoint t) {
    at_ = t;
    const std::span<const Release> releases = index_.by_end();
    while (applied_ < releases.size() && std::max(releases[applied_].end, now_) <= t) {
      state_.Forget(*releases[applied_].task, *releases[applied_].placement);
      ++applied_;
    }
    while (applied_ > 0 && std::max(releases[applied_ - 1].end, now_) > t) {
      --applied_;
      state_.Reassume(*releases[applied_].task, *releases[applied_].placement);
    }
  }

  // Subtracts from `load` what is released on `node` in (from, to].
  void SubtractReleased(int32_t node, TimePoint from, TimePoint to, Load& load) {
    if (to <= from) return;
    for (const Release& r : index_.on_node(node)) {
      const TimePoint end = std::max(r.end, now_);
      if (end > to) break;  // in end order
      if (end > from) load.Add(*r.task, *r.placement, -1);
    }
  }

 private:
  ClusterState& state_;
  const TimePoint now_;
  ReleaseIndex& index_;
  size_t applied_ = 0;  // index_.by_end()[0, applied_) are forgotten
  TimePoint at_ = TimePoint::min();
  std::vector<TimePoint> instants_;
};

// One planned task of a reservation, on its node.
struct Held {
  int32_t node;
  const Reservation* reservation;
  int32_t task;  // index into the reservation's tasks and placements
};

// The planned tasks of `reservations` (with a start) that satisfy `keep` and lie on a node that
// satisfies `on`, grouped by node.
template <typename Keep, typename On>
std::vector<Held> HeldByNode(std::span<const Reservation> reservations, Keep keep, On on) {
  std::vector<Held> held;
  for (const Reservation& r : reservations) {
    if (r.start == kNever || !keep(r)) continue;
    for (size_t k = 0; k < r.placements.size(); ++k) {
      const int32_t node = r.placements[k].node_index;
      if (on(node)) held.push_back(Held{node, &r, static_cast<int32_t>(k)});
    }
  }
  std::stable_sort(held.begin(), held.end(),
                   [](const Held& a, const Held& b) { return a.node < b.node; });
  return held;
}

bool ActiveAt(const Reservation& r, TimePoint t) { return r.start <= t && t < r.End(); }

// Filler tasks that raise every node an earlier reservation holds during [from, to) to its
// fullest over that window, per quantity: the state (moved to `from`) then shows what is free
// throughout the window, and a gang placed onto it overlaps no reservation. Assumed on
// construction, forgotten on destruction.
class Overlay {
 public:
  Overlay(ClusterState& state, Timeline& timeline, std::span<const Reservation> planned,
          TimePoint from, TimePoint to)
      : state_(state) {
    const std::vector<Held> held = HeldByNode(
        planned, [&](const Reservation& r) { return r.start < to && r.End() > from; },
        [](int32_t) { return true; });
    for (size_t begin = 0; begin < held.size() && ok_;) {
      size_t end = begin;
      while (end < held.size() && held[end].node == held[begin].node) ++end;
      AddFillers(held[begin].node,
                 Peak(timeline, std::span(held).subspan(begin, end - begin), from));
      begin = end;
    }
  }

  ~Overlay() {
    for (size_t k = fillers_.size(); k-- > 0;) state_.Forget(fillers_[k].first, fillers_[k].second);
  }

  Overlay(const Overlay&) = delete;
  Overlay& operator=(const Overlay&) = delete;

  // False when a filler did not fit: the plan and the state disagree (the window is then
  // treated as unusable).
  bool ok() const { return ok_; }

 private:
  // The node's fullest load over the window, relative to the state at `from`: the load only
  // grows when a reservation starts, so the peaks are at `from` and at those starts.
  Load Peak(Timeline& timeline, std::span<const Held> on_node, TimePoint from) const {
    const int32_t node = on_node.front().node;
    const size_t devices = state_.node(node).gpus.size();
    auto load_at = [&](TimePoint t) {
      Load load(devices);
      for (const Held& h : on_node) {
        if (ActiveAt(*h.reservation, t)) {
          load.Add(h.reservation->tasks[h.task], h.reservation->placements[h.task], +1);
        }
      }
      timeline.SubtractReleased(node, from, t, load);
      return load;
    };
    Load peak = load_at(from);
    for (const Held& h : on_node) {
      if (h.reservation->start > from) peak.RaiseTo(load_at(h.reservation->start));
    }
    return peak;
  }

  void AddFillers(int32_t node, const Load& peak) {
    Placement at;
    at.node_index = node;
    at.node = state_.node(node).name;
    TaskRequest host;
    host.cpu = peak.cpu;
    host.memory = peak.memory;
    for (const auto& [name, value] : peak.extended) {
      if (value > 0) host.extended.emplace(name, value);
    }
    if (host.cpu > 0 || host.memory > 0 || !host.extended.empty()) Assume(std::move(host), at);
    // Devices with the same (milli-GPU, memory) go into one filler.
    std::map<std::pair<int64_t, int64_t>, absl::InlinedVector<int32_t, 8>> groups;
    for (size_t d = 0; d < peak.milli.size(); ++d) {
      if (peak.milli[d] > 0 || peak.gpu_memory[d] > 0) {
        groups[{peak.milli[d], peak.gpu_memory[d]}].push_back(static_cast<int32_t>(d));
      }
    }
    for (auto& [amount, devices] : groups) {
      TaskRequest filler;
      filler.gpu_count = static_cast<int32_t>(devices.size());
      filler.gpu_milli = amount.first;
      filler.gpu_memory = amount.second;
      Placement on_devices = at;
      on_devices.gpus = std::move(devices);
      on_devices.gpu_milli = amount.first;
      on_devices.gpu_memory = amount.second;
      Assume(std::move(filler), std::move(on_devices));
    }
  }

  void Assume(TaskRequest task, Placement placement) {
    if (!ok_) return;
    if (!state_.Assume(task, placement).ok()) {
      ok_ = false;
      return;
    }
    fillers_.emplace_back(std::move(task), std::move(placement));
  }

  ClusterState& state_;
  std::vector<std::pair<TaskRequest, Placement>> fillers_;  // assumed, in order
  bool ok_ = true;
};

// Plans one blocked job around the running jobs (through the timeline) and the reservations
// planned before it.
class JobSearch {
 public:
  JobSearch(Framework& framework, ClusterState& state, Timeline& timeline,
            std::span<const Reservation> planned, const BlockedJob& job)
      : framework_(framework), state_(state), timeline_(timeline), planned_(planned), job_(job) {}

  Reservation Run(TimePoint now) {
    Reservation r{.job = job_.job, .start = kNever, .time_limit = job_.time_limit};
    const auto n = static_cast<int32_t>(job_.tasks.size());
    if (n == 0 || job_.min_available < 1 || job_.min_available > n) return r;
    const std::vector<TimePoint> candidates = Candidates(now);
    const std::vector<TimePoint> worse = WorseningPoints(now);
    // Between two worsening points feasibility only grows with time: a stretch whose last
    // candidate does not fit is skipped after one attempt, else binary-searched. The final
    // stretch, which runs to the last release, is searched galloping from its start instead:
    // the cursor then moves only about as far as the answer.
    for (size_t first = 0; first < candidates.size();) {
      auto bound = std::lower_bound(worse.begin(), worse.end(), candidates[first]);
      const bool final = bound == worse.end();
      const size_t last = final ? candidates.size() - 1
                                : static_cast<size_t>(std::upper_bound(candidates.begin() + first,
                                                                       candidates.end(), *bound) -
                                                      candidates.begin()) -
                                      1;
      std::optional<size_t> found;
      if (final) {
        found = Gallop(candidates, first, last);
      } else if (FitsAt(candidates[last])) {
        found = Bisect(candidates, first, last);
      }
      if (found.has_value()) {
        r.start = candidates[*found];
        r.task_indices = best_.task_indices;
        r.placements = std::move(best_.placements);
        for (int32_t k : r.task_indices) r.tasks.push_back(job_.tasks[k]);
        return r;
      }
      first = last + 1;
    }
    return r;
  }

 private:
  // The instants at which the job may become placeable: now, and whenever a running job or an
  // earlier reservation releases something.
  std::vector<TimePoint> Candidates(TimePoint now) const {
    std::vector<TimePoint> ends;
    for (const Reservation& r : planned_) {
      const TimePoint end = r.End();
      if (end != kNever && end > now) ends.push_back(end);
    }
    std::sort(ends.begin(), ends.end());
    const std::vector<TimePoint>& releases = timeline_.instants();  // ascending, none before now
    std::vector<TimePoint> c;
    c.reserve(1 + releases.size() + ends.size());
    c.push_back(now);
    std::merge(std::upper_bound(releases.begin(), releases.end(), now), releases.end(),
               ends.begin(), ends.end(), std::back_inserter(c));
    c.erase(std::unique(c.begin(), c.end()), c.end());
    return c;
  }

  // The instants after which the job's window [t, t + limit) reaches one more earlier
  // reservation's start (so a later t may fit less): start - limit for each such reservation.
  std::vector<TimePoint> WorseningPoints(TimePoint now) const {
    std::vector<TimePoint> w;
    if (!job_.time_limit.has_value()) return w;  // the window reaches every start already
    const Duration limit = Window();
    for (const Reservation& r : planned_) {
      if (r.start != kNever && r.start - now > limit) w.push_back(r.start - limit);
    }
    std::sort(w.begin(), w.end());
    w.erase(std::unique(w.begin(), w.end()), w.end());
    return w;
  }

  // The job's window length: its time limit, at least one tick.
  Duration Window() const { return std::max(*job_.time_limit, Duration(1)); }

  // The first index in [first, last] whose candidate is feasible, given that feasibility does
  // not decrease along it; best_ then holds its placements. Probes start where the timeline
  // stands (where the previous job's search ended) and gallop away from it, 1, 2, 4, ... steps,
  // then bisect: the state moves about as far as the answer is from there.
  std::optional<size_t> Gallop(const std::vector<TimePoint>& candidates, size_t first,
                               size_t last) {
    const auto here =
        static_cast<size_t>(std::lower_bound(candidates.begin(), candidates.end(), timeline_.at()) -
                            candidates.begin());
    size_t probe = std::clamp(here, first, last);
    if (FitsAt(candidates[probe])) {
      for (size_t step = 1; probe > first; step *= 2) {
        const size_t below = probe - std::min(step, probe - first);
        if (!FitsAt(candidates[below])) return Bisect(candidates, below + 1, probe);
        probe = below;
      }
      return probe;
    }
    size_t low = probe + 1;  // every index below `low` is infeasible
    for (size_t step = 1; probe < last; step *= 2) {
      probe = std::min(probe + step, last);
      if (FitsAt(candidates[probe])) return Bisect(candidates, low, probe);
      low = probe + 1;
    }
    return std::nullopt;
  }

  // The first feasible index in [low, high], feasibility not decreasing along it and `high`
  // feasible with its placements in best_; best_ then holds the answer's.
  size_t Bisect(const std::vector<TimePoint>& candidates, size_t low, size_t high) {
    while (low < high) {
      const size_t mid = low + (high - low) / 2;
      if (FitsAt(candidates[mid])) {
        high = mid;
      } else {
        low = mid + 1;
      }
    }
    return high;
  }

  // Whether the gang fits throughout [t, t + limit); on success best_ holds the placements.
  bool FitsAt(TimePoint t) {
    timeline_.MoveTo(t);
    const TimePoint to = job_.time_limit.has_value() ? AddSaturating(t, Window()) : kNever;
    Overlay overlay(state_, timeline_, planned_, t, to);
    if (!overlay.ok()) return false;
    GangAttempt gang = framework_.ScheduleGang(state_, "", job_.tasks, job_.min_available,
                                               MatchMode::kWithoutAllocating);
    if (!gang.status.ok() || static_cast<int32_t>(gang.placements.size()) < job_.min_available) {
      return false;
    }
    best_ = std::move(gang);
    return true;
  }

  Framework& framework_;
  ClusterState& state_;
  Timeline& timeline_;
  std::span<const Reservation> planned_;
  const BlockedJob& job_;
  GangAttempt best_;
};

// Whether `job` (its load on the node, held from now) fits on the node at instant t beside the
// reservations of `on_node` active then, with what `releases` frees by t. Only the quantities
// the job takes are checked: a plan that already overcommits elsewhere is not the job's doing.
// Whole-device reservation tasks are checked by count (at their start the Framework may take
// any free devices, and starts come in order, so a count that fits at every start is an
// assignment); shared devices by identity.
bool FitsBeside(const ClusterState& state, int32_t node_index, const Load& job,
                std::span<const Held> on_node, std::span<const Freed> releases, TimePoint t) {
  const Node& node = state.node(node_index);
  Load load = job;
  int64_t whole_devices = 0;
  int64_t whole_memory = 0;  // the most device memory a whole-device task asks for
  for (const Held& h : on_node) {
    if (!ActiveAt(*h.reservation, t)) continue;
    const TaskRequest& task = h.reservation->tasks[h.task];
    const Placement& placement = h.reservation->placements[h.task];
    if (placement.gpu_milli >= kMilliGpuPerDevice) {
      load.AddHost(task, +1);
      whole_devices += static_cast<int64_t>(placement.gpus.size());
      whole_memory = std::max(whole_memory, placement.gpu_memory);
    } else {
      load.Add(task, placement, +1);
    }
  }
  for (const Freed& r : releases) {
    if (r.node == node_index && r.end <= t) load.Add(r.host, r.devices, -1);
  }
  if (job.cpu > 0 && node.allocated.cpu + load.cpu > node.allocatable.cpu) return false;
  if (job.memory > 0 && node.allocated.memory + load.memory > node.allocatable.memory) {
    return false;
  }
  for (const auto& [name, value] : job.extended) {
    if (value <= 0) continue;
    auto used = node.allocated.extended.find(name);
    auto capacity = node.allocatable.extended.find(name);
    const int64_t in_use = used == node.allocated.extended.end() ? 0 : used->second;
    const int64_t cap = capacity == node.allocatable.extended.end() ? 0 : capacity->second;
    auto added = load.extended.find(name);
    if (in_use + added->second > cap) return false;
  }
  bool job_has_devices = false;
  int64_t free_devices = 0;
  for (size_t d = 0; d < node.gpus.size(); ++d) {
    const GpuDevice& device = node.gpus[d];
    const int64_t milli = device.used_milli + load.milli[d];
    const int64_t memory = device.used_memory + load.gpu_memory[d];
    if (job.milli[d] > 0 || job.gpu_memory[d] > 0) {
      job_has_devices = true;
      if (milli > kMilliGpuPerDevice) return false;
      if (job.gpu_memory[d] > 0 && memory > device.memory) return false;
    }
    if (device.healthy && milli == 0 && memory == 0 && device.memory >= whole_memory) {
      ++free_devices;
    }
  }
  return !job_has_devices || whole_devices <= free_devices;
}

}  // namespace

TimePoint Reservation::End() const {
  if (start == kNever || !time_limit.has_value()) return kNever;
  return AddSaturating(start, std::max(*time_limit, Duration(1)));
}

BackfillPlanner::BackfillPlanner(Framework* framework) : framework_(framework) {}

BackfillPlanner::~BackfillPlanner() = default;

std::vector<Reservation> BackfillPlanner::Plan(ClusterState& state, TimePoint now,
                                               std::span<const PlannedRelease> running,
                                               std::span<const BlockedJob> blocked) {
  std::vector<Reservation> plan;
  plan.reserve(blocked.size());
  ReleaseIndex index(state, running);
  {
    Timeline timeline(state, now, index);
    for (const BlockedJob& job : blocked) {
      plan.push_back(JobSearch(*framework_, state, timeline, plan, job).Run(now));
    }
  }
  reserved_node_releases_ = std::make_unique<ReservedNodeReleases>(state, running, index, plan);
  return plan;
}

bool BackfillPlanner::Delays(ClusterState& state, TimePoint now,
                             std::span<const PlannedRelease> running,
                             std::span<const Reservation> reservations,
                             std::span<const TaskRequest> tasks,
                             std::span<const Placement> placements, TimePoint end) {
  if (end <= now) return false;                                 // holds nothing from now on
  if (!ValidPlacements(state, tasks, placements)) return true;  // cannot tell: the safe answer
  std::vector<int32_t> job_nodes;
  for (const Placement& p : placements) job_nodes.push_back(p.node_index);
  std::sort(job_nodes.begin(), job_nodes.end());
  job_nodes.erase(std::unique(job_nodes.begin(), job_nodes.end()), job_nodes.end());
  auto on_job_node = [&](int32_t node) {
    return std::binary_search(job_nodes.begin(), job_nodes.end(), node);
  };

  // Only reservations active at some instant of [now, end) can be touched, and only on the
  // job's nodes; a job ending before a reservation starts never delays it.
  auto overlaps = [&](const Reservation& r) {
    return r.start != kNever && r.start < end && r.End() > now;
  };
  for (const Reservation& r : reservations) {
    if (overlaps(r) && r.tasks.size() != r.placements.size()) return true;  // the safe answer
  }
  const std::vector<Held> held = HeldByNode(reservations, overlaps, on_job_node);
  for (const Held& h : held) {
    const Placement& p = h.reservation->placements[h.task];
    if (!ValidPlacements(state, std::span(&h.reservation->tasks[h.task], 1), std::span(&p, 1))) {
      return true;
    }
  }
  if (held.empty()) return false;

  // What running jobs release on those nodes, and when.
  std::vector<int32_t> shared_nodes;  // ascending: held is grouped by node
  for (const Held& h : held) {
    if (shared_nodes.empty() || shared_nodes.back() != h.node) shared_nodes.push_back(h.node);
  }
  std::vector<Freed> releases;
  const ReservedNodeReleases* known = reserved_node_releases_.get();
  if (known != nullptr && known->Covers(state, running) &&
      std::all_of(shared_nodes.begin(), shared_nodes.end(),
                  [&](int32_t node) { return known->Find(node) != nullptr; })) {
    for (int32_t node : shared_nodes) {
      const std::vector<Freed>& freed = *known->Find(node);
      releases.insert(releases.end(), freed.begin(), freed.end());
    }
    running = running.subspan(known->size());  // what was appended since the plan
  }
  for (const PlannedRelease& job : running) {
    if (job.end == kNever || !ValidPlacements(state, job.tasks, job.placements)) continue;
    for (size_t k = 0; k < job.placements.size(); ++k) {
      if (std::binary_search(shared_nodes.begin(), shared_nodes.end(),
                             job.placements[k].node_index)) {
        releases.emplace_back(job.end, job.tasks[k], job.placements[k]);
      }
    }
  }
  for (Freed& r : releases) r.end = std::max(r.end, now);  // overran its limit: ends now

  for (size_t begin = 0; begin < held.size();) {
    size_t stop = begin;
    const int32_t node_index = held[begin].node;
    while (stop < held.size() && held[stop].node == node_index) ++stop;
    const std::span<const Held> on_node = std::span(held).subspan(begin, stop - begin);
    begin = stop;

    const Node& node = state.node(node_index);
    Load job(node.gpus.size());
    for (size_t k = 0; k < placements.size(); ++k) {
      if (placements[k].node_index == node_index) job.Add(tasks[k], placements[k], +1);
    }
    // The node's load only grows when a reservation starts: check the job against each start
    // within [now, end) (now itself when a reservation is already active).
    for (const Held& at : on_node) {
      if (!FitsBeside(state, node_index, job, on_node, releases,
                      std::max(at.reservation->start, now))) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace tessera
