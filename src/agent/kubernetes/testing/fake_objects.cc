#include "agent/kubernetes/testing/fake_objects.h"

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tessera::agent::k8s::testing {

std::string NowText() {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
}

std::string MetaString(const Json& object, const char* key) {
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) {
    return "";
  }
  const Json& metadata = object["metadata"];
  return metadata.contains(key) && metadata[key].is_string() ? metadata[key].get<std::string>()
                                                             : "";
}

std::string ContainerName(const Json& pod) {
  if (pod.contains("spec") && pod["spec"].contains("containers") &&
      pod["spec"]["containers"].is_array() && !pod["spec"]["containers"].empty() &&
      pod["spec"]["containers"][0].contains("name")) {
    return pod["spec"]["containers"][0]["name"].get<std::string>();
  }
  return "task";
}

std::string Phase(const Json& pod) {
  if (pod.contains("status") && pod["status"].contains("phase") &&
      pod["status"]["phase"].is_string()) {
    return pod["status"]["phase"].get<std::string>();
  }
  return "Pending";
}

std::string StartedAt(const Json& pod) {
  if (pod.contains("status") && pod["status"].contains("containerStatuses") &&
      pod["status"]["containerStatuses"].is_array() &&
      !pod["status"]["containerStatuses"].empty()) {
    const Json& state = pod["status"]["containerStatuses"][0]["state"];
    if (state.contains("running")) return state["running"].value("startedAt", NowText());
  }
  return NowText();
}

Json Terminated(const Json& pod, int exit_code, const std::string& reason) {
  return Json::array({{{"name", ContainerName(pod)},
                       {"ready", false},
                       {"restartCount", 0},
                       {"state",
                        {{"terminated",
                          {{"exitCode", exit_code},
                           {"reason", reason},
                           {"startedAt", StartedAt(pod)},
                           {"finishedAt", NowText()}}}}}}});
}

Json NodeObject(const FakeNode& node) {
  Json labels = {{"kubernetes.io/hostname", node.name}, {"kubernetes.io/os", "linux"}};
  for (const auto& [key, value] : node.labels) labels[key] = value;
  if (!node.gpu_product.empty()) labels["nvidia.com/gpu.product"] = node.gpu_product;
  if (node.gpu_memory_mib > 0) {
    labels["nvidia.com/gpu.memory"] = std::to_string(node.gpu_memory_mib);
  }
  Json resources = {{"cpu", node.cpu}, {"memory", node.memory}, {"pods", "110"}};
  if (node.gpus > 0) resources["nvidia.com/gpu"] = std::to_string(node.gpus);
  Json spec = Json::object();
  if (!node.taints.empty()) spec["taints"] = node.taints;
  if (node.unschedulable) spec["unschedulable"] = true;
  return {{"kind", "Node"},
          {"apiVersion", "v1"},
          {"metadata", {{"name", node.name}, {"labels", labels}}},
          {"spec", spec},
          {"status",
           {{"capacity", resources},
            {"allocatable", resources},
            {"conditions",
             Json::array({{{"type", "Ready"},
                           {"status", node.ready ? "True" : "False"},
                           {"reason", node.ready ? "KubeletReady" : "KubeletNotReady"}}})}}}};
}

}  // namespace tessera::agent::k8s::testing
