// KubernetesCluster's worker thread (kubernetes_cluster.h): it carries out the queued API
// actions — creating and deleting pods and their headless Services, retrying transient failures
// with back-off — and periodically collects the pods of ended tasks. The inventory, pod
// observation, launch, recovery and log parts of the class are in kubernetes_cluster.cc.
#include <algorithm>
#include <string>
#include <utility>

#include "agent/kubernetes/api_status.h"
#include "agent/kubernetes/internal/cluster_helpers.h"
#include "agent/kubernetes/kubernetes_cluster.h"
#include "fmt/format.h"

namespace tessera::agent {

using k8s::IsTransient;
using k8s::Json;
using k8s::PodObservation;
using k8s::StartFailed;
using Steady = std::chrono::steady_clock;

// ---- Worker ----

void KubernetesCluster::WorkerLoop() {
  Steady::time_point next_gc = Steady::now() + options_.gc_interval;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const Steady::time_point now = Steady::now();
    auto ready = std::find_if(actions_.begin(), actions_.end(),
                              [now](const Action& a) { return a.not_before <= now; });
    if (ready != actions_.end()) {
      Action action = std::move(*ready);
      actions_.erase(ready);
      lock.unlock();
      Execute(std::move(action));
      Flush();
      lock.lock();
      continue;
    }
    if (now >= next_gc) {
      lock.unlock();
      CollectEndedPods();
      lock.lock();
      next_gc = Steady::now() + options_.gc_interval;
      continue;
    }
    Steady::time_point wake = next_gc;
    for (const Action& action : actions_) wake = std::min(wake, action.not_before);
    work_.wait_until(lock, wake);
  }
  worker_done_ = true;
  work_.notify_all();
}

void KubernetesCluster::Execute(Action action) {
  switch (action.kind) {
    case Action::Kind::kCreate:
      return Create(std::move(action));
    case Action::Kind::kDelete:
      return Delete(std::move(action));
    case Action::Kind::kDeleteService:
      return DeleteService(std::move(action));
  }
}

bool KubernetesCluster::Retry(Action& action, const absl::Status& status) {
  if (!IsTransient(status) || ++action.attempts >= options_.max_request_attempts) return false;
  Log(fmt::format("{} (attempt {} of {}; retrying)", std::string(status.message()), action.attempts,
                  options_.max_request_attempts));
  action.not_before = Steady::now() + options_.retry_backoff * action.attempts;
  std::lock_guard<std::mutex> lock(mu_);
  actions_.push_back(std::move(action));
  work_.notify_all();
  return true;
}

void KubernetesCluster::Create(Action action) {
  bool need_service = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tasks_.find(action.launch_id);
    if (it == tasks_.end() || it->second.end.has_value()) return;  // dropped by Recover
    if (it->second.cancelling) {
      EndLocked(it->second, k8s::EndOfVanishedPod(action.launch_id, true, Now()));
      return;
    }
    need_service = !action.service.empty() && !services_.contains(action.service);
  }
  // The job's Service comes before its pods, so their DNS names resolve from the start.
  absl::Status service = absl::OkStatus();
  if (need_service) {
    {
      std::lock_guard<std::mutex> lock(requests_mu_);
      service = EnsureService(action);
    }
    if (service.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      services_.insert(action.service);
    }
  }
  absl::StatusOr<Json> created;
  if (!service.ok()) {
    created = service;
  } else {
    std::lock_guard<std::mutex> lock(requests_mu_);
    created = requests_->Post(PodsPath(), action.manifest);
    if (!created.ok() && created.status().code() == absl::StatusCode::kAlreadyExists) {
      // A repeated create (after a retry, or a restart): the pod is ours when it carries the
      // same launch id.
      absl::StatusOr<Json> existing = requests_->Get(PodsPath() + "/" + action.pod);
      if (existing.ok()) {
        absl::StatusOr<PodObservation> pod = k8s::ObservePod(*existing);
        if (pod.ok() && pod->launch_id == action.launch_id) created = *std::move(existing);
      }
    }
  }
  if (!created.ok() && Retry(action, created.status())) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(action.launch_id);
  if (it == tasks_.end()) {
    // Dropped while the request was in flight: the pod must not run.
    if (created.ok()) EnqueueDeleteLocked(action.launch_id, action.pod, 0);
    return;
  }
  Task& task = it->second;
  if (!created.ok()) {
    EndLocked(task, StartFailed(action.launch_id, std::string(created.status().message()), Now()));
    return;
  }
  absl::StatusOr<PodObservation> pod = k8s::ObservePod(*created);
  if (pod.ok()) {
    ApplyLocked(task, action.launch_id, *pod);
  } else if (!task.confirmed) {
    task.confirmed = true;
    task.confirmed_epoch = pod_lists_sent_;
  }
}

void KubernetesCluster::Delete(Action action) {
  absl::StatusOr<Json> deleted;
  {
    std::lock_guard<std::mutex> lock(requests_mu_);
    deleted = requests_->Delete(PodsPath() + "/" + action.pod,
                                {{"gracePeriodSeconds", std::to_string(action.grace_seconds)}});
  }
  if (deleted.ok()) return;  // the watch reports the pod's end
  if (Retry(action, deleted.status())) return;
  if (deleted.status().code() != absl::StatusCode::kNotFound) {
    Log(fmt::format("delete pod {}: {}", action.pod, std::string(deleted.status().message())));
    return;
  }
  // No such pod: a cancelled task whose pod was never created ends here.
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(action.launch_id);
  if (it != tasks_.end() && it->second.cancelling && !it->second.confirmed) {
    EndLocked(it->second, k8s::EndOfVanishedPod(action.launch_id, true, Now()));
  }
}

absl::Status KubernetesCluster::EnsureService(const Action& action) {
  absl::StatusOr<Json> created = requests_->Post(ServicesPath(), action.service_manifest);
  if (created.ok()) return absl::OkStatus();
  if (created.status().code() != absl::StatusCode::kAlreadyExists) return created.status();
  // Created before (by another task of the job, or before a restart): it serves when it
  // selects the job's pods.
  absl::StatusOr<Json> existing = requests_->Get(ServicesPath() + "/" + action.service);
  if (!existing.ok()) return existing.status();
  const Json* spec = k8s::Member(*existing, "spec");
  const Json* selector = spec == nullptr ? nullptr : k8s::Member(*spec, "selector");
  const Json& wanted = action.service_manifest["spec"]["selector"];
  if (selector != nullptr && *selector == wanted) return absl::OkStatus();
  return absl::AlreadyExistsError(
      fmt::format("service {} in namespace {} exists and does not select this job's pods "
                  "(selector {}); the job needs that name for its rendezvous: delete or rename it",
                  action.service, options_.api.kube_namespace, wanted.dump()));
}

void KubernetesCluster::DeleteService(Action action) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A new launch of the job needs it, or it was deleted already.
    if (ServiceInUseLocked(action.service) || !services_.contains(action.service)) return;
  }
  absl::StatusOr<Json> deleted;
  {
    std::lock_guard<std::mutex> lock(requests_mu_);
    deleted = requests_->Delete(ServicesPath() + "/" + action.service);
  }
  const bool gone = deleted.ok() || deleted.status().code() == absl::StatusCode::kNotFound;
  if (!gone && Retry(action, deleted.status())) return;  // still known: a launch reuses it
  if (!gone) {
    Log(fmt::format("delete service {}: {}", action.service,
                    std::string(deleted.status().message())));
  }
  // Creates run on this thread too, so no launch of the job has used it meanwhile; the next
  // one creates it again (or finds it, when this delete failed).
  std::lock_guard<std::mutex> lock(mu_);
  services_.erase(action.service);
}

void KubernetesCluster::CollectEndedPods() {
  absl::StatusOr<Json> answer;
  {
    std::lock_guard<std::mutex> lock(requests_mu_);
    answer = requests_->Get(PodsPath(), {{"labelSelector", PodSelector()}});
  }
  if (!answer.ok()) {
    Log(fmt::format("collecting ended pods: {}", std::string(answer.status().message())));
    return;
  }
  absl::StatusOr<k8s::ObjectList> list = k8s::ObjectListFromJson(*answer, "pods");
  if (!list.ok()) return;
  const TimePoint now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  for (const PodObservation& pod : ObservePods(list->items)) {
    if (!k8s::IsTerminal(pod.phase) || tasks_.contains(pod.launch_id)) continue;
    if (pod.finished_at.has_value() && *pod.finished_at + options_.ended_pod_ttl > now) continue;
    EnqueueDeleteLocked(pod.launch_id, pod.name, 0);
  }
}

}  // namespace tessera::agent
