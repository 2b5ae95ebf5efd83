#include "agent/kubernetes/kubernetes_cluster.h"

#include <algorithm>
#include <iostream>
#include <limits>
#include <set>
#include <utility>

#include "absl/strings/str_join.h"
#include "agent/kubernetes/api_status.h"
#include "agent/kubernetes/internal/cluster_helpers.h"
#include "agent/kubernetes/node_metrics.h"
#include "agent/kubernetes/pod_names.h"
#include "agent/kubernetes/rendezvous.h"
#include "agent/local/system_clock.h"
#include "core/duration.h"
#include "fmt/format.h"

namespace tessera::agent {
namespace {

using k8s::IsTransient;
using k8s::Json;
using k8s::PodObservation;
using k8s::StartFailed;
using k8s::WatchEventType;
using Steady = std::chrono::steady_clock;

int64_t GraceSeconds(Duration grace) {
  return grace.count() <= 0 ? 0 : grace.count() / 1000 + (grace.count() % 1000 != 0 ? 1 : 0);
}

std::string NameOf(const Json& object) {
  const Json* metadata = k8s::Member(object, "metadata");
  const Json* name = metadata == nullptr ? nullptr : k8s::Member(*metadata, "name");
  return name != nullptr && name->is_string() ? name->get<std::string>() : "";
}

}  // namespace

absl::StatusOr<std::unique_ptr<KubernetesCluster>> KubernetesCluster::Create(
    KubernetesClusterOptions options, TaskObserver* observer) {
  if (options.name.empty()) return absl::InvalidArgumentError("cluster name: must be set");
  if (options.api.server.empty()) {
    return absl::InvalidArgumentError(fmt::format(
        "kubernetes cluster {}: no API server (give a kubeconfig, or run in a pod)", options.name));
  }
  if (!k8s::IsDnsLabel(options.api.kube_namespace)) {
    return absl::InvalidArgumentError(
        fmt::format("kubernetes cluster {}: namespace '{}': must be a DNS-1123 label "
                    "(lower-case letters, digits and '-', at most 63)",
                    options.name, options.api.kube_namespace));
  }
  if (options.max_request_attempts < 1) options.max_request_attempts = 1;
  if (options.usage_interval <= Duration::zero()) {
    return absl::InvalidArgumentError(
        fmt::format("kubernetes cluster {}: usage_interval: must be > 0", options.name));
  }
  options.labels[std::string(kClusterLabel)] = options.name;
  if (!options.log) {
    options.log = [prefix = fmt::format("tessera kubernetes {}: ", options.name)](
                      std::string_view line) { std::cerr << prefix << line << "\n"; };
  }
  absl::StatusOr<std::unique_ptr<k8s::KubernetesApiClient>> requests =
      k8s::KubernetesApiClient::Create(options.api, options.timeouts);
  if (!requests.ok()) return requests.status();
  absl::StatusOr<std::unique_ptr<k8s::KubernetesApiClient>> logs =
      k8s::KubernetesApiClient::Create(options.api, options.timeouts);
  if (!logs.ok()) return logs.status();
  auto cluster = std::unique_ptr<KubernetesCluster>(
      new KubernetesCluster(std::move(options), observer, *std::move(requests), *std::move(logs)));
  KubernetesCluster& self = *cluster;

  // The first lists check the address, the credentials and the permissions now, with a
  // clear error, rather than in a retry loop's log.
  absl::StatusOr<Json> nodes = self.requests_->Get("/api/v1/nodes");
  if (!nodes.ok()) return nodes.status();
  absl::StatusOr<k8s::ObjectList> node_list = k8s::ObjectListFromJson(*nodes, "nodes");
  if (!node_list.ok()) return node_list.status();
  absl::StatusOr<Json> pods =
      self.requests_->Get(self.PodsPath(), {{"labelSelector", self.PodSelector()}});
  if (!pods.ok()) return pods.status();
  absl::StatusOr<k8s::ObjectList> pod_list = k8s::ObjectListFromJson(*pods, "pods");
  if (!pod_list.ok()) return pod_list.status();
  self.OnNodeList(node_list->items);

  k8s::InformerOptions informer{.retry_backoff = self.options_.retry_backoff,
                                .watch_timeout_seconds = self.options_.watch_timeout_seconds,
                                .log = self.options_.log};
  for (auto [informer_ptr, path, selector] :
       {std::tuple(&self.node_informer_, std::string("/api/v1/nodes"), std::string()),
        std::tuple(&self.pod_informer_, self.PodsPath(), self.PodSelector())}) {
    absl::StatusOr<std::unique_ptr<k8s::KubernetesApiClient>> client =
        k8s::KubernetesApiClient::Create(self.options_.api, self.options_.timeouts);
    if (!client.ok()) return client.status();
    informer.path = path;
    informer.label_selector = selector;
    const bool nodes_informer = informer_ptr == &self.node_informer_;
    k8s::InformerHandler handler;
    if (nodes_informer) {
      handler.on_list = [&self](const std::vector<Json>& items) { self.OnNodeList(items); };
      handler.on_event = [&self](WatchEventType type, const Json& object) {
        self.OnNodeEvent(type, object);
      };
    } else {
      handler.before_list = [&self] {
        std::lock_guard<std::mutex> lock(self.mu_);
        self.pod_list_in_flight_ = ++self.pod_lists_sent_;
      };
      handler.on_list = [&self](const std::vector<Json>& items) { self.OnPodList(items); };
      handler.on_event = [&self](WatchEventType type, const Json& object) {
        self.OnPodEvent(type, object);
      };
    }
    *informer_ptr = std::make_unique<k8s::Informer>(*std::move(client), informer, handler);
  }
  absl::StatusOr<std::unique_ptr<k8s::KubernetesApiClient>> metrics =
      k8s::KubernetesApiClient::Create(self.options_.api, self.options_.timeouts);
  if (!metrics.ok()) return metrics.status();
  self.metrics_ = *std::move(metrics);
  self.node_informer_->Start(node_list->resource_version);
  self.pod_informer_->Start(pod_list->resource_version);
  self.worker_ = std::thread([&self] { self.WorkerLoop(); });
  self.usage_thread_ = std::thread([&self] { self.UsageLoop(); });
  return cluster;
}

KubernetesCluster::KubernetesCluster(KubernetesClusterOptions options,
                                     TaskObserver* observer,
                                     std::unique_ptr<k8s::KubernetesApiClient> requests,
                                     std::unique_ptr<k8s::KubernetesApiClient> logs)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : SystemClock::Get()),
      observer_(observer),
      conversion_{.cluster = options_.name,
                  .cluster_labels = options_.labels,
                  .pool_label = options_.pool_label},
      pod_template_{.kube_namespace = options_.api.kube_namespace,
                    .default_image = options_.default_image,
                    .image_env_key = options_.image_env_key,
                    .cluster = options_.name},
      requests_(std::move(requests)),
      logs_(std::move(logs)) {}

KubernetesCluster::~KubernetesCluster() {
  if (node_informer_ != nullptr) node_informer_->Stop();
  if (pod_informer_ != nullptr) pod_informer_->Stop();
  StopUsageThread();
  if (!worker_.joinable()) return;
  std::unique_lock<std::mutex> lock(mu_);
  stopping_ = true;
  work_.notify_all();
  while (!worker_done_) {
    requests_->Stop();  // aborts a request in flight
    work_.wait_for(lock, std::chrono::milliseconds(20));
  }
  lock.unlock();
  worker_.join();
}

void KubernetesCluster::Log(std::string_view line) const { options_.log(line); }

std::string KubernetesCluster::PodsPath() const {
  return fmt::format("/api/v1/namespaces/{}/pods", options_.api.kube_namespace);
}

std::string KubernetesCluster::PodSelector() const {
  return fmt::format("{},{}={}", k8s::kLaunchIdKey, kClusterLabel,
                     k8s::LabelValue(options_.name));
}

std::string KubernetesCluster::ServicesPath() const {
  return fmt::format("/api/v1/namespaces/{}/services", options_.api.kube_namespace);
}

std::string KubernetesCluster::ServiceSelector() const {
  return k8s::RendezvousServiceSelector(options_.name);
}

// ---- Inventory ----

std::vector<Node> KubernetesCluster::Inventory() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Node> nodes;
  nodes.reserve(nodes_.size());
  for (const auto& [name, node] : nodes_) nodes.push_back(node);
  return nodes;
}

void KubernetesCluster::OnNodeList(const std::vector<Json>& items) {
  std::map<std::string, Node, std::less<>> fresh;
  std::vector<std::string> errors;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Json& item : items) {
      absl::StatusOr<Node> node = k8s::NodeFromJson(item, conversion_);
      if (node.ok()) {
        std::string name = node->name;
        fresh.insert_or_assign(std::move(name), *std::move(node));
        continue;
      }
      errors.emplace_back(std::string(node.status().message()));
      const std::string name = NameOf(item);
      if (auto old = nodes_.find(name); old != nodes_.end()) fresh.insert(*old);
    }
    nodes_ = std::move(fresh);
  }
  for (const std::string& error : errors) Log(fmt::format("node skipped: {}", error));
}

void KubernetesCluster::OnNodeEvent(WatchEventType type, const Json& object) {
  if (type == WatchEventType::kDeleted) {
    std::lock_guard<std::mutex> lock(mu_);
    nodes_.erase(NameOf(object));
    return;
  }
  absl::StatusOr<Node> node = k8s::NodeFromJson(object, conversion_);
  if (!node.ok()) {
    Log(fmt::format("node update skipped (the last good state is kept): {}",
                    std::string(node.status().message())));
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::string name = node->name;
  nodes_.insert_or_assign(std::move(name), *std::move(node));
}

// ---- Usage ----

std::vector<NodeUsage> KubernetesCluster::Usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<NodeUsage> usage;
  usage.reserve(usage_.size());
  for (const NodeUsage& node : usage_) {
    if (nodes_.contains(node.node)) usage.push_back(node);
  }
  return usage;
}

void KubernetesCluster::UsageLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    RefreshUsage();
    lock.lock();
    usage_wake_.wait_for(lock, options_.usage_interval, [this] { return stopping_; });
  }
}

void KubernetesCluster::RefreshUsage() {
  absl::StatusOr<Json> answer = metrics_->Get(k8s::kNodeMetricsPath);
  absl::StatusOr<k8s::NodeMetricsList> list =
      answer.ok() ? k8s::NodeMetricsFromJson(*answer) : answer.status();
  if (!list.ok()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;  // the destructor aborted the request
      usage_.clear();
    }
    LogChange("metrics API", k8s::NodeMetricsUnavailable(list.status()));
    LogChange("metrics entries", "");  // logged again if they are still malformed once it answers
    return;
  }
  LogChange("metrics API",
            fmt::format("node usage: read from GET {} every {}", k8s::kNodeMetricsPath,
                        FormatDuration(options_.usage_interval)));
  LogChange("metrics entries",
            list->errors.empty()
                ? ""
                : fmt::format("node usage skipped: {}", absl::StrJoin(list->errors, "; ")));
  std::lock_guard<std::mutex> lock(mu_);
  usage_ = std::move(list->usage);
}

void KubernetesCluster::LogChange(const std::string& key, const std::string& line) {
  if (logged_.Changed(key, line)) Log(line);
}

void KubernetesCluster::StopUsageThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  usage_wake_.notify_all();
  if (metrics_ != nullptr) metrics_->Stop();  // aborts a request in flight
  if (usage_thread_.joinable()) usage_thread_.join();
}

// ---- Pods ----

std::vector<PodObservation> KubernetesCluster::ObservePods(const std::vector<Json>& items) const {
  std::vector<PodObservation> pods;
  for (const Json& item : items) {
    absl::StatusOr<PodObservation> pod = k8s::ObservePod(item);
    if (!pod.ok()) {
      Log(fmt::format("pod skipped: {}", std::string(pod.status().message())));
      continue;
    }
    if (!pod->launch_id.empty()) pods.push_back(*std::move(pod));
  }
  return pods;
}

void KubernetesCluster::EndLocked(Task& task, TaskEnd end) {
  if (task.end.has_value()) return;
  task.end = end;
  outbox_.push_back({.launch_id = end.launch_id, .end = std::move(end)});
  ReleaseServiceLocked(task.service);
}

bool KubernetesCluster::ServiceInUseLocked(const std::string& service) const {
  return std::any_of(tasks_.begin(), tasks_.end(), [&service](const auto& entry) {
    return entry.second.service == service && !entry.second.end.has_value();
  });
}

void KubernetesCluster::ReleaseServiceLocked(const std::string& service) {
  if (!services_.contains(service) || ServiceInUseLocked(service)) return;
  for (const Action& action : actions_) {
    if (action.kind == Action::Kind::kDeleteService && action.service == service) return;
  }
  actions_.push_back({.kind = Action::Kind::kDeleteService, .service = service});
  work_.notify_all();
}

void KubernetesCluster::ApplyLocked(Task& task, const std::string& launch_id,
                                    const PodObservation& pod) {
  if (task.end.has_value()) return;
  if (!task.confirmed) {
    task.confirmed = true;
    task.confirmed_epoch = pod_lists_sent_;
  }
  const TimePoint now = Now();
  if (!task.started &&
      (pod.phase == k8s::PodPhase::kRunning || (k8s::IsTerminal(pod.phase) && pod.ran))) {
    task.started = true;
    outbox_.push_back(
        {.started = true, .launch_id = launch_id, .time = pod.started_at.value_or(now)});
  }
  std::optional<TaskEnd> end = k8s::EndOfPod(pod, task.cancelling, now);
  if (!end.has_value()) return;
  end->launch_id = launch_id;
  // A pod that cannot start stays Pending: it is removed so it does not hold the node.
  if (!k8s::IsTerminal(pod.phase)) EnqueueDeleteLocked(launch_id, task.pod, 0);
  EndLocked(task, *std::move(end));
}

void KubernetesCluster::EnqueueDeleteLocked(const std::string& launch_id, const std::string& pod,
                                            int64_t grace_seconds) {
  actions_.push_back({.kind = Action::Kind::kDelete,
                      .launch_id = launch_id,
                      .pod = pod,
                      .grace_seconds = grace_seconds});
  work_.notify_all();
}

void KubernetesCluster::OnPodList(const std::vector<Json>& items) {
  const std::vector<PodObservation> pods = ObservePods(items);
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::set<std::string, std::less<>> present;
    for (const PodObservation& pod : pods) {
      present.insert(pod.launch_id);
      if (auto it = tasks_.find(pod.launch_id); it != tasks_.end()) {
        ApplyLocked(it->second, it->first, pod);
      }
    }
    // A pod confirmed before this list was sent and missing from it was deleted while the
    // watch was down.
    for (auto& [launch_id, task] : tasks_) {
      if (task.end.has_value() || !task.confirmed || present.contains(launch_id) ||
          task.confirmed_epoch >= pod_list_in_flight_) {
        continue;
      }
      EndLocked(task, k8s::EndOfVanishedPod(launch_id, task.cancelling, Now()));
    }
  }
  Flush();
}

void KubernetesCluster::OnPodEvent(WatchEventType type, const Json& object) {
  absl::StatusOr<PodObservation> pod = k8s::ObservePod(object);
  if (!pod.ok()) {
    Log(fmt::format("pod event skipped: {}", std::string(pod.status().message())));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tasks_.find(pod->launch_id);
    if (it == tasks_.end()) return;
    ApplyLocked(it->second, it->first, *pod);
    if (type == WatchEventType::kDeleted) {
      EndLocked(it->second, k8s::EndOfVanishedPod(it->first, it->second.cancelling, Now()));
    }
  }
  Flush();
}

// ---- Launch, Cancel, Forget ----

void KubernetesCluster::Launch(const TaskLaunchSpec& spec) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (tasks_.contains(spec.launch_id)) {
      Log(fmt::format("launch {}: already launched; the repeat is ignored", spec.launch_id));
      return;
    }
    Task& task = tasks_[spec.launch_id];
    task.pod = k8s::PodNameForLaunch(spec.launch_id);
    if (k8s::IsMultiTask(spec)) task.service = k8s::ServiceNameForJob(spec.job_id);
    auto node = nodes_.find(spec.placement.node);
    absl::StatusOr<Json> manifest = k8s::BuildPod(
        spec, pod_template_, node != nodes_.end() ? node->second.taints : std::vector<Taint>{});
    if (manifest.ok()) {
      Action create{.kind = Action::Kind::kCreate,
                    .launch_id = spec.launch_id,
                    .pod = task.pod,
                    .manifest = *std::move(manifest),
                    .service = task.service};
      if (!task.service.empty()) {
        create.service_manifest = k8s::BuildRendezvousService(spec.job_id, pod_template_);
      }
      actions_.push_back(std::move(create));
      work_.notify_all();
    } else {
      EndLocked(task, StartFailed(spec.launch_id, std::string(manifest.status().message()), Now()));
    }
  }
  Flush();
}

void KubernetesCluster::Cancel(std::string_view launch_id, Duration grace) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(launch_id);
  if (it == tasks_.end() || it->second.end.has_value()) return;
  it->second.cancelling = true;
  EnqueueDeleteLocked(it->first, it->second.pod, GraceSeconds(grace));
}

void KubernetesCluster::Forget(std::string_view launch_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(launch_id);
  if (it == tasks_.end() || !it->second.end.has_value()) return;  // a running task stays
  tasks_.erase(it);
}

// ---- Recover ----

std::vector<std::string> KubernetesCluster::Recover(const std::vector<KnownLaunch>& known) {
  uint64_t epoch = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    epoch = ++pod_lists_sent_;
  }
  absl::StatusOr<k8s::ObjectList> list = ListWithRetry(PodsPath(), PodSelector(), "pods");
  absl::StatusOr<k8s::ObjectList> services =
      ListWithRetry(ServicesPath(), ServiceSelector(), "services");
  if (!services.ok()) {
    Log(
        fmt::format("recover: cannot list the rendezvous services ({}); orphans are left to the "
                    "next recover",
                    std::string(services.status().message())));
  }
  std::map<std::string, PodObservation, std::less<>> pods;
  if (list.ok()) {
    for (PodObservation& pod : ObservePods(list->items)) {
      std::string id = pod.launch_id;
      pods.insert_or_assign(std::move(id), std::move(pod));
    }
  } else {
    Log(
        fmt::format("recover: cannot list the pods ({}); the known tasks are kept and "
                    "resolved by the next list",
                    std::string(list.status().message())));
  }

  std::vector<std::string> running;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::set<std::string, std::less<>> known_ids;
    std::set<std::string, std::less<>> known_services;  // of every known job
    for (const KnownLaunch& launch : known) {
      known_ids.insert(launch.spec.launch_id);
      known_services.insert(k8s::ServiceNameForJob(launch.spec.job_id));
    }
    std::set<std::string, std::less<>> dropped_services;
    for (auto it = tasks_.begin(); it != tasks_.end();) {
      if (known_ids.contains(it->first)) {
        ++it;
        continue;
      }
      if (!it->second.end.has_value()) EnqueueDeleteLocked(it->first, it->second.pod, 0);
      if (!it->second.service.empty()) dropped_services.insert(it->second.service);
      it = tasks_.erase(it);
    }
    if (services.ok()) {
      for (const Json& item : services->items) {
        const std::string name = NameOf(item);
        if (name.empty()) continue;
        services_.insert(name);  // labelled as this cluster's
        if (!known_services.contains(name)) dropped_services.insert(name);
      }
    }
    for (const KnownLaunch& launch : known) {
      const std::string& id = launch.spec.launch_id;
      auto [it, inserted] = tasks_.try_emplace(id);
      Task& task = it->second;
      if (inserted) {
        task.pod = k8s::PodNameForLaunch(id);
        if (k8s::IsMultiTask(launch.spec))
          task.service = k8s::ServiceNameForJob(launch.spec.job_id);
        task.started = launch.start_time.has_value();
      } else if (task.end.has_value()) {
        outbox_.push_back({.launch_id = id, .end = *task.end});  // the end may have been lost
        continue;
      } else if (!task.confirmed) {
        running.push_back(id);  // its create is still queued here
        continue;
      }
      if (!list.ok()) {
        task.confirmed = true;
        task.confirmed_epoch = epoch;  // the informer's next list settles it
        running.push_back(id);
        continue;
      }
      auto pod = pods.find(id);
      if (pod == pods.end()) {
        EndLocked(task, {.launch_id = id,
                         .phase = TaskPhase::kFailed,
                         .reason = "LostOnRestart",
                         .message = fmt::format("pod {} no longer exists", task.pod),
                         .time = Now()});
        continue;
      }
      ApplyLocked(task, id, pod->second);
      if (!task.end.has_value()) running.push_back(id);
    }
    for (const auto& [id, pod] : pods) {
      if (!known_ids.contains(id) && !k8s::IsTerminal(pod.phase)) {
        EnqueueDeleteLocked(id, pod.name, 0);
      }
    }
    for (const std::string& service : dropped_services) ReleaseServiceLocked(service);
  }
  Flush();
  return running;
}

absl::StatusOr<k8s::ObjectList> KubernetesCluster::ListWithRetry(const std::string& path,
                                                                 const std::string& selector,
                                                                 std::string_view kind) {
  absl::StatusOr<Json> answer;
  for (int attempt = 1;; ++attempt) {
    {
      std::lock_guard<std::mutex> lock(requests_mu_);
      answer = requests_->Get(path, {{"labelSelector", selector}});
    }
    if (answer.ok() || !IsTransient(answer.status()) || attempt >= options_.max_request_attempts) {
      break;
    }
    std::this_thread::sleep_for(options_.retry_backoff);
  }
  if (!answer.ok()) return answer.status();
  return k8s::ObjectListFromJson(*answer, kind);
}

// ---- Logs ----

absl::StatusOr<LogChunk> KubernetesCluster::ReadLog(std::string_view launch_id,
                                                            LogStream stream,
                                                            int64_t offset, int64_t limit) const {
  if (stream == LogStream::kStderr) {
    return absl::FailedPreconditionError(fmt::format(
        "task {}: Kubernetes keeps one log per container, with stdout and stderr interleaved: "
        "read the stdout stream",
        launch_id));
  }
  if (offset < 0 || limit < 0) {
    return absl::InvalidArgumentError("log offset and limit must be >= 0");
  }
  const std::string pod_path = fmt::format("{}/{}", PodsPath(), k8s::PodNameForLaunch(launch_id));
  std::lock_guard<std::mutex> lock(logs_mu_);
  // Whether the pod had ended is read before the log, so a final write is never missed.
  absl::StatusOr<Json> object = logs_->Get(pod_path);
  if (!object.ok()) {
    if (object.status().code() == absl::StatusCode::kNotFound) {
      return absl::NotFoundError(fmt::format("no log for task {}: its pod is gone", launch_id));
    }
    return object.status();
  }
  absl::StatusOr<PodObservation> pod = k8s::ObservePod(*object);
  if (!pod.ok()) return pod.status();
  if (pod->launch_id != launch_id) {
    return absl::NotFoundError(fmt::format("no log for task {}", launch_id));
  }
  const int64_t wanted = offset > std::numeric_limits<int64_t>::max() - limit - 1
                             ? std::numeric_limits<int64_t>::max()
                             : offset + limit + 1;
  absl::StatusOr<std::string> text = logs_->GetText(
      pod_path + "/log",
      {{"container", std::string(k8s::kContainerName)}, {"limitBytes", std::to_string(wanted)}});
  LogChunk chunk{.next_offset = offset};
  if (!text.ok()) {
    // A container that has not started has no log yet.
    if (text.status().code() == absl::StatusCode::kInvalidArgument &&
        pod->phase == k8s::PodPhase::kPending) {
      return chunk;
    }
    return text.status();
  }
  const int64_t size = static_cast<int64_t>(text->size());
  if (offset < size) chunk.data = text->substr(offset, static_cast<size_t>(limit));
  chunk.next_offset = offset + static_cast<int64_t>(chunk.data.size());
  chunk.end = k8s::IsTerminal(pod->phase) && size < wanted && chunk.next_offset >= size;
  return chunk;
}

// ---- Observer ----

void KubernetesCluster::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  if (flushing_) return;  // the thread flushing now delivers what was queued
  flushing_ = true;
  while (!outbox_.empty()) {
    Notice notice = std::move(outbox_.front());
    outbox_.pop_front();
    lock.unlock();
    if (notice.started) {
      observer_->OnTaskStarted(notice.launch_id, notice.time);
    } else {
      observer_->OnTaskEnded(notice.end);
    }
    lock.lock();
  }
  flushing_ = false;
}

}  // namespace tessera::agent
