// The agent protocol's conversions (proto/tessera/agent/v1/agent.proto ↔ the control plane's
// types), with the checks the server applies to everything an agent sends.
//
// An agent is outside input: a node from an inventory is checked field by field and the first
// fault is returned as InvalidArgument naming the field, as
//   `inventory.nodes[3] "gpu-7": cpu: must be >= 0, not -8000`.
// Log replies (LogChunk) are checked against the request they answer (CheckLogChunk).
// Checks: names ([A-Za-z0-9][A-Za-z0-9._-]{0,252}), quantities >= 0, allocatable <= capacity,
// at most kMaxGpusPerNode (core/node.h: 128) GPU devices per node, indexed 0..n-1 in order, a
// GPU model that is a name and, when the control plane lists its known models, one of them; taint
// effects; label keys non-empty. A full inventory also refuses duplicate node names and ids; a
// delta refuses a duplicate within itself.
//
// Units: as core/node.h (cpu millicores, memory bytes, milli-GPU); times in the protocol are
// milliseconds since the Unix epoch, durations milliseconds.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/node.h"
#include "tessera/cluster/cluster.h"
#include "tessera/agent/v1/agent.pb.h"

namespace tessera::agent {

// What the control plane accepts from agents.
struct InventoryRules {
  // GPU models the fleet may report; empty: any model that is a valid name.
  std::set<std::string, std::less<>> known_gpu_models;
};

// `node` as the protocol sends it, named by `id` in heartbeats.
v1::Node NodeToProto(const Node& node, uint32_t id);
// The node `proto` describes, for cluster `cluster` whose labels are added (the node's own
// labels win, except tessera.io/cluster). `field` prefixes errors ("inventory.nodes[3]").
absl::StatusOr<Node> NodeFromProto(const v1::Node& proto, std::string_view cluster,
                                   const Labels& cluster_labels, const InventoryRules& rules,
                                   std::string_view field);
// Checks a whole inventory message: every node, and duplicate names or ids (within the message,
// and for a full inventory that is all there is). Returns the nodes in message order.
absl::StatusOr<std::vector<Node>> InventoryFromProto(const v1::Inventory& inventory,
                                                     std::string_view cluster,
                                                     const Labels& cluster_labels,
                                                     const InventoryRules& rules);

v1::Bind BindFromLaunch(const TaskLaunchSpec& spec, uint64_t epoch);
// InvalidArgument naming the field when the launch id, node or a quantity is malformed.
absl::StatusOr<TaskLaunchSpec> LaunchFromBind(const v1::Bind& bind);

v1::TaskUpdate StartedUpdate(std::string_view launch_id, TimePoint time, uint64_t epoch);
v1::TaskUpdate EndedUpdate(const TaskEnd& end, uint64_t epoch);
// The end a TaskUpdate reports; InvalidArgument for a state that is not an end.
absl::StatusOr<TaskEnd> EndFromUpdate(const v1::TaskUpdate& update);

// Task logs. One LogRequest is answered by one LogChunk carrying at most kMaxLogChunkBytes
// (1 MiB, well under gRPC's 4 MiB message limit): the agent clamps a request's limit to it and
// the server asks for no more.
inline constexpr int64_t kMaxLogChunkBytes = 1 << 20;

// A request for at most `limit` bytes of `launch_id`'s log from `offset`.
v1::LogRequest LogRequestMessage(uint64_t epoch, uint64_t request_id, std::string_view launch_id,
                                 LogStream stream, int64_t offset, int64_t limit);
LogStream LogStreamFromProto(v1::LogRequest::Stream stream);
// The agent's check of a LogRequest: InvalidArgument naming the field (logRequest.launchId, a
// name; logRequest.stream, a known one; logRequest.offset >= 0; logRequest.limit > 0).
absl::Status CheckLogRequest(const v1::LogRequest& request);
// The agent's answer: the backend's chunk, or its error as a code and message.
v1::LogChunk LogChunkToProto(const absl::StatusOr<LogChunk>& result, uint64_t request_id,
                             uint64_t epoch);
// The server's check of a LogChunk answering a request for at most `limit` bytes from `offset`:
// InvalidArgument naming the field when the error code is not a status code
// (logChunk.errorCode), an error carries data or the data is larger than `limit`
// (logChunk.data), or next_offset is not offset + the size of the data (logChunk.nextOffset).
// REQUIRES: offset >= 0.
absl::Status CheckLogChunk(const v1::LogChunk& chunk, int64_t offset, int64_t limit);
// What a checked LogChunk answers: the slice, or the backend's error with its code and message.
absl::StatusOr<LogChunk> LogChunkFromProto(const v1::LogChunk& chunk);

// [A-Za-z0-9][A-Za-z0-9._-]{0,252}: node names, launch ids and GPU models.
bool IsValidName(std::string_view name);

// Cluster labels as Kubernetes writes labels: a key is [prefix/]name, the prefix a DNS
// subdomain, the name (and a non-empty value) [A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])? of at
// most 63 characters. tessera.io/cluster is refused: the cluster's name sets it.
// InvalidArgument naming `field` and the label.
absl::Status CheckClusterLabels(const google::protobuf::Map<std::string, std::string>& labels,
                                std::string_view field);

int64_t ToMillis(TimePoint time);
TimePoint FromMillis(int64_t millis);

}  // namespace tessera::agent
