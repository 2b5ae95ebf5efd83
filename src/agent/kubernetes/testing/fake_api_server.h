// FakeApiServer: a test fixture that speaks the Kubernetes API server's REST wire format for
// the subset Tessera's Kubernetes backend (and kubectl's basic verbs) use. It is NOT a
// Kubernetes: there is no scheduler, kubelet, controller or etcd behind it — the test plays
// the kubelet through the helpers below (a pod stays Pending until the test moves it on).
//
// Served, on 127.0.0.1:<a free port>, plain HTTP or TLS (with optional client certificates):
//   GET    /version, /api, /api/v1, /apis          discovery, enough for kubectl
//   GET    /api/v1/nodes[/<name>]                   NodeList / Node
//   GET    /api/v1/namespaces/<ns>/pods[/<name>]    PodList / Pod; also /api/v1/pods (every
//                                                   namespace)
//   GET    ...?watch=1&resourceVersion=<rv>         a watch: chunked, one JSON event per line
//                                                   ({"type":ADDED|MODIFIED|DELETED|BOOKMARK|
//                                                   ERROR,"object":...}), the events after rv;
//                                                   rv "" or "0" first sends the current
//                                                   objects as ADDED; rv older than the
//                                                   compacted history: one ERROR event with a
//                                                   410 Expired Status, then the stream ends;
//                                                   timeoutSeconds ends the stream; with
//                                                   allowWatchBookmarks=true a BOOKMARK after
//                                                   each second without events; the stream is
//                                                   labelled application/json;stream=watch
//   labelSelector on lists and watches              k=v, k==v, k!=v, k, !k, comma-separated
//   POST   /api/v1/namespaces/<ns>/pods             201 with the stored pod (uid,
//                                                   resourceVersion, creationTimestamp,
//                                                   status.phase Pending); 409 AlreadyExists;
//                                                   422 Invalid for a malformed pod and for a
//                                                   spec.nodeName naming no node (a real API
//                                                   server accepts that pod, and its pod
//                                                   garbage collector deletes it later)
//   DELETE /api/v1/namespaces/<ns>/pods/<name>      gracePeriodSeconds (query or
//                                                   DeleteOptions body; default the pod's
//                                                   terminationGracePeriodSeconds): 0, or a pod
//                                                   that has ended, goes at once; otherwise
//                                                   deletionTimestamp is set and the pod goes
//                                                   when the grace has passed (real time) or at
//                                                   FinishDeletions()
//   GET    /api/v1/namespaces/<ns>/pods/<name>/log  the text given by AppendPodLog
//                                                   (limitBytes); 400 while the pod is Pending
//   GET    /api/v1/namespaces/<ns>/services[/<name>] ServiceList (labelSelector) / Service;
//                                                   also /api/v1/services (every namespace)
//   POST   /api/v1/namespaces/<ns>/services         201 with the stored Service (uid,
//                                                   resourceVersion, creationTimestamp,
//                                                   spec.type ClusterIP, a spec.clusterIP
//                                                   from 10.96.0.0/16 unless given);
//                                                   409 AlreadyExists; 422 Invalid for a name
//                                                   that is not a DNS-1035 label or a port
//                                                   outside 1..65535
//   DELETE /api/v1/namespaces/<ns>/services/<name>  200 with the last state, at once
//                                                   (services have no grace); 404 NotFound
//   GET    /apis/metrics.k8s.io/v1beta1/nodes       NodeMetricsList (what metrics-server
//                                                   serves: kubectl top nodes) of the items the
//                                                   test set; 404 NotFound until it sets any,
//                                                   as a cluster without metrics-server answers;
//                                                   /apis lists the group once it is served
// Failures are Status objects ({"kind":"Status","status":"Failure","reason","message",
// "code"}); other paths answer 404 NotFound. Every request needs "Authorization: Bearer
// <token>" when a token is set (401 Unauthorized otherwise). resourceVersions are one counter
// over every object. Not served: OpenAPI schemas (kubectl create needs --validate=false),
// field selectors, PATCH / PUT, watches of services, endpoints and DNS (a Service selects
// nothing here), pod metrics and single-node metrics, other resources and API groups, log
// following.
//
// Thread-safety: every method may be called from any thread while the server runs.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace httplib {
class Server;
class Request;
class Response;
class DataSink;
}  // namespace httplib

namespace tessera::agent::k8s::testing {

using Json = nlohmann::json;

struct FakeApiServerOptions {
  std::string token = "test-token";  // "" lets every request in
  // TLS when set (PEM): the server's certificate and key, and optionally the CA that client
  // certificates must chain to (a request without one is then refused).
  std::string tls_cert_pem;
  std::string tls_key_pem;
  std::string client_ca_pem;
};

// A node as tests describe it; NodeObject() writes the Kubernetes object.
struct FakeNode {
  std::string name;
  std::string cpu = "8";
  std::string memory = "64Gi";
  int gpus = 0;
  std::string gpu_product;     // label nvidia.com/gpu.product when set
  int64_t gpu_memory_mib = 0;  // label nvidia.com/gpu.memory when > 0
  std::map<std::string, std::string> labels;
  Json taints = Json::array();  // [{"key","value","effect"}]
  bool ready = true;
  bool unschedulable = false;
};
Json NodeObject(const FakeNode& node);

class FakeApiServer {
 public:
  static absl::StatusOr<std::unique_ptr<FakeApiServer>> Start(FakeApiServerOptions options = {});
  ~FakeApiServer();

  // "http://127.0.0.1:<port>" or "https://127.0.0.1:<port>".
  std::string url() const;

  // ---- Nodes (each change is a watch event) ----
  void AddNode(const FakeNode& node);
  void PutNode(Json object);  // adds or replaces a raw object (malformed ones too)
  void SetNodeReady(const std::string& name, bool ready);
  void SetNodeUnschedulable(const std::string& name, bool unschedulable);
  void DeleteNode(const std::string& name);

  // ---- Pods: the test plays the kubelet ----
  std::optional<Json> GetPod(const std::string& ns, const std::string& name) const;
  std::vector<std::string> PodNames(const std::string& ns) const;
  void PutPod(Json object);  // stores a pod as given (one a previous agent created)
  void SetPodRunning(const std::string& ns, const std::string& name);
  void SetPodSucceeded(const std::string& ns, const std::string& name);
  void SetPodFailed(const std::string& ns, const std::string& name, int exit_code,
                    const std::string& container_reason = "Error");
  void SetPodDeadlineExceeded(const std::string& ns, const std::string& name);
  void SetPodWaiting(const std::string& ns, const std::string& name, const std::string& reason);
  void RemovePod(const std::string& ns, const std::string& name);  // deleted by someone else
  void FinishDeletions();  // ends every graceful deletion now
  void AppendPodLog(const std::string& ns, const std::string& name, const std::string& text);

  // ---- Services ----
  std::optional<Json> GetService(const std::string& ns, const std::string& name) const;
  std::vector<std::string> ServiceNames(const std::string& ns) const;
  void PutService(Json object);  // stores a Service as given (one a previous agent created)

  // ---- Node metrics (metrics.k8s.io) ----
  // Sets a node's usage, with quantities as metrics-server writes them (cpu "123456789n",
  // "250m"; memory "1048576Ki"); the metrics API is served from the first call on.
  void SetNodeMetrics(const std::string& node, const std::string& cpu, const std::string& memory);
  void PutNodeMetrics(Json item);  // adds an item as given (malformed ones too)

  // ---- Watches ----
  // While held, open watches send nothing (events stay in the history).
  void HoldWatchEvents(bool hold);
  // Every resourceVersion before the current one becomes too old to watch from (410).
  void CompactHistory();
  // Ends every open watch stream; clients reconnect.
  void CloseWatches();
  int64_t resource_version() const;

  // "GET /api/v1/nodes?watch=1&...": every request received, in order.
  std::vector<std::string> requests() const;

 private:
  struct Event {
    int64_t rv = 0;
    std::string type;      // ADDED, MODIFIED, DELETED
    std::string resource;  // "nodes", "pods"
    std::string ns;
    Json object;
  };
  struct Deletion {
    std::string ns;
    std::string name;
    std::chrono::steady_clock::time_point due;
  };

  explicit FakeApiServer(FakeApiServerOptions options);
  absl::Status Listen();
  void AddRoutes();
  bool Authorized(const httplib::Request& req, httplib::Response& res);
  void Record(const httplib::Request& req);

  // REQUIRES: mu_ held for the *Locked methods.
  void PublishLocked(const std::string& type, const std::string& resource, const std::string& ns,
                     const Json& object);
  Json& StampLocked(Json& object);    // a new resourceVersion
  void CreationLocked(Json& object);  // uid and creationTimestamp when missing
  void ModifyPodLocked(const std::string& ns, const std::string& name,
                       const std::function<void(Json&)>& change);
  void ModifyNodeLocked(const std::string& name, const std::function<void(Json&)>& change);
  void RemovePodLocked(const std::string& ns, const std::string& name);

  void List(const std::string& resource, const std::string& ns, const httplib::Request& req,
            httplib::Response& res);
  void Watch(const std::string& resource, const std::string& ns, const httplib::Request& req,
             httplib::Response& res);
  void CreatePod(const std::string& ns, const httplib::Request& req, httplib::Response& res);
  void DeletePod(const std::string& ns, const std::string& name, const httplib::Request& req,
                 httplib::Response& res);
  void CreateService(const std::string& ns, const httplib::Request& req, httplib::Response& res);
  void DeleteService(const std::string& ns, const std::string& name, httplib::Response& res);
  void PodLog(const std::string& ns, const std::string& name, const httplib::Request& req,
              httplib::Response& res);
  void ReaperLoop();

  const FakeApiServerOptions options_;
  std::unique_ptr<httplib::Server> http_;
  int port_ = 0;
  std::thread serve_thread_;
  std::thread reaper_thread_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  int64_t rv_ = 1;
  int64_t compacted_rv_ = 0;
  int64_t watch_generation_ = 0;  // CloseWatches() ends the streams of older generations
  bool hold_ = false;
  bool stopping_ = false;
  int64_t uid_counter_ = 0;
  std::map<std::string, Json> nodes_;
  std::map<std::pair<std::string, std::string>, Json> pods_;  // (namespace, name)
  std::map<std::pair<std::string, std::string>, std::string> logs_;
  std::map<std::pair<std::string, std::string>, Json> services_;  // (namespace, name)
  std::optional<std::vector<Json>> node_metrics_;  // nullopt: the metrics API is not served
  int64_t cluster_ips_ = 0;
  std::vector<Deletion> deletions_;
  std::vector<Event> history_;
  std::vector<std::string> requests_;
};

}  // namespace tessera::agent::k8s::testing
