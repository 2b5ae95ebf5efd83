#include "server/node_admin.h"

#include <array>
#include <utility>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace tessera::server {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 4> kStateNames = {"Ready", "Cordoned", "Draining",
                                                         "Drained"};
constexpr std::array<std::string_view, 3> kActionNames = {"cordon", "uncordon", "drain"};

std::optional<NodeAdminState> ParseState(std::string_view name) {
  for (size_t i = 0; i < kStateNames.size(); ++i) {
    if (kStateNames[i] == name) return static_cast<NodeAdminState>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view NodeAdminStateName(NodeAdminState state) {
  return kStateNames[static_cast<size_t>(state)];
}

std::string_view NodeActionName(NodeAction action) {
  return kActionNames[static_cast<size_t>(action)];
}

std::optional<NodeAction> ParseNodeAction(std::string_view name) {
  for (size_t i = 0; i < kActionNames.size(); ++i) {
    if (kActionNames[i] == name) return static_cast<NodeAction>(i);
  }
  return std::nullopt;
}

NodeAdminState NextAdminState(NodeAdminState state, NodeAction action) {
  switch (action) {
    case NodeAction::kUncordon:
      return NodeAdminState::kReady;
    case NodeAction::kCordon:
      return state == NodeAdminState::kReady ? NodeAdminState::kCordoned : state;
    case NodeAction::kDrain:
      return state == NodeAdminState::kReady || state == NodeAdminState::kCordoned
                 ? NodeAdminState::kDraining
                 : state;
  }
  return state;
}

bool ApplyNodeAction(NodeAdmin& record, NodeAction action, std::string reason,
                     std::optional<Duration> grace, std::string by, TimePoint now) {
  const NodeAdminState next = NextAdminState(record.state, action);
  const bool changed = next != record.state;
  if (changed) {
    record.state = next;
    record.since = now;
    record.grace = next == NodeAdminState::kDraining ? grace : std::nullopt;
  }
  if (changed || !reason.empty()) record.reason = std::move(reason);
  record.by = std::move(by);
  return changed;
}

std::string NodeAdminKey(std::string_view cluster, std::string_view node) {
  return fmt::format("{}{}/{}", kNodeAdminPrefix, cluster, node);
}

std::string EncodeNodeAdmin(const NodeAdmin& record) {
  json out{{"cluster", record.cluster},
           {"node", record.node},
           {"state", NodeAdminStateName(record.state)},
           {"reason", record.reason},
           {"by", record.by},
           {"since", record.since.time_since_epoch().count()}};
  out["graceMillis"] = record.grace ? json(record.grace->count()) : json(nullptr);
  return out.dump();
}

absl::StatusOr<NodeAdmin> DecodeNodeAdmin(std::string_view key, std::string_view value) {
  NodeAdmin record;
  try {
    const json j = json::parse(value);
    record.cluster = j.at("cluster").get<std::string>();
    record.node = j.at("node").get<std::string>();
    const std::optional<NodeAdminState> state = ParseState(j.at("state").get<std::string>());
    if (!state) return absl::DataLossError(fmt::format("{}: state: unknown state", key));
    record.state = *state;
    record.reason = j.at("reason").get<std::string>();
    record.by = j.at("by").get<std::string>();
    record.since = TimePoint(Duration(j.at("since").get<int64_t>()));
    if (const json& grace = j.at("graceMillis"); !grace.is_null()) {
      record.grace = Duration(grace.get<int64_t>());
    }
  } catch (const std::exception& e) {
    return absl::DataLossError(fmt::format("{}: {}", key, e.what()));
  }
  if (NodeAdminKey(record.cluster, record.node) != key) {
    return absl::DataLossError(fmt::format("{}: cluster and node do not match the key", key));
  }
  return record;
}

}  // namespace tessera::server
