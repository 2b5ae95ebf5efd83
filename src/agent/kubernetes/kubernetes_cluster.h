// KubernetesCluster: a Kubernetes cluster as a Tessera Cluster, driven through its API server's
// REST interface (the wire format kubectl speaks). Tessera's scheduler places each task on a
// node; this backend runs it there as a pod bound to that node (spec.nodeName), so Kubernetes'
// own scheduler never moves it.
//
// Inventory: the nodes (GET /api/v1/nodes), kept by a list-and-watch thread (informer.h) and
// converted by NodeFromJson (node_conversion.h: labels, pool, taints, cordon, Ready condition,
// cpu / memory / nvidia.com/gpu). Inventory() returns the cached copy: it never waits on the
// network. A node whose object turns malformed keeps its last good conversion (logged); a node
// never seen well-formed is left out (logged).
//
// Tasks: Launch posts a pod (pod_manifest.h) to options.api.kube_namespace; a second informer
// watches the pods labelled tessera.io/launch-id and tessera.io/cluster=<name> and maps their
// state to the observer (pod_status.h):
//   Running                      OnTaskStarted (the container's startedAt)
//   Succeeded                    OnTaskEnded Succeeded, exit code 0
//   Failed                       OnTaskEnded Failed: exit code of the container and "Error",
//                                "Killed" (OOMKilled, Evicted), "TimeLimitExceeded"
//                                (activeDeadlineSeconds) or "StartFailed" (never ran)
//   the POST refused             Failed "StartFailed" with the API's Status message
//   deleted after Cancel         Cancelled          deleted otherwise   Failed "Lost"
// Multi-task jobs (rendezvous.h): before the first pod of a job with peer_nodes, the job's
// headless Service is created (POST .../services; 409 for a Service of the same name that
// selects the same pods is fine, one that selects others is a StartFailed); a refused create
// ends the launch Failed "StartFailed" with the API's Status message. Each pod gets
// spec.hostname / spec.subdomain and MASTER_ADDR ... TF_CONFIG naming "<hostname>.<service>".
// The Service is deleted once no task of its job tracked here is still live (every one has
// ended, or was dropped by Recover): the ended pods need no DNS name, and a later attempt of
// the job creates the Service again. A deletion queued while a new launch of the job arrived
// is skipped. Only Services this object created, found selecting the job's pods or listed
// with this cluster's labels are deleted. Recover deletes the rendezvous Services of this
// cluster (labels app.kubernetes.io/managed-by=tessera, tessera.io/job, tessera.io/cluster)
// whose job has no launch in `known`.
// Cancel deletes the pod with gracePeriodSeconds = grace (SIGTERM, SIGKILL after grace).
// Creates and deletes (of pods and Services) run on a worker thread, so Launch and Cancel never
// wait on the network; transient failures (Unavailable) are retried up to max_request_attempts
// times. Recover(known) lists the pods: known launches whose pod runs are kept, known launches
// whose pod ended get that end, known launches without a pod end Failed "LostOnRestart"; running
// Tessera pods of this cluster not in `known` are deleted. It may be called again after a
// reconnect: launches this object tracks that are not in `known` are dropped and their pods
// deleted; ends already reported are reported again for the known ones.
// Ended pods stay (their logs with them) until the control plane has forgotten the task and
// ended_pod_ttl has passed since the end; a collector deletes them every gc_interval.
// Logs: ReadLog reads GET .../pods/<name>/log. Kubernetes keeps one stream per container, with
// stdout and stderr interleaved: LogStream::kStdout returns it, kStderr is FailedPrecondition.
// Usage: what each node uses now (cpu in millicores, memory in bytes), read from the metrics
// API (GET /apis/metrics.k8s.io/v1beta1/nodes, served by metrics-server: `kubectl top nodes`)
// by a thread of its own every usage_interval (node_metrics.h). Usage() returns the copy of the
// last read, for the nodes in the inventory: it never waits on the network. Where the metrics API
// is not served (404; 503 while metrics-server is down) or not allowed (403), or fails
// otherwise, usage is empty and the error is logged once, with what to do; it is read again
// every usage_interval and comes back when the API answers. A malformed entry is left out with a
// log line naming its field (logged once while it stays the same). No GPU utilisation or power:
// the metrics API has none.
//
// Time: timestamps are the pods' own where they carry one, else the injected clock's; waits
// (retries, backoff) are real time. Errors: Create fails (a clear Status: bad options,
// unreachable server, refused credentials, missing permission) when the first node or pod list
// fails (the metrics API is not needed to start). Thread-safety: as Cluster; observer calls
// arrive on the informer, worker or calling thread, in order per task, never with a lock of this
// object held.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/common/changed_lines.h"
#include "agent/kubernetes/api_access.h"
#include "agent/kubernetes/api_client.h"
#include "agent/kubernetes/informer.h"
#include "agent/kubernetes/node_conversion.h"
#include "agent/kubernetes/pod_manifest.h"
#include "agent/kubernetes/pod_status.h"
#include "tessera/cluster/cluster.h"

namespace tessera::agent {

struct KubernetesClusterOptions {
  std::string name = "kubernetes";
  std::map<std::string, std::string, std::less<>> labels;  // tessera.io/cluster is added
  KubernetesApiAccess api;  // server, credentials, CA, namespace (LoadKubeconfig et al.)
  // The container image of a task whose env does not set `image_env_key`.
  std::string default_image;
  std::string image_env_key = std::string(k8s::kDefaultImageEnv);
  std::string pool_label = std::string(k8s::kPoolLabel);
  k8s::ApiClientTimeouts timeouts;
  Duration retry_backoff{std::chrono::seconds(1)};  // after a failed list, watch or request
  int watch_timeout_seconds = 300;
  int max_request_attempts = 5;  // a create or delete that fails with Unavailable
  Duration ended_pod_ttl{std::chrono::hours(1)};
  Duration gc_interval{std::chrono::minutes(1)};
  // How often node usage is read from the metrics API (> 0); metrics-server's own resolution.
  Duration usage_interval{std::chrono::seconds(15)};
  const Clock* clock = nullptr;  // nullptr = the system clock
  k8s::LogFunction log;          // nullptr = standard error
};

class KubernetesCluster final : public Cluster {
 public:
  static absl::StatusOr<std::unique_ptr<KubernetesCluster>> Create(KubernetesClusterOptions options,
                                                                   TaskObserver* observer);
  ~KubernetesCluster() override;

  const std::string& name() const override { return options_.name; }
  std::string_view backend() const override { return "kubernetes"; }
  const std::map<std::string, std::string, std::less<>>& labels() const override {
    return options_.labels;
  }
  std::vector<Node> Inventory() const override;
  // The last usage read from the metrics API, for the nodes in the inventory; empty until the
  // first read succeeds and while the API does not answer. Never waits on the network.
  std::vector<NodeUsage> Usage() const override;
  void Launch(const TaskLaunchSpec& spec) override;
  void Cancel(std::string_view launch_id, Duration grace) override;
  std::vector<std::string> Recover(const std::vector<KnownLaunch>& known) override;
  void Forget(std::string_view launch_id) override;
  absl::StatusOr<LogChunk> ReadLog(std::string_view launch_id, LogStream stream,
                                           int64_t offset, int64_t limit) const override;

  // The label selector of this cluster's pods.
  std::string PodSelector() const;
  // The label selector of this cluster's rendezvous Services.
  std::string ServiceSelector() const;
  // The pod informer (tests watch it relist).
  const k8s::Informer& pod_informer_for_test() const { return *pod_informer_; }
  const k8s::Informer& node_informer_for_test() const { return *node_informer_; }

 private:
  struct Task {
    std::string pod;
    std::string service;           // the job's rendezvous Service; "" for a single-task job
    bool confirmed = false;        // the pod exists: created, or seen
    uint64_t confirmed_epoch = 0;  // pod lists sent when it was confirmed
    bool started = false;
    bool cancelling = false;
    std::optional<TaskEnd> end;  // reported
  };
  struct Action {
    enum class Kind { kCreate, kDelete, kDeleteService };
    Kind kind = Kind::kCreate;
    std::string launch_id;
    std::string pod;
    k8s::Json manifest;          // kCreate
    std::string service;         // kCreate of a multi-task job's pod, kDeleteService
    k8s::Json service_manifest;  // kCreate: the Service to create first, unless it exists
    int64_t grace_seconds = 0;   // kDelete
    int attempts = 0;
    std::chrono::steady_clock::time_point not_before{};
  };
  struct Notice {
    bool started = false;  // OnTaskStarted, else OnTaskEnded
    std::string launch_id;
    TimePoint time{};
    TaskEnd end;
  };

  KubernetesCluster(KubernetesClusterOptions options, TaskObserver* observer,
                    std::unique_ptr<k8s::KubernetesApiClient> requests,
                    std::unique_ptr<k8s::KubernetesApiClient> logs);
  void Log(std::string_view line) const;
  std::string PodsPath() const;
  std::string ServicesPath() const;
  TimePoint Now() const { return clock_.Now(); }

  // Node informer.
  void OnNodeList(const std::vector<k8s::Json>& items);
  void OnNodeEvent(k8s::WatchEventType type, const k8s::Json& object);

  // Pod informer. REQUIRES for the *Locked helpers: mu_ held.
  void OnPodList(const std::vector<k8s::Json>& items);
  void OnPodEvent(k8s::WatchEventType type, const k8s::Json& object);
  std::vector<k8s::PodObservation> ObservePods(const std::vector<k8s::Json>& items) const;
  void ApplyLocked(Task& task, const std::string& launch_id, const k8s::PodObservation& pod);
  void EndLocked(Task& task, TaskEnd end);
  void EnqueueDeleteLocked(const std::string& launch_id, const std::string& pod,
                           int64_t grace_seconds);
  // True while a task of the Service's job is tracked and has not ended.
  bool ServiceInUseLocked(const std::string& service) const;
  // Queues the Service's deletion when it is in services_ and no live task uses it.
  void ReleaseServiceLocked(const std::string& service);

  // Worker.
  void WorkerLoop();
  void Execute(Action action);
  void Create(Action action);
  void Delete(Action action);
  // Creates the action's rendezvous Service; OK when it exists already and selects the job's
  // pods. REQUIRES: requests_mu_ held.
  absl::Status EnsureService(const Action& action);
  void DeleteService(Action action);
  // GETs a list, retrying transient failures (Recover).
  absl::StatusOr<k8s::ObjectList> ListWithRetry(const std::string& path,
                                                const std::string& selector, std::string_view kind);
  // Requeues a transiently failed action; false when its attempts are used up.
  bool Retry(Action& action, const absl::Status& status);
  void CollectEndedPods();

  // Usage thread: reads the metrics API every usage_interval until the destructor stops it.
  void UsageLoop();
  void RefreshUsage();
  // Logs `line` when it differs from the last line logged under `key` ("" logs nothing), so a
  // failure repeated at every refresh is logged once. Usage thread only.
  void LogChange(const std::string& key, const std::string& line);
  void StopUsageThread();

  // Delivers queued observer notices in order, outside mu_.
  void Flush();

  KubernetesClusterOptions options_;
  const Clock& clock_;
  TaskObserver* const observer_;
  const k8s::NodeConversion conversion_;
  const k8s::PodTemplate pod_template_;

  // The worker's and Recover's requests (one at a time), and ReadLog's.
  std::mutex requests_mu_;
  std::unique_ptr<k8s::KubernetesApiClient> requests_;
  mutable std::mutex logs_mu_;
  std::unique_ptr<k8s::KubernetesApiClient> logs_;

  std::unique_ptr<k8s::KubernetesApiClient> metrics_;  // the usage thread's

  std::unique_ptr<k8s::Informer> node_informer_;
  std::unique_ptr<k8s::Informer> pod_informer_;

  mutable std::mutex mu_;
  std::condition_variable work_;
  std::map<std::string, Node, std::less<>> nodes_;
  std::vector<NodeUsage> usage_;  // the last read, as the metrics API listed it
  std::map<std::string, Task, std::less<>> tasks_;
  // The rendezvous Services known to exist and to be this cluster's (created here, found
  // selecting the job's pods, or listed by Recover): only these are ever deleted.
  std::set<std::string, std::less<>> services_;
  uint64_t pod_lists_sent_ = 0;
  uint64_t pod_list_in_flight_ = 0;  // the epoch of the informer's LIST being answered
  std::deque<Action> actions_;
  std::deque<Notice> outbox_;
  bool flushing_ = false;
  bool stopping_ = false;
  bool worker_done_ = false;
  std::thread worker_;
  std::condition_variable usage_wake_;  // the destructor stopping the usage thread
  std::thread usage_thread_;
  ChangedLines logged_;  // LogChange's memory; usage thread only
};

}  // namespace tessera::agent
