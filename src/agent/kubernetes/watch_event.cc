#include "agent/kubernetes/watch_event.h"

#include "fmt/format.h"

namespace tessera::agent::k8s {
namespace {

constexpr size_t kMaxQuoted = 80;

std::string Quote(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kMaxQuoted)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

}  // namespace

absl::StatusOr<WatchEvent> ParseWatchEvent(std::string_view line) {
  std::optional<Json> event = ParseJson(line);
  if (!event.has_value() || !event->is_object()) {
    return absl::InvalidArgumentError(
        fmt::format("watch event: not a JSON object: '{}'", Quote(line)));
  }
  absl::StatusOr<std::string> type = StringOr(*event, "type", "watch event");
  if (!type.ok()) return type.status();
  WatchEvent out;
  if (*type == "ADDED") {
    out.type = WatchEventType::kAdded;
  } else if (*type == "MODIFIED") {
    out.type = WatchEventType::kModified;
  } else if (*type == "DELETED") {
    out.type = WatchEventType::kDeleted;
  } else if (*type == "BOOKMARK") {
    out.type = WatchEventType::kBookmark;
  } else if (*type == "ERROR") {
    out.type = WatchEventType::kError;
  } else {
    return absl::InvalidArgumentError(
        fmt::format("watch event: type: unknown type '{}'", Quote(*type)));
  }
  Json* object = nullptr;
  if (auto it = event->find("object"); it != event->end() && it->is_object()) object = &*it;
  if (object == nullptr) {
    return absl::InvalidArgumentError("watch event: object: missing or not a JSON object");
  }
  out.object = std::move(*object);
  return out;
}

absl::StatusOr<ObjectList> ObjectListFromJson(const Json& list, std::string_view what) {
  if (!list.is_object()) {
    return absl::InvalidArgumentError(fmt::format("{} list: not a JSON object", what));
  }
  ObjectList out;
  out.resource_version = ResourceVersionOf(list);
  const Json* items = Member(list, "items");
  if (items == nullptr || items->is_null()) return out;  // an empty list may omit items
  if (!items->is_array()) {
    return absl::InvalidArgumentError(fmt::format("{} list: items: must be a list", what));
  }
  for (const Json& item : *items) {
    if (item.is_object()) out.items.push_back(item);
  }
  return out;
}

absl::StatusOr<ObjectList> ParseObjectList(std::string_view body, std::string_view what) {
  std::optional<Json> list = ParseJson(body);
  if (!list.has_value()) {
    return absl::InvalidArgumentError(fmt::format("{} list: not JSON: '{}'", what, Quote(body)));
  }
  return ObjectListFromJson(*list, what);
}

std::string ResourceVersionOf(const Json& object) {
  const Json* metadata = Member(object, "metadata");
  if (metadata == nullptr) return "";
  const Json* rv = Member(*metadata, "resourceVersion");
  return rv != nullptr && rv->is_string() ? rv->get<std::string>() : "";
}

}  // namespace tessera::agent::k8s
