// FakeApiServer: the state a test changes (nodes, pods, services, node metrics, watch control)
// and the reaper that completes graceful deletions (fake_api_server.h).
#include "agent/kubernetes/testing/fake_api_server.h"

#include <algorithm>

#include "agent/kubernetes/testing/fake_objects.h"
#include "fmt/format.h"

namespace tessera::agent::k8s::testing {

Json& FakeApiServer::StampLocked(Json& object) {
  if (!object.contains("metadata") || !object["metadata"].is_object()) {
    object["metadata"] = Json::object();
  }
  object["metadata"]["resourceVersion"] = std::to_string(++rv_);
  return object;
}

void FakeApiServer::CreationLocked(Json& object) {
  if (!object.is_object()) return;
  Json& metadata = object["metadata"];
  if (!metadata.is_object()) return;
  if (!metadata.contains("uid")) {
    metadata["uid"] = fmt::format("00000000-0000-4000-8000-{:012d}", ++uid_counter_);
  }
  if (!metadata.contains("creationTimestamp")) metadata["creationTimestamp"] = NowText();
}

void FakeApiServer::PublishLocked(const std::string& type, const std::string& resource,
                                  const std::string& ns, const Json& object) {
  history_.push_back({.rv = rv_, .type = type, .resource = resource, .ns = ns, .object = object});
  changed_.notify_all();
}

void FakeApiServer::ModifyNodeLocked(const std::string& name,
                                     const std::function<void(Json&)>& change) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  change(it->second);
  StampLocked(it->second);
  PublishLocked("MODIFIED", "nodes", "", it->second);
}

void FakeApiServer::ModifyPodLocked(const std::string& ns, const std::string& name,
                                    const std::function<void(Json&)>& change) {
  auto it = pods_.find({ns, name});
  if (it == pods_.end()) return;
  change(it->second);
  StampLocked(it->second);
  PublishLocked("MODIFIED", "pods", ns, it->second);
}

void FakeApiServer::RemovePodLocked(const std::string& ns, const std::string& name) {
  auto it = pods_.find({ns, name});
  if (it == pods_.end()) return;
  Json last = std::move(it->second);
  pods_.erase(it);
  logs_.erase({ns, name});
  std::erase_if(deletions_, [&](const Deletion& d) { return d.ns == ns && d.name == name; });
  StampLocked(last);
  PublishLocked("DELETED", "pods", ns, last);
}

void FakeApiServer::AddNode(const FakeNode& node) { PutNode(NodeObject(node)); }

void FakeApiServer::PutNode(Json object) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string name = MetaString(object, "name");
  CreationLocked(object);
  const bool existed = nodes_.contains(name);
  StampLocked(object);
  nodes_[name] = object;
  PublishLocked(existed ? "MODIFIED" : "ADDED", "nodes", "", object);
}

void FakeApiServer::SetNodeReady(const std::string& name, bool ready) {
  std::lock_guard<std::mutex> lock(mu_);
  ModifyNodeLocked(name, [ready](Json& node) {
    node["status"]["conditions"] =
        Json::array({{{"type", "Ready"},
                      {"status", ready ? "True" : "False"},
                      {"reason", ready ? "KubeletReady" : "KubeletNotReady"}}});
  });
}

void FakeApiServer::SetNodeUnschedulable(const std::string& name, bool unschedulable) {
  std::lock_guard<std::mutex> lock(mu_);
  ModifyNodeLocked(name, [unschedulable](Json& node) {
    if (unschedulable) {
      node["spec"]["unschedulable"] = true;
    } else {
      node["spec"].erase("unschedulable");
    }
  });
}

void FakeApiServer::DeleteNode(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  Json last = std::move(it->second);
  nodes_.erase(it);
  StampLocked(last);
  PublishLocked("DELETED", "nodes", "", last);
}

std::optional<Json> FakeApiServer::GetPod(const std::string& ns, const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pods_.find({ns, name});
  if (it == pods_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> FakeApiServer::PodNames(const std::string& ns) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [key, pod] : pods_) {
    if (key.first == ns) names.push_back(key.second);
  }
  return names;
}

void FakeApiServer::PutPod(Json object) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string ns = MetaString(object, "namespace");
  const std::string name = MetaString(object, "name");
  CreationLocked(object);
  const bool existed = pods_.contains({ns, name});
  StampLocked(object);
  pods_[{ns, name}] = object;
  PublishLocked(existed ? "MODIFIED" : "ADDED", "pods", ns, object);
}

void FakeApiServer::SetPodRunning(const std::string& ns, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  ModifyPodLocked(ns, name, [](Json& pod) {
    const std::string now = NowText();
    pod["status"]["phase"] = "Running";
    pod["status"]["startTime"] = now;
    pod["status"]["containerStatuses"] =
        Json::array({{{"name", ContainerName(pod)},
                      {"ready", true},
                      {"restartCount", 0},
                      {"state", {{"running", {{"startedAt", now}}}}}}});
  });
}

void FakeApiServer::SetPodSucceeded(const std::string& ns, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  ModifyPodLocked(ns, name, [](Json& pod) {
    pod["status"]["containerStatuses"] = Terminated(pod, 0, "Completed");
    pod["status"]["phase"] = "Succeeded";
  });
}

void FakeApiServer::SetPodFailed(const std::string& ns, const std::string& name, int exit_code,
                                 const std::string& container_reason) {
  std::lock_guard<std::mutex> lock(mu_);
  ModifyPodLocked(ns, name, [&](Json& pod) {
    pod["status"]["containerStatuses"] = Terminated(pod, exit_code, container_reason);
    pod["status"]["phase"] = "Failed";
  });
}

void FakeApiServer::SetPodDeadlineExceeded(const std::string& ns, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  ModifyPodLocked(ns, name, [](Json& pod) {
    pod["status"]["containerStatuses"] = Terminated(pod, 137, "Error");
    pod["status"]["phase"] = "Failed";
    pod["status"]["reason"] = "DeadlineExceeded";
    pod["status"]["message"] = "Pod was active on the node longer than the specified deadline";
  });
}

void FakeApiServer::SetPodWaiting(const std::string& ns, const std::string& name,
                                  const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  ModifyPodLocked(ns, name, [&](Json& pod) {
    pod["status"]["phase"] = "Pending";
    pod["status"]["containerStatuses"] =
        Json::array({{{"name", ContainerName(pod)},
                      {"ready", false},
                      {"restartCount", 0},
                      {"state", {{"waiting", {{"reason", reason}, {"message", reason}}}}}}});
  });
}

void FakeApiServer::RemovePod(const std::string& ns, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  RemovePodLocked(ns, name);
}

void FakeApiServer::FinishDeletions() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Deletion> due = deletions_;
  for (const Deletion& d : due) RemovePodLocked(d.ns, d.name);
}

void FakeApiServer::AppendPodLog(const std::string& ns, const std::string& name,
                                 const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  logs_[{ns, name}] += text;
}

std::optional<Json> FakeApiServer::GetService(const std::string& ns,
                                              const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = services_.find({ns, name});
  if (it == services_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> FakeApiServer::ServiceNames(const std::string& ns) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [key, service] : services_) {
    if (key.first == ns) names.push_back(key.second);
  }
  return names;
}

void FakeApiServer::PutService(Json object) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string ns = MetaString(object, "namespace");
  const std::string name = MetaString(object, "name");
  CreationLocked(object);
  StampLocked(object);
  services_[{ns, name}] = std::move(object);
}

void FakeApiServer::SetNodeMetrics(const std::string& node, const std::string& cpu,
                                   const std::string& memory) {
  const std::string now = NowText();
  Json item = {{"metadata", {{"name", node}, {"creationTimestamp", now}}},
               {"timestamp", now},
               {"window", "15s"},
               {"usage", {{"cpu", cpu}, {"memory", memory}}}};
  std::lock_guard<std::mutex> lock(mu_);
  if (!node_metrics_.has_value()) node_metrics_.emplace();
  std::erase_if(*node_metrics_, [&](const Json& old) { return MetaString(old, "name") == node; });
  node_metrics_->push_back(std::move(item));
}

void FakeApiServer::PutNodeMetrics(Json item) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!node_metrics_.has_value()) node_metrics_.emplace();
  node_metrics_->push_back(std::move(item));
}

void FakeApiServer::HoldWatchEvents(bool hold) {
  std::lock_guard<std::mutex> lock(mu_);
  hold_ = hold;
  changed_.notify_all();
}

void FakeApiServer::CompactHistory() {
  std::lock_guard<std::mutex> lock(mu_);
  compacted_rv_ = rv_;
  std::erase_if(history_, [this](const Event& e) { return e.rv < compacted_rv_; });
}

void FakeApiServer::CloseWatches() {
  std::lock_guard<std::mutex> lock(mu_);
  ++watch_generation_;
  changed_.notify_all();
}

int64_t FakeApiServer::resource_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rv_;
}

std::vector<std::string> FakeApiServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void FakeApiServer::ReaperLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    changed_.wait_for(lock, std::chrono::milliseconds(50));
    const auto now = std::chrono::steady_clock::now();
    std::vector<Deletion> due;
    for (const Deletion& d : deletions_) {
      if (d.due <= now) due.push_back(d);
    }
    for (const Deletion& d : due) RemovePodLocked(d.ns, d.name);
  }
}

}  // namespace tessera::agent::k8s::testing
