// SlurmCluster's poll thread: its loop and wake-ups, and the reads of slurmrestd's node and job
// lists (slurm_cluster.h, "Polling"). The launches, cancellations and resync are in
// slurm_cluster.cc.
#include <algorithm>
#include <memory>
#include <set>
#include <utility>

#include "absl/strings/str_join.h"
#include "agent/slurm/slurm_cluster.h"
#include "agent/slurm/slurm_jobcomp_line.h"
#include "fmt/format.h"

namespace tessera::agent {

void SlurmCluster::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || work_ || poll_due_; });
    if (stopping_) return;
    const bool poll = poll_due_;
    work_ = false;
    poll_due_ = false;
    lock.unlock();
    bool submitted = false;
    std::optional<Duration> wait;
    {
      std::lock_guard<std::mutex> rest(rest_mu_);
      ReadNoticed();
      submitted = SubmitQueued();
      SendSignals();
      if (poll) wait = Poll();
    }
    // A job just submitted is followed at the active pace, however long the wait was.
    if (wait.has_value()) PollBy(clock_.Now() + *wait);
    if (submitted) PollBy(clock_.Now() + options_.active_poll_interval);
    lock.lock();
  }
}

TimerId SlurmCluster::ArmLocked(TimePoint at, bool poll) {
  auto id = std::make_shared<TimerId>(0);
  // The callback takes mu_, held here, so it reads *id only once it is set.
  *id = timers_->Arm(at, [this, id, poll] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      armed_.erase(*id);
      if (poll) {
        poll_due_ = true;
        if (poll_timer_ == *id) poll_timer_ = 0;
      } else {
        work_ = true;
      }
    }
    wake_.notify_all();
  });
  armed_.insert(*id);
  return *id;
}

void SlurmCluster::PollBy(TimePoint at) {
  TimerId superseded = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || poll_due_ || (poll_timer_ != 0 && poll_at_ <= at)) return;
    superseded = poll_timer_;
    poll_timer_ = ArmLocked(at, /*poll=*/true);
    poll_at_ = at;
    armed_.erase(superseded);
  }
  if (superseded != 0) timers_->Cancel(superseded);
}

void SlurmCluster::MeasureSlurmClock() {
  absl::StatusOr<int64_t> slurm_now = client_.SlurmTime();
  const TimePoint after = clock_.Now();
  if (!slurm_now.ok()) {
    Log(
        fmt::format("reading slurmctld's clock: {} (the node and job lists are read whole at "
                    "every poll)",
                    std::string(slurm_now.status().message())));
    return;
  }
  // slurmctld answered at some instant before `after`, in the second it named or later.
  slurm_offset_ = Duration(*slurm_now * 1000) - after.time_since_epoch();
}

std::optional<int64_t> SlurmCluster::SlurmSecond(TimePoint t) const {
  if (!slurm_offset_.has_value()) return std::nullopt;
  const int64_t ms = (t.time_since_epoch() + *slurm_offset_).count();
  return ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
}

bool SlurmCluster::OutstandingLocked() const {
  return reconcile_pending_ || std::any_of(tasks_.begin(), tasks_.end(),
                                           [](const auto& entry) { return !entry.second->ended; });
}

bool SlurmCluster::FollowsLocked(int64_t job_id) const {
  return std::any_of(tasks_.begin(), tasks_.end(), [job_id](const auto& entry) {
    return !entry.second->ended && entry.second->job_id == job_id;
  });
}

void SlurmCluster::Notice(const SlurmJob& logged) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || !FollowsLocked(logged.id)) return;
    NoticedEnd& noticed = noticed_[logged.id];
    if (TellsWholeEnd(logged)) noticed.whole = logged;
    work_ = true;
  }
  wake_.notify_all();
}

void SlurmCluster::ReadNoticed() {
  std::map<int64_t, NoticedEnd> noticed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    noticed.swap(noticed_);
  }
  if (noticed.empty()) return;
  std::vector<SlurmJob> whole;
  std::vector<int64_t> to_read;
  for (auto& [job_id, end] : noticed) {
    if (end.whole.has_value()) {
      whole.push_back(*std::move(end.whole));
    } else {
      to_read.push_back(job_id);
    }
  }
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<int64_t> ignored = ApplyJobsLocked(whole, events);  // the others: not news
  }
  ReadJobs(to_read, events);
  CancelAndDeliver({}, events);
  std::lock_guard<std::mutex> lock(mu_);
  bool again = false;
  for (int64_t job_id : to_read) {
    const int reads = noticed[job_id].reads + 1;
    if (reads >= kNoticeReads || !FollowsLocked(job_id)) continue;
    noticed_[job_id].reads = reads;  // still ending, or the read failed
    again = true;
  }
  if (again && !stopping_) ArmLocked(clock_.Now() + kNoticeRetry, /*poll=*/false);
}

Duration SlurmCluster::Poll() {
  const TimePoint start = clock_.Now();
  const bool each = ReadsEachJob();
  // Reading each job, the node list (answered 304 while no job started or ended anywhere) is
  // what tells whether the jobs are worth reading.
  bool nodes_changed = true;
  if (start >= nodes_due_ || each) {
    nodes_due_ = start + options_.poll_interval;
    const absl::StatusOr<bool> changed = RefreshInventory();
    nodes_changed = !changed.ok() || *changed;
    LogChange("nodes", changed.ok() ? ""
                                    : fmt::format("{} (the last inventory is kept)",
                                                  std::string(changed.status().message())));
  }
  const bool skip =
      each && !nodes_changed && !jobs_dirty_ && start < jobs_read_at_ + options_.poll_interval;
  const bool read = skip || PollJobs(each);
  bool outstanding = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    outstanding = OutstandingLocked();
  }
  return interval_.Next(outstanding, !read, clock_.Now() - start);
}

bool SlurmCluster::ReadsEachJob() {
  std::lock_guard<std::mutex> lock(mu_);
  if (reconcile_pending_ || !jobs_since_.has_value()) return false;
  size_t followed = 0;
  for (const auto& [id, task] : tasks_) {
    if (task->adopting) return false;  // to be found by its comment in the whole list
    if (!task->ended && task->job_id.has_value()) ++followed;
  }
  return followed * kJobReadCost < list_entries_;
}

absl::StatusOr<bool> SlurmCluster::RefreshInventory() {
  const std::optional<int64_t> sent = SlurmSecond(clock_.Now());
  absl::StatusOr<std::optional<std::string>> body =
      nodes_since_.has_value() ? client_.NodesChangedSince(*nodes_since_)
                               : absl::StatusOr<std::optional<std::string>>(client_.Nodes());
  if (!body.ok()) {
    return absl::Status(body.status().code(), fmt::format("reading the node list: {}",
                                                          std::string(body.status().message())));
  }
  if (!body->has_value()) {  // nothing changed
    std::lock_guard<std::mutex> lock(mu_);
    OfferLocked();
    return false;
  }
  absl::StatusOr<SlurmNodeList> list = ParseSlurmNodes(**body, inventory_options_);
  if (!list.ok()) return list.status();
  LogChange("node entries", absl::StrJoin(list->errors, "\n"));
  std::vector<NodeUsage> usage;
  std::map<std::string, std::string, std::less<>> addresses;
  for (const SlurmNode& node : list->nodes) {
    addresses[node.node.name] = node.address;
    usage.push_back(node.usage);
  }
  nodes_since_ = sent;
  std::lock_guard<std::mutex> lock(mu_);
  slurm_nodes_ = std::move(list->nodes);
  usage_ = std::move(usage);
  addresses_ = std::move(addresses);
  OfferLocked();
  return true;
}

void SlurmCluster::OfferLocked() {
  std::map<std::string, TesseraOnNode, std::less<>> tessera;
  for (const auto& [id, task] : tasks_) {
    if (task->ended) continue;
    TesseraOnNode& on = tessera[task->node];
    on.devices.insert(task->devices.begin(), task->devices.end());
    on.held.cpu += task->request.cpu;
    on.held.memory += task->request.memory;
    on.held.gpus += task->request.gpus;
  }
  nodes_.clear();
  for (const SlurmNode& node : slurm_nodes_) {
    auto on = tessera.find(node.node.name);
    nodes_.push_back(OfferedNode(node, on != tessera.end() ? on->second : TesseraOnNode{}));
  }
}

bool SlurmCluster::PollJobs(bool each) {
  bool whole = !jobs_since_.has_value();
  {
    // Nothing to follow: the job list (all of Slurm's jobs) is not worth fetching.
    std::lock_guard<std::mutex> lock(mu_);
    const bool following = std::any_of(tasks_.begin(), tasks_.end(), [](const auto& entry) {
      return !entry.second->ended && entry.second->submit_body.empty();
    });
    if (!following && !reconcile_pending_) return true;
    // Jobs to find by comment need the whole list, changed or not.
    whole = whole || reconcile_pending_ ||
            std::any_of(tasks_.begin(), tasks_.end(),
                        [](const auto& entry) { return entry.second->adopting; });
  }
  jobs_read_at_ = clock_.Now();
  jobs_dirty_ = false;
  if (each && !whole) return ReadEachJob();
  const std::optional<int64_t> sent = SlurmSecond(clock_.Now());
  absl::StatusOr<std::optional<SlurmJobList>> reply =
      whole ? absl::StatusOr<std::optional<SlurmJobList>>(client_.Jobs())
            : client_.JobsChangedSince(*jobs_since_);
  LogChange("jobs", reply.ok() ? ""
                               : fmt::format("reading the job list: {}",
                                             std::string(reply.status().message())));
  if (!reply.ok()) {
    jobs_dirty_ = true;
    return false;
  }
  if (!reply->has_value()) return true;  // nothing changed since the last read
  jobs_since_ = sent;
  const SlurmJobList& list = **reply;
  list_entries_ = list.jobs.size() + list.errors.size();
  LogChange("job entries", absl::StrJoin(list.errors, "\n"));
  std::vector<Event> events;
  std::vector<int64_t> orphans;
  std::vector<int64_t> missing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    MatchJobsLocked(list, reconcile_pending_, events, orphans);
    reconcile_pending_ = false;
    missing = ApplyJobsLocked(list.jobs, events);
  }
  ReadJobs(missing, events);
  CancelAndDeliver(std::move(orphans), events);
  return true;
}

bool SlurmCluster::ReadEachJob() {
  std::vector<int64_t> followed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, task] : tasks_) {
      if (!task->ended && task->job_id.has_value()) followed.push_back(*task->job_id);
    }
  }
  std::vector<SlurmJob> jobs;
  for (int64_t job_id : followed) {
    absl::StatusOr<std::optional<SlurmJob>> job = client_.Job(job_id);
    LogChange("jobs", job.ok() ? ""
                               : fmt::format("reading Slurm job {}: {}", job_id,
                                             std::string(job.status().message())));
    if (!job.ok()) {
      jobs_dirty_ = true;
      return false;
    }
    if (job->has_value()) jobs.push_back(**std::move(job));
  }
  std::vector<Event> events;
  std::vector<int64_t> missing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    missing = ApplyJobsLocked(jobs, events);
  }
  ReadJobs(missing, events);
  CancelAndDeliver({}, events);
  return true;
}

void SlurmCluster::CancelAndDeliver(std::vector<int64_t> orphans,
                                    const std::vector<Event>& events) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    orphans.insert(orphans.end(), requeued_.begin(), requeued_.end());
    requeued_.clear();
  }
  for (int64_t job_id : orphans) {
    Log(fmt::format("cancelling Slurm job {}: a Tessera task the control plane does not know",
                    job_id));
    absl::Status cancelled = client_.Signal(job_id, "");
    if (!cancelled.ok()) Log(std::string(cancelled.message()));
  }
  Deliver(events);
}

}  // namespace tessera::agent
