// SlurmCluster: a Slurm cluster as a Tessera Cluster (tessera/cluster/cluster.h), through
// slurmrestd's REST API (v0.0.38 to v0.0.43: Slurm 22.05 to 25.05, slurm_api_version.h) with
// JWT authentication. `tessera agent --backend slurm` runs one and relays it to the control
// plane; docs/agents/slurm.md is the operator's guide.
//
// Tessera places each task on one Slurm node; the task becomes one Slurm batch job pinned to
// that node. Slurm remains the owner of its nodes: it accounts CPUs, memory and GPUs itself and
// may run other users' jobs beside Tessera's.
//
//   Tessera                        Slurm
//   Inventory() node               a node of GET /nodes (slurm_inventory.h has the field map):
//                                  cpus x 1000 millicores, real_memory MiB as bytes, one
//                                  GpuDevice per "gpu" GRES (model from the GRES type), pool =
//                                  first partition, labels + tessera.io/partitions
//   node allocatable               capacity less what Slurm's other ("foreign") jobs hold:
//                                  alloc_cpus, alloc_memory and gres_used less the requests of
//                                  Tessera's jobs there not seen ending at that read; GPUs
//                                  others hold become unhealthy devices (slurm_offer.h)
//   condition kDown                state DOWN, FAIL, FUTURE or NOT_RESPONDING
//   unschedulable                  DRAIN, DRAINING, DRAINED
//   Usage()                        cpu_load (x100) as millicores, alloc_memory MiB as bytes
//   Launch(spec)                   POST /job/submit: a batch job named <launch id>, comment
//                                  "tessera:<launch id>", nodelist = placement.node, gres
//                                  gpu:<devices>, time_limit in minutes (rounded up), the
//                                  task's env, cwd, and stdout/stderr files in `log_dir`
//                                  (slurm_submit.h)
//   OnTaskStarted                  the job is seen RUNNING (its start_time)
//   OnTaskEnded                    the job's final state (slurm_jobs.h has the table):
//                                  COMPLETED → Succeeded; FAILED, exit n → Failed "Error" n;
//                                  CANCELLED → Cancelled; TIMEOUT → "TimeLimitExceeded";
//                                  NODE_FAIL → "Lost"; refused submission → "StartFailed";
//                                  a job Slurm forgot before it was seen ending → "Lost"
//   Cancel(id, grace)              DELETE /job/{id}?signal=TERM, then DELETE /job/{id} (Slurm's
//                                  cancel) after `grace`; with no grace Slurm's cancel at once
//                                  (SIGTERM, SIGKILL after its KillWait); ends Cancelled
//   Recover(known)                 GET /jobs: Tessera's jobs are matched by comment (or, for a
//                                  known launch, name); known and still queued or running →
//                                  kept; known and ended → their outcome; known and unknown to
//                                  Slurm → Failed "LostOnRestart"; Tessera's jobs not in
//                                  `known` → cancelled
//   ReadLog                        reads the job's output file, when the agent's host can
//                                  (log_dir on a shared filesystem, or a single-host cluster);
//                                  FailedPrecondition when it cannot
//
// Polling (docs/agents/slurm.md, "Polling"): one thread submits queued launches at once (up to
// `concurrent_submissions` in flight, each on its own connection), sends cancellations, and asks
// slurmrestd for the jobs — every `active_poll_interval` (200 ms) while Tessera has jobs in Slurm
// that have not been seen ending, every `poll_interval` (1 s) when it has none, backing off after
// failures (slurm_poll_interval.h) — and for the nodes every `poll_interval`. Both reads are
// incremental: `?update_time=` the second of the last read, on slurmctld's clock (measured once at
// Create through GET /diag), so a poll in which nothing changed is answered 304 and nothing is
// re-read; one read of the job list covers all of Tessera's jobs — or, beside a list more than
// kJobReadCost times longer than the jobs followed, GET /job/{id} for each of them when the node
// list shows a change. Inventory() and Usage() return the last good read and never wait for the
// network; when a poll fails (slurmrestd down, a bad token) the error is logged once and the
// previous inventory is kept. A malformed node or job entry is logged and left out; the rest of the
// reply is used. With `jobcomp_file`, Slurm's job-completion log is followed
// (slurm_jobcomp_follower.h): a followed job it names is read alone at once, and the job list
// only every `poll_interval`.
//
// Time: timestamps (task start and end) are Slurm's, in whole seconds; the injected Clock is
// used where Slurm gives none, for the poll intervals and for cancellation grace periods, whose
// wake-ups come from the injected Timers (a TimerThread over the clock when none are given; a
// SimulatedClock in tests moves them by hand).
// Thread-safety: as Cluster — every method may be called from any thread; observer
// callbacks arrive on the poll thread or the caller's (Launch, Recover), with no lock held.
// Errors: Create fails with InvalidArgument for bad options (naming the flag and the
// environment variable) or a partition without nodes, FailedPrecondition when slurmrestd serves
// none of the supported versions, and Unavailable/Unauthenticated when the version probe or the
// first node list cannot be read.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/common/changed_lines.h"
#include "agent/slurm/slurm_api_version.h"
#include "agent/slurm/slurm_inventory.h"
#include "agent/slurm/slurm_jobcomp_follower.h"
#include "agent/slurm/slurm_jobs.h"
#include "agent/slurm/slurm_offer.h"
#include "agent/slurm/slurm_poll_interval.h"
#include "agent/slurm/slurm_rest_client.h"
#include "agent/slurm/slurm_submit.h"
#include "tessera/cluster/cluster.h"
#include "tessera/common/clock.h"
#include "tessera/common/timers.h"

namespace tessera::agent {

// One GET /job/{id} costs slurmrestd 22.05 about as much CPU as this many entries of the job
// list (2.4 ms against 0.2 ms per entry, measured on this project's development machine).
inline constexpr size_t kJobReadCost = 12;
// A noticed job still ending (COMPLETING) is read again after kNoticeRetry, at most
// kNoticeReads times in all.
inline constexpr int kNoticeReads = 10;
inline constexpr Duration kNoticeRetry{20};

// The REST API version setting as a version: nullopt for "" and "auto" (probe slurmrestd);
// InvalidArgument naming --slurm-api-version and SLURM_REST_API_VERSION for an unsupported one.
absl::StatusOr<std::optional<SlurmApiVersion>> ParseSlurmApiVersionSetting(
    std::string_view setting);

// Reads one environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;

struct SlurmClusterOptions {
  std::string name = "slurm";          // the cluster's name in Tessera
  Labels labels;                       // cluster labels; tessera.io/cluster is added
  std::string url;                     // slurmrestd: "http://slurm-ctl:6820"
  std::string jwt;                     // token for X-SLURM-USER-TOKEN (scontrol token)
  std::string jwt_file;                // or: a file holding it, read again whenever it changes
  std::string user;                    // X-SLURM-USER-NAME: the jobs run as this user
  std::string api_version;             // "v0.0.43"; "" or "auto" = probed (slurm_api_probe.h)
  std::string partition;               // only this partition's nodes, jobs go there; "" = all
  Duration poll_interval{1000};        // nodes; and jobs while none of Tessera's are in Slurm
  Duration active_poll_interval{200};  // jobs while Tessera's are in Slurm; at most poll_interval
  Duration request_timeout{10000};     // per REST request
  // Submissions in flight at once, each on a connection of its own (at least 1): a burst of
  // launches (a gang, or many slots freed together) reaches Slurm this many at a time.
  int concurrent_submissions = 4;
  // Slurm's job-completion log (JobCompLoc of jobcomp/filetxt; slurm_jobcomp_follower.h),
  // "" = none: polls alone. With it, a job whose end is logged is read at once, and the job
  // list only every `poll_interval` (starts are then seen within it; ends at once).
  std::string jobcomp_file;
  Duration jobcomp_interval{20};  // how often the log is looked at
  // Where jobs write stdout/stderr (must exist on the nodes; readable by the agent for logs).
  std::string log_dir = "/tmp";
  // The working directory of tasks whose spec names none (must exist on the nodes).
  std::string working_dir = "/tmp";
  // The environment under every task's own (Slurm passes nothing else to REST jobs).
  std::map<std::string, std::string> base_env = {
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}};
  // Model and memory for GRES types whose name is not the model Tessera's jobs ask for.
  std::map<std::string, SlurmGpuType, std::less<>> gpu_types;
  const Clock* clock = nullptr;  // nullptr = the system clock
  // Wake-ups at the clock's instants (polls, kills after a grace); nullptr = a TimerThread of
  // the cluster's own over `clock`. Must outlive the cluster.
  Timers* timers = nullptr;
  // One line per notable event (poll failures, malformed entries), from any thread;
  // nullptr = stderr.
  std::function<void(std::string_view)> log;
  // The REST transport; nullptr = HTTP(S) to `url` (tests inject an in-memory Slurm).
  std::shared_ptr<SlurmTransport> transport;

  // `flags` completed from the environment: SLURM_REST_URL, SLURM_JWT, SLURM_REST_USER and
  // SLURM_REST_API_VERSION fill the fields the flags left empty (flags win). The token comes
  // from the first of: jwt_file, jwt, SLURM_JWT_FILE, SLURM_JWT (a file given leaves jwt
  // empty); a file that cannot be read fails at Create, naming it. A missing user is
  // the agent's own user name; a missing version "auto". InvalidArgument when the URL or the
  // token is missing ("slurm url: missing: pass --slurm-url or set SLURM_REST_URL") or the
  // version is neither "auto" nor a supported one (naming --slurm-api-version and
  // SLURM_REST_API_VERSION). `env` = nullptr reads the process environment.
  static absl::StatusOr<SlurmClusterOptions> FromEnvironment(SlurmClusterOptions flags,
                                                             const EnvLookup& env = nullptr);
};

class SlurmCluster final : public Cluster {
 public:
  // Checks the options, chooses the REST API version (the one given, or with "auto" the newest
  // slurmrestd serves; the choice is logged), reads the node list once (so a bad URL or token
  // fails here) and starts the poll thread.
  static absl::StatusOr<std::unique_ptr<SlurmCluster>> Create(SlurmClusterOptions options,
                                                              TaskObserver* observer);
  // Stops the poll thread. Slurm jobs keep running; a later agent's Recover finds them.
  ~SlurmCluster() override;

  const std::string& name() const override { return options_.name; }
  std::string_view backend() const override { return "slurm"; }
  const std::map<std::string, std::string, std::less<>>& labels() const override {
    return options_.labels;
  }
  std::vector<Node> Inventory() const override;
  std::vector<NodeUsage> Usage() const override;
  void Launch(const TaskLaunchSpec& spec) override;
  void Cancel(std::string_view launch_id, Duration grace) override;
  std::vector<std::string> Recover(const std::vector<KnownLaunch>& known) override;
  void Forget(std::string_view launch_id) override;
  absl::StatusOr<LogChunk> ReadLog(std::string_view launch_id, LogStream stream, int64_t offset,
                                   int64_t limit) const override;

  // The Slurm job id of a launch, while the cluster follows it (tests, diagnostics).
  std::optional<int64_t> JobIdOf(std::string_view launch_id) const;

 private:
  // One launch the cluster follows, from Launch (or Recover) until Forget.
  struct Task {
    explicit Task(const TaskLaunchSpec& spec);
    std::string node;               // the placement's node
    SlurmHeld request;              // the spec's cpu, memory and number of devices
    std::vector<int32_t> devices;   // the placement's device indices
    std::string submit_body;        // queued for submission; "" once taken
    std::optional<int64_t> job_id;  // known once submitted (or matched by Recover)
    bool adopting = false;          // the job id is to be found in Slurm's job list
    std::string submit_error;       // why an adopted task's submission may have failed
    // A submission that got no reply, sent once more if Slurm's job list then has no job for it
    // (it never arrived); "" once sent again, or when there is nothing to send again.
    std::string unanswered_body;
    bool resubmitted = false;
    bool started = false;
    bool ended = false;
    bool cancel_requested = false;
    Duration grace{0};
    TimePoint kill_at{};
    bool term_sent = false;
    bool kill_sent = false;
  };

  // News for the observer, delivered with no lock held.
  struct Event {
    std::string launch_id;
    std::optional<TimePoint> started;
    std::optional<TaskEnd> end;
  };

  // A queued launch on its way to Slurm.
  struct Submission {
    std::string launch_id;
    std::string body;
    absl::StatusOr<int64_t> job_id = absl::UnknownError("not sent");
  };

  // `submit_transports`: one per submission in flight (the first may be `transport`).
  SlurmCluster(SlurmClusterOptions options, TaskObserver* observer,
               std::shared_ptr<SlurmTransport> transport,
               std::vector<std::shared_ptr<SlurmTransport>> submit_transports,
               SlurmApiVersion api_version);
  void Run();
  // One round of the poll thread; REQUIRES rest_mu_ held. SubmitQueued: true when a job was
  // submitted. Poll: reads the nodes (when due) and the jobs; the wait before the next poll.
  bool SubmitQueued();
  // Up to `at_most` queued launches, taken off the queue.
  std::vector<Submission> TakeSubmissions(size_t at_most);
  // Sends `batch` at once, one submission per client of submit_clients_.
  void SendSubmissions(std::vector<Submission>& batch);
  // Follows the job a submission created, or ends its task when Slurm refused it.
  void RecordSubmission(Submission& submission);
  void SendSignals();
  Duration Poll();
  // True when the node list was read (changed, or read whole); false when Slurm answered that
  // nothing changed. Either way the inventory is offered anew (OfferLocked).
  absl::StatusOr<bool> RefreshInventory();
  // REQUIRES mu_ held. nodes_ = slurm_nodes_ less what foreign jobs hold (slurm_offer.h): the
  // tasks not seen ending now are those Slurm held when the node list just read was sent.
  void OfferLocked();
  // Reading each followed job (GET /job/{id}) is cheaper than one read of the job list (every
  // job Slurm keeps): fewer than 1/kJobReadCost of the list's last length are followed.
  bool ReadsEachJob();
  // Reads the jobs — each one with `each`, else the (incremental) list — and reports their
  // news; false when they could not be read.
  bool PollJobs(bool each);
  bool ReadEachJob();
  // Cancels `orphans` and the started jobs Slurm requeued, then delivers `events`.
  void CancelAndDeliver(std::vector<int64_t> orphans, const std::vector<Event>& events);
  // REQUIRES mu_ held. Tessera's jobs in Slurm (or on their way) not yet seen ending.
  bool OutstandingLocked() const;
  // REQUIRES mu_ held. A task follows Slurm job `job_id` and has not seen it end.
  bool FollowsLocked(int64_t job_id) const;
  // Reads slurmctld's clock (GET /diag) for the incremental reads; logs when it cannot.
  void MeasureSlurmClock();
  // slurmctld's second at the agent's instant `t` (rounded down, never ahead of slurmctld);
  // nullopt while slurmctld's clock is unknown (incremental reads are then not used).
  std::optional<int64_t> SlurmSecond(TimePoint t) const;
  // The next poll happens by `at`: an armed poll due later is moved there. Poll thread only; no
  // lock held.
  void PollBy(TimePoint at);
  // REQUIRES mu_ held. Arms a wake-up at `at`: a poll (`poll`) or a round of submissions and
  // signals.
  TimerId ArmLocked(TimePoint at, bool poll);
  // REQUIRES mu_ held. Matches Tessera's jobs in `jobs` to the tasks followed; with
  // `kill_orphans`, Tessera's jobs no task claims are added to `orphans`.
  void MatchJobsLocked(const SlurmJobList& jobs, bool kill_orphans, std::vector<Event>& events,
                       std::vector<int64_t>& orphans);
  // REQUIRES mu_ held. Turns the jobs' states into starts and ends; the job ids of followed
  // tasks missing from `jobs` are returned.
  std::vector<int64_t> ApplyJobsLocked(const std::vector<SlurmJob>& jobs,
                                       std::vector<Event>& events);
  // Reads each of `job_ids` alone and applies it; a job Slurm no longer knows ends its task
  // Lost (or Cancelled, when a cancel was asked).
  void ReadJobs(const std::vector<int64_t>& job_ids, std::vector<Event>& events);
  // A job's end, logged by Slurm (any thread): a followed job is queued for ReadNoticed.
  void Notice(const SlurmJob& logged);
  // Applies the noticed ends: as logged when the log tells them whole (TellsWholeEnd), else
  // read from slurmrestd; a job read still ending (COMPLETING) is read again a little later, at
  // most kNoticeReads times in all, after which the polls follow it.
  void ReadNoticed();
  void Deliver(const std::vector<Event>& events);
  void Log(std::string_view line) const;
  // Logs `line` under `key` unless the same line was the last one logged under it.
  void LogChange(const std::string& key, const std::string& line);
  std::map<std::string, std::string> ExtraEnvLocked(const TaskLaunchSpec& spec) const;

  SlurmClusterOptions options_;
  const Clock& clock_;
  std::unique_ptr<Timers> own_timers_;  // when options_.timers is nullptr
  Timers* const timers_;
  TaskObserver* const observer_;
  std::shared_ptr<SlurmTransport> transport_;
  SlurmRestClient client_;
  std::vector<std::shared_ptr<SlurmTransport>> submit_transports_;
  std::vector<SlurmRestClient> submit_clients_;  // one per submission in flight
  SlurmInventoryOptions inventory_options_;
  SlurmSubmitOptions submit_options_;

  // Held by whoever talks to Slurm about jobs (the poll thread's round, Recover), so a Recover
  // never interleaves with a poll. Taken before mu_, never while holding it.
  std::mutex rest_mu_;
  // Under rest_mu_: the poll's pacing, and the Slurm seconds from which the next incremental
  // reads ask for changes (nullopt: read the whole list).
  SlurmPollInterval interval_;
  TimePoint nodes_due_{};
  std::optional<int64_t> nodes_since_;
  std::optional<int64_t> jobs_since_;
  std::optional<Duration> slurm_offset_;  // slurmctld's clock minus the agent's, a lower bound
  size_t list_entries_ = 0;               // jobs in the last whole job list
  bool jobs_dirty_ = true;                // submitted or signalled since the last read of the jobs
  TimePoint jobs_read_at_{};

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool work_ = false;                   // a launch or cancel waits for the poll thread
  bool poll_due_ = true;                // a poll's time has come (the first poll is at once)
  TimerId poll_timer_ = 0;              // the armed poll, 0 when none is armed
  TimePoint poll_at_{};                 // its instant
  std::set<TimerId> armed_;             // every wake-up armed and not yet fired
  bool reconcile_pending_ = false;      // Recover could not list the jobs: kill orphans next poll
  std::vector<int64_t> requeued_;       // Slurm jobs requeued after they started: to cancel
  std::vector<SlurmNode> slurm_nodes_;  // the last node list read; written under rest_mu_ too
  std::vector<Node> nodes_;             // what they offer Tessera
  std::vector<NodeUsage> usage_;
  std::map<std::string, std::string, std::less<>> addresses_;        // node → address
  std::map<std::string, std::unique_ptr<Task>, std::less<>> tasks_;  // by launch id
  std::deque<std::string> submit_queue_;
  // Ends noticed in Slurm's log and not yet applied, by job id.
  struct NoticedEnd {
    int reads = 0;                  // reads already made of the job
    std::optional<SlurmJob> whole;  // the end as logged, when the log tells it whole
  };
  std::map<int64_t, NoticedEnd> noticed_;
  ChangedLines logged_;  // LogChange's memory; rest_mu_
  std::thread poller_;
  std::unique_ptr<SlurmJobCompFollower> jobcomp_;  // stopped first, before the poll thread
};

}  // namespace tessera::agent
