// Lists and watch events of the Kubernetes API, as they arrive on the wire.
//
// A LIST answer is {"kind":"<Kind>List","metadata":{"resourceVersion":"..."},"items":[...]};
// a watch (?watch=1) answers with one JSON object per line, {"type":T,"object":O}, where T is
// ADDED, MODIFIED or DELETED (O: the object as it now is, or as it was last), BOOKMARK (O
// carries only metadata.resourceVersion: the watch has seen everything up to it) or ERROR (O
// is a Status: a code 410 says the resourceVersion is too old, the client lists again).
// Errors: InvalidArgument saying what is malformed. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/kubernetes/internal/json_fields.h"

namespace tessera::agent::k8s {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  Json object;  // a JSON object
};

absl::StatusOr<WatchEvent> ParseWatchEvent(std::string_view line);

struct ObjectList {
  std::vector<Json> items;  // each a JSON object (other entries are left out)
  std::string resource_version;
};

// `what` names the list in messages ("nodes").
absl::StatusOr<ObjectList> ParseObjectList(std::string_view body, std::string_view what);
absl::StatusOr<ObjectList> ObjectListFromJson(const Json& list, std::string_view what);

// metadata.resourceVersion, "" when missing or not a string.
std::string ResourceVersionOf(const Json& object);

}  // namespace tessera::agent::k8s
