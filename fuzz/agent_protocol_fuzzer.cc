// Feeds arbitrary bytes, parsed as an agent's protocol message (proto/tessera/agent/v1/
// agent.proto, AgentMessage), to the checks the control plane applies to what agents send
// (agent/protocol/agent_protocol.h): inventories, and the task updates, binds, log requests and
// log chunks that cross the stream. Checks: no crash, leak or undefined behaviour; every
// rejection is an InvalidArgument
// that names its field; every accepted node has quantities >= 0, allocatable <= capacity, one
// GPU entry per device in index order with a model, the cluster's name and label; an accepted
// node survives NodeToProto -> NodeFromProto unchanged; an accepted log chunk holds at most the
// bytes asked for and ends where they end, or carries a non-OK status.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/protocol/agent_protocol.h"
#include "fuzz_check.h"

namespace {

using ::tessera::fuzz::Require;
namespace agent = ::tessera::agent;
namespace v1 = ::tessera::agent::v1;

void RequireFieldError(const absl::Status& status, std::string_view prefix,
                       std::string_view input) {
  Require(status.code() == absl::StatusCode::kInvalidArgument, "rejections are InvalidArgument",
          input, status.ToString());
  const std::string message(status.message());
  Require(message.starts_with(prefix), "a rejection names its field", input, status.ToString());
}

void FuzzInventory(const v1::Inventory& inventory, std::string_view input) {
  const tessera::Labels labels = {{"region", "east"}};
  const agent::InventoryRules rules{.known_gpu_models = {"H100", "A100-80GB"}};
  absl::StatusOr<std::vector<tessera::Node>> nodes =
      agent::InventoryFromProto(inventory, "east", labels, rules);
  if (!nodes.ok()) {
    RequireFieldError(nodes.status(), "inventory.", input);
    return;
  }
  Require(static_cast<int>(nodes->size()) == inventory.nodes_size(), "one node per entry", input);
  for (size_t i = 0; i < nodes->size(); ++i) {
    const tessera::Node& node = (*nodes)[i];
    Require(node.capacity.cpu >= 0 && node.capacity.memory >= 0 && node.allocatable.cpu >= 0 &&
                node.allocatable.memory >= 0,
            "quantities >= 0", input);
    Require(node.allocatable.cpu <= node.capacity.cpu &&
                node.allocatable.memory <= node.capacity.memory,
            "allocatable <= capacity", input);
    Require(node.capacity.gpu == 1000 * static_cast<int64_t>(node.gpus.size()),
            "one GPU entry per device", input);
    for (size_t d = 0; d < node.gpus.size(); ++d) {
      Require(node.gpus[d].index == static_cast<int32_t>(d) && !node.gpus[d].model.empty() &&
                  node.gpus[d].memory >= 0,
              "devices in index order, with a model", input);
    }
    Require(node.cluster == "east" && node.labels.at("tessera.io/cluster") == "east" &&
                node.labels.at("region") == "east",
            "the cluster's name and labels", input);
    absl::StatusOr<tessera::Node> again = agent::NodeFromProto(
        agent::NodeToProto(node, inventory.nodes(i).id()), "east", labels, rules, "again");
    Require(again.ok() && again->name == node.name && again->labels == node.labels &&
                again->capacity.cpu == node.capacity.cpu &&
                again->gpus.size() == node.gpus.size() && again->taints == node.taints,
            "an accepted node round-trips", input);
  }
}

void FuzzLogChunk(const v1::LogChunk& chunk, std::string_view input) {
  constexpr int64_t kOffset = 1000;
  constexpr int64_t kLimit = 4096;
  if (absl::Status s = agent::CheckLogChunk(chunk, kOffset, kLimit); !s.ok()) {
    RequireFieldError(s, "logChunk.", input);
    return;
  }
  absl::StatusOr<tessera::LogChunk> answer = agent::LogChunkFromProto(chunk);
  if (!answer.ok()) {
    Require(chunk.error_code() != 0 && chunk.data().empty(), "an error carries no data", input);
    return;
  }
  Require(static_cast<int64_t>(answer->data.size()) <= kLimit &&
              answer->next_offset == kOffset + static_cast<int64_t>(answer->data.size()),
          "an accepted chunk is what was asked for", input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  v1::AgentMessage message;
  if (!message.ParseFromArray(data, static_cast<int>(size))) return 0;
  switch (message.body_case()) {
    case v1::AgentMessage::kInventory:
      FuzzInventory(message.inventory(), input);
      break;
    case v1::AgentMessage::kTask:
      if (absl::StatusOr<tessera::TaskEnd> end = agent::EndFromUpdate(message.task());
          !end.ok()) {
        RequireFieldError(end.status(), "task.", input);
      }
      break;
    case v1::AgentMessage::kLogChunk:
      FuzzLogChunk(message.log_chunk(), input);
      break;
    default:
      break;
  }
  // The same bytes as a server's Bind reach an agent: its checks must hold too.
  v1::Bind bind;
  if (bind.ParseFromArray(data, static_cast<int>(size))) {
    absl::StatusOr<tessera::TaskLaunchSpec> spec = agent::LaunchFromBind(bind);
    if (!spec.ok()) RequireFieldError(spec.status(), "bind.", input);
  }
  // And as a server's LogRequest.
  v1::LogRequest request;
  if (request.ParseFromArray(data, static_cast<int>(size))) {
    if (absl::Status s = agent::CheckLogRequest(request); !s.ok()) {
      RequireFieldError(s, "logRequest.", input);
    }
  }
  return 0;
}
