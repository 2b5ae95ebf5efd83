#include "sched/backfill/backfill_planner.h"

#include <algorithm>
#include <deque>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "sched/backfill/fit_count.h"
#include "sched/backfill/free_capacity.h"
#include "sched/backfill/node_load.h"

namespace tessera {
namespace {

constexpr TimePoint kNever = TimePoint::max();

// t + d, saturating at kNever; a negative d counts as zero.
TimePoint AddSaturating(TimePoint t, Duration d) {
  if (d <= Duration::zero()) return t;
  if (t == kNever || d >= kNever - t) return kNever;
  return t + d;
}


// Whether a task's placement names a node of the state and devices of that node.
bool ValidOn(const ClusterState& state, const Placement& p) {
  if (p.node_index < 0 || p.node_index >= state.size()) return false;
  const auto devices = static_cast<int32_t>(state.node(p.node_index).gpus.size());
  return std::all_of(p.gpus.begin(), p.gpus.end(),
                     [&](int32_t d) { return d >= 0 && d < devices; });
}

// Whether every placement is valid on the state, one per task.
bool ValidPlacements(const ClusterState& state, std::span<const TaskRequest> tasks,
                     std::span<const Placement> placements) {
  return tasks.size() == placements.size() &&
         std::all_of(placements.begin(), placements.end(),
                     [&](const Placement& p) { return ValidOn(state, p); });
}

// Subtracts from `load` what `releases` frees on `node` in (from, to], a release already past
// counting as now.
void SubtractFreed(const ClusterState& state, const ReleaseSchedule& releases, TimePoint now,
                      int32_t node, TimePoint from, TimePoint to, NodeLoad& load) {
  if (to <= from) return;
  for (const NodeRelease& r : releases.on_node(node)) {
    const TimePoint end = std::max(r.end, now);
    if (end > to) break;  // in end order
    if (end > from && ValidOn(state, *r.placement)) load.Add(*r.task, *r.placement, -1);
  }
}

// The state moved to any instant at or after now: the running tasks released by then forgotten,
// the others assumed. A task whose end is already past (it overran its limit) is released now;
// one on a node or device outside the state is held for ever. The destructor takes every
// forgotten task back, so the state ends exactly as it began.
class Timeline {
 public:
  Timeline(ClusterState& state, TimePoint now, const ReleaseSchedule& releases)
      : state_(state), now_(now), releases_(releases), next_(releases.by_end().begin()) {}

  ~Timeline() {
    while (next_ != releases_.by_end().begin()) {
      --next_;
      Apply(*next_->second, +1);
    }
  }

  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  const ReleaseSchedule& releases() const { return releases_; }

  // Moves the state to instant t: forgets every task released at or before t, takes back the
  // others.
  void MoveTo(TimePoint t) {
    const ReleaseSchedule::EndOrder& order = releases_.by_end();
    while (next_ != order.end() && std::max(next_->first.first, now_) <= t) {
      Apply(*next_->second, -1);
      ++next_;
    }
    while (next_ != order.begin() && std::max(std::prev(next_)->first.first, now_) > t) {
      --next_;
      Apply(*next_->second, +1);
    }
  }

  // Subtracts from `load` what is released on `node` in (from, to].
  void SubtractReleased(int32_t node, TimePoint from, TimePoint to, NodeLoad& load) const {
    SubtractFreed(state_, releases_, now_, node, from, to, load);
  }

 private:
  void Apply(const PlannedRelease& job, int sign) {
    for (size_t k = 0; k < job.tasks.size(); ++k) {
      const Placement& p = job.placements[k];
      if (!ValidOn(state_, p)) continue;
      if (sign < 0) {
        state_.Forget(job.tasks[k], p);
      } else {
        state_.Reassume(job.tasks[k], p);
      }
    }
  }

  ClusterState& state_;
  const TimePoint now_;
  const ReleaseSchedule& releases_;
  ReleaseSchedule::EndOrder::const_iterator next_;  // the first job not released
};

// The instants at which a blocked job may become placeable, ascending: now, then each later
// instant at which a running job or an earlier reservation releases something. Built only as
// far as it is read: a search reads about as far as its answer.
class Candidates {
 public:
  Candidates(const ReleaseSchedule& releases, TimePoint now, std::span<const Reservation> planned)
      : next_(releases.by_end().upper_bound({now, std::numeric_limits<int64_t>::max()})),
        end_(releases.by_end().end()) {
    for (const Reservation& r : planned) {
      const TimePoint end = r.End();
      if (end != kNever && end > now) reservation_ends_.push_back(end);
    }
    std::sort(reservation_ends_.begin(), reservation_ends_.end());
    built_.push_back(now);
  }

  // Whether there is an i-th instant.
  bool Has(size_t i) {
    while (built_.size() <= i && Extend()) {
    }
    return i < built_.size();
  }
  // REQUIRES: Has(i).
  TimePoint operator[](size_t i) const { return built_[i]; }
  // The index of the last instant (builds them all).
  size_t Last() {
    while (Extend()) {
    }
    return built_.size() - 1;
  }
  // The index of the first instant at or after t; past the last when none is.
  size_t LowerBound(TimePoint t) {
    while (built_.back() < t && Extend()) {
    }
    return static_cast<size_t>(std::lower_bound(built_.begin(), built_.end(), t) -
                               built_.begin());
  }
  // The index of the first instant after t; past the last when none is.
  size_t UpperBound(TimePoint t) {
    while (built_.back() <= t && Extend()) {
    }
    return static_cast<size_t>(std::upper_bound(built_.begin(), built_.end(), t) -
                               built_.begin());
  }

 private:
  // Appends the next instant; false when there is none.
  bool Extend() {
    const TimePoint last = built_.back();
    while (next_ != end_ && next_->first.first <= last) ++next_;
    while (next_end_ < reservation_ends_.size() && reservation_ends_[next_end_] <= last) {
      ++next_end_;
    }
    const TimePoint release = next_ == end_ ? kNever : next_->first.first;
    const TimePoint ends =
        next_end_ == reservation_ends_.size() ? kNever : reservation_ends_[next_end_];
    const TimePoint next = std::min(release, ends);
    if (next == kNever) return false;
    built_.push_back(next);
    return true;
  }

  ReleaseSchedule::EndOrder::const_iterator next_;
  ReleaseSchedule::EndOrder::const_iterator end_;
  std::vector<TimePoint> reservation_ends_;  // ascending
  size_t next_end_ = 0;
  std::vector<TimePoint> built_;
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

// Adds the planned tasks of `r` (when it has a start) to `held`, keeping it grouped by node (and,
// within a node, in the order the reservations were added).
void AddHeld(const Reservation& r, std::vector<Held>& held) {
  const auto before = static_cast<ptrdiff_t>(held.size());
  const std::vector<Held> added = HeldByNode(
      std::span(&r, 1), [](const Reservation&) { return true; }, [](int32_t) { return true; });
  held.insert(held.end(), added.begin(), added.end());
  std::inplace_merge(held.begin(), held.begin() + before, held.end(),
                     [](const Held& a, const Held& b) { return a.node < b.node; });
}

bool ActiveAt(const Reservation& r, TimePoint t) { return r.start <= t && t < r.End(); }


// The fullest load, per quantity, that the planned tasks of `held` (grouped by node) put on each
// of their nodes during [from, to), relative to the state at `from` (the timeline standing
// there), for every node one of them holds in that window. The load grows only when a
// reservation starts, so a node's peak is at `from` or at one of those starts.
std::vector<NodePeak> Peaks(const ClusterState& state, const Timeline& timeline,
                            std::span<const Held> held, TimePoint from, TimePoint to) {
  std::vector<NodePeak> peaks;
  absl::InlinedVector<const Held*, 16> in_window;
  for (size_t begin = 0; begin < held.size();) {
    const int32_t node = held[begin].node;
    in_window.clear();
    for (; begin < held.size() && held[begin].node == node; ++begin) {
      const Reservation& r = *held[begin].reservation;
      if (r.start < to && r.End() > from) in_window.push_back(&held[begin]);
    }
    if (in_window.empty()) continue;
    const size_t devices = state.node(node).gpus.size();
    auto load_at = [&](TimePoint t) {
      NodeLoad load(devices);
      for (const Held* h : in_window) {
        if (ActiveAt(*h->reservation, t)) {
          load.Add(h->reservation->tasks[h->task], h->reservation->placements[h->task], +1);
        }
      }
      timeline.SubtractReleased(node, from, t, load);
      return load;
    };
    NodeLoad peak = load_at(from);
    for (const Held* h : in_window) {
      if (h->reservation->start > from) peak.RaiseTo(load_at(h->reservation->start));
    }
    peaks.push_back(NodePeak{node, std::move(peak)});
  }
  return peaks;
}

// Filler tasks that raise every node of `peaks` by its peak: the state (moved to the window's
// start) then shows what is free throughout the window, and a gang placed onto it overlaps no
// reservation. Assumed on construction, forgotten on destruction.
class Overlay {
 public:
  Overlay(ClusterState& state, std::span<const NodePeak> peaks) : state_(state) {
    for (const NodePeak& peak : peaks) {
      if (!ok_) break;
      AddFillers(peak.node, peak.load);
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
  void AddFillers(int32_t node, const NodeLoad& peak) {
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

// The free capacity as a plan moves along the schedule, and the FitCounts that follow it (kept
// across plans: the few last distinct smallest tasks). Rewinds both when the plan is done.
class CapacityCursor {
 public:
  CapacityCursor(FreeCapacity& free, std::deque<FitCount>& counts,
                 const ReleaseSchedule& releases, TimePoint now)
      : free_(free), counts_(counts), releases_(releases), now_(now) {}
  ~CapacityCursor() { free_.Rewind([&](int32_t node) { Update(node); }); }

  CapacityCursor(const CapacityCursor&) = delete;
  CapacityCursor& operator=(const CapacityCursor&) = delete;

  const FreeCapacity& free() const { return free_; }
  // The instant last moved to (TimePoint::min() before any move: now).
  TimePoint at() const { return at_; }

  // The count for `task`, kept up to date from here on.
  FitCount& CountFor(SmallestTask task) {
    for (FitCount& count : counts_) {
      if (count.task() == task) return count;
    }
    if (counts_.size() == kKept) counts_.pop_front();  // no search holds it: one at a time
    return counts_.emplace_back(free_, std::move(task));
  }

  void MoveTo(TimePoint t) {
    at_ = t;
    free_.MoveTo(releases_, now_, t, [&](int32_t node) { Update(node); });
  }

 private:
  static constexpr size_t kKept = 4;

  void Update(int32_t node) {
    for (FitCount& count : counts_) count.Update(free_, node);
  }

  FreeCapacity& free_;
  std::deque<FitCount>& counts_;  // stable addresses
  const ReleaseSchedule& releases_;
  const TimePoint now_;
  TimePoint at_ = TimePoint::min();
};

// Plans one blocked job around the running jobs (through the timeline and the capacity cursor)
// and the reservations planned before it.
class JobSearch {
 public:
  // `held` lists the planned tasks of `planned`, grouped by node (AddHeld).
  JobSearch(Framework& framework, ClusterState& state, Timeline& timeline,
            CapacityCursor& cursor, std::span<const Reservation> planned,
            std::span<const Held> held, const BlockedJob& job)
      : framework_(framework),
        state_(state),
        timeline_(timeline),
        cursor_(cursor),
        planned_(planned),
        held_(held),
        job_(job),
        fits_(cursor.CountFor(SmallestTask(job.tasks))) {}

  Reservation Run(TimePoint now) {
    Reservation r{.job = job_.job, .start = kNever, .time_limit = job_.time_limit};
    Candidates candidates(timeline_.releases(), now, planned_);
    const std::vector<TimePoint> worse = WorseningPoints(now);
    // Between two worsening points feasibility only grows with time. Each stretch (the final
    // one runs to the last release) is searched twice, galloping from where the previous search
    // left the capacity cursor so that it moves only about as far as the answer: first for the
    // earliest instant at which the free capacity, counted per node with the earlier
    // reservations' peaks, could hold the gang (Plausible: no earlier instant can fit), then,
    // from there, for the earliest at which the Framework places it — one attempt when the count
    // is exact, as for gangs of whole devices with nothing else to match.
    for (size_t first = 0; candidates.Has(first);) {
      auto bound = std::lower_bound(worse.begin(), worse.end(), candidates[first]);
      const bool final = bound == worse.end();
      const size_t last = final ? kOpen : candidates.UpperBound(*bound) - 1;
      std::optional<size_t> found;
      size_t probe = std::max(candidates.LowerBound(cursor_.at()), first);
      if (!candidates.Has(probe)) probe = candidates.Last();
      probe = std::min(probe, last);
      const std::optional<size_t> plausible = GallopFrom(
          candidates, first, last, probe, [&](size_t i) { return Plausible(candidates[i]); });
      if (plausible.has_value()) {
        found = GallopFrom(candidates, *plausible, last, *plausible,
                           [&](size_t i) { return Feasible(candidates[i]); });
      }
      if (found.has_value()) {
        r.start = candidates[*found];
        r.task_indices = best_.task_indices;
        r.placements = std::move(best_.placements);
        for (int32_t k : r.task_indices) r.tasks.push_back(job_.tasks[k]);
        return r;
      }
      if (final) break;
      first = last + 1;
    }
    return r;
  }

 private:
  static constexpr size_t kOpen = std::numeric_limits<size_t>::max();  // a stretch without end

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
  // The end of the window that starts at t.
  TimePoint WindowEnd(TimePoint t) const {
    return job_.time_limit.has_value() ? AddSaturating(t, Window()) : kNever;
  }

  // Whether the free capacity throughout the window from t, counted per node (FitCount, with
  // the earlier reservations' peaks), could hold min_available of the job's tasks: where it
  // cannot, the gang does not fit. Moves the capacity cursor to t; `peaks` gets the window's.
  bool Plausible(TimePoint t, std::vector<NodePeak>& peaks) {
    cursor_.MoveTo(t);
    if (fits_.total() < job_.min_available) return false;  // even without the reservations
    peaks = Peaks(state_, timeline_, held_, t, WindowEnd(t));
    return fits_.TotalWith(cursor_.free(), peaks) >= job_.min_available;
  }
  bool Plausible(TimePoint t) {
    std::vector<NodePeak> peaks;
    return Plausible(t, peaks);
  }

  // Whether the gang fits throughout the window from t, asking the Framework (with the state
  // moved to t) only when the count is plausible; on success best_ holds the placements.
  bool Feasible(TimePoint t) {
    std::vector<NodePeak> peaks;
    if (!Plausible(t, peaks)) return false;
    timeline_.MoveTo(t);
    return FitsAt(peaks);
  }

  // The first index in [first, last] (kOpen: to the last candidate) at which `holds` is true,
  // given that it does not turn false from there on; nullopt when it holds nowhere. Probes
  // start at `probe` and gallop away from it, 1, 2, 4, ... steps, then bisect. When `holds`
  // records something on success (FitsAt's placements), the last success is the answer's.
  template <typename Holds>
  static std::optional<size_t> GallopFrom(Candidates& candidates, size_t first, size_t last,
                                          size_t probe, Holds holds) {
    if (holds(probe)) {
      for (size_t step = 1; probe > first; step *= 2) {
        const size_t below = probe - std::min(step, probe - first);
        if (!holds(below)) return BisectBy(below + 1, probe, holds);
        probe = below;
      }
      return probe;
    }
    size_t low = probe + 1;  // it holds at no index below `low`
    for (size_t step = 1; probe < last && candidates.Has(probe + 1); step *= 2) {
      probe = std::min(candidates.Has(probe + step) ? probe + step : candidates.Last(), last);
      if (holds(probe)) return BisectBy(low, probe, holds);
      low = probe + 1;
    }
    return std::nullopt;
  }

  // The first index in [low, high] at which `holds` is true, given that it holds at `high` and
  // does not turn false along the range.
  template <typename Holds>
  static size_t BisectBy(size_t low, size_t high, Holds holds) {
    while (low < high) {
      const size_t mid = low + (high - low) / 2;
      if (holds(mid)) {
        high = mid;
      } else {
        low = mid + 1;
      }
    }
    return high;
  }

  // Whether the Framework places the gang onto the state (the timeline standing at the
  // window's start) with the peaks of the window assumed; on success best_ holds the
  // placements.
  bool FitsAt(std::span<const NodePeak> peaks) {
    Overlay overlay(state_, peaks);
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
  CapacityCursor& cursor_;
  std::span<const Reservation> planned_;
  std::span<const Held> held_;  // the planned tasks of every earlier reservation, by node
  const BlockedJob& job_;
  FitCount& fits_;
  GangAttempt best_;
};


// Whether a blocked job can be planned at all: some tasks, min_available in [1, tasks].
bool Plannable(const BlockedJob& job) {
  return job.min_available >= 1 && job.min_available <= static_cast<int64_t>(job.tasks.size());
}

// The reservation of a job that gets no start.
Reservation NoStart(const BlockedJob& job) {
  return Reservation{.job = job.job, .start = kNever, .time_limit = job.time_limit};
}

// Whether `job` (its load on the node, held from now) fits on the node at instant t beside the
// reservations of `on_node` active then, with what `releases` frees by t. Only the quantities
// the job takes are checked: a plan that already overcommits elsewhere is not the job's doing.
// Whole-device reservation tasks are checked by count (at their start the Framework may take
// any free devices, and starts come in order, so a count that fits at every start is an
// assignment); shared devices by identity.
bool FitsBeside(const ClusterState& state, int32_t node_index, const NodeLoad& job,
                std::span<const Held> on_node, const ReleaseSchedule& releases, TimePoint now,
                TimePoint t) {
  const Node& node = state.node(node_index);
  NodeLoad load = job;
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
  SubtractFreed(state, releases, now, node_index, TimePoint::min(), t, load);
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

std::vector<Reservation> BackfillPlanner::Plan(ClusterState& state, TimePoint now,
                                               const ReleaseSchedule& releases,
                                               std::span<const BlockedJob> blocked) {
  std::vector<Reservation> plan;
  plan.reserve(blocked.size());  // never reallocated: `held` points into it
  Timeline timeline(state, now, releases);
  SyncFree(state);
  CapacityCursor cursor(free_now_, fit_counts_, releases, now);
  std::vector<Held> held;  // the planned tasks of `plan`, by node
  for (const BlockedJob& job : blocked) {
    plan.push_back(Plannable(job)
                       ? JobSearch(*framework_, state, timeline, cursor, plan, held, job).Run(now)
                       : NoStart(job));
    AddHeld(plan.back(), held);
  }
  return plan;
}

Reservation BackfillPlanner::PlanNext(ClusterState& state, TimePoint now,
                                      const ReleaseSchedule& releases,
                                      std::span<const Reservation> planned,
                                      const BlockedJob& job) {
  Timeline timeline(state, now, releases);
  const std::vector<Held> held = HeldByNode(
      planned, [](const Reservation&) { return true; }, [](int32_t) { return true; });
  if (!Plannable(job)) return NoStart(job);
  SyncFree(state);
  CapacityCursor cursor(free_now_, fit_counts_, releases, now);
  return JobSearch(*framework_, state, timeline, cursor, planned, held, job).Run(now);
}

void BackfillPlanner::SyncFree(const ClusterState& state) {
  const bool followed = free_now_.Sync(state, [&](int32_t node) {
    for (FitCount& count : fit_counts_) count.Update(free_now_, node);
  });
  if (!followed) fit_counts_.clear();  // counted afresh when next asked for
}

bool BackfillPlanner::Delays(const ClusterState& state, TimePoint now,
                             const ReleaseSchedule& releases,
                             std::span<const Reservation> reservations,
                             std::span<const TaskRequest> tasks,
                             std::span<const Placement> placements, TimePoint end) const {
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

  for (size_t begin = 0; begin < held.size();) {
    size_t stop = begin;
    const int32_t node_index = held[begin].node;
    while (stop < held.size() && held[stop].node == node_index) ++stop;
    const std::span<const Held> on_node = std::span(held).subspan(begin, stop - begin);
    begin = stop;

    const Node& node = state.node(node_index);
    NodeLoad job(node.gpus.size());
    for (size_t k = 0; k < placements.size(); ++k) {
      if (placements[k].node_index == node_index) job.Add(tasks[k], placements[k], +1);
    }
    // The node's load only grows when a reservation starts: check the job against each start
    // within [now, end) (now itself when a reservation is already active).
    for (const Held& at : on_node) {
      if (!FitsBeside(state, node_index, job, on_node, releases, now,
                      std::max(at.reservation->start, now))) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace tessera
