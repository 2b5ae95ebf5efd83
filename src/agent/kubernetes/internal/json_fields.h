// Typed, non-throwing reads of untrusted Kubernetes JSON objects.
//
// Kubernetes objects come from the network: any member may be missing or of the wrong type.
// These helpers never throw and never touch a missing member; a member that is present with
// the wrong type is an InvalidArgument error whose message starts with the given field path
// ("node \"n1\": metadata.labels.zone: must be a string"). Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tessera::agent::k8s {

using Json = nlohmann::json;

// Member `key` of `object`; nullptr when `object` is not an object or lacks the member.
const Json* Member(const Json& object, std::string_view key);

// The string member `key`: nullopt when missing or null, an error naming `path` when it is
// present with another type.
absl::StatusOr<std::optional<std::string>> StringMember(const Json& object, std::string_view key,
                                                        std::string_view path);

// The string member `key` or "" when missing (errors as StringMember).
absl::StatusOr<std::string> StringOr(const Json& object, std::string_view key,
                                     std::string_view path);

// The boolean member `key` or `fallback` when missing or null.
absl::StatusOr<bool> BoolOr(const Json& object, std::string_view key, bool fallback,
                            std::string_view path);

// The integer member `key` (a JSON integer within int64), nullopt when missing or null.
absl::StatusOr<std::optional<int64_t>> IntMember(const Json& object, std::string_view key,
                                                 std::string_view path);

// The text of a quantity value ("250m", "64Gi"): a string, or a JSON integer in its decimal
// form; an error naming `path` for anything else.
absl::StatusOr<std::string> QuantityText(const Json& value, std::string_view path);

// Serialises `json` on one line; invalid UTF-8 in strings is replaced, never thrown on.
std::string DumpJson(const Json& json);

// Parses `text`; nullopt when it is not JSON.
std::optional<Json> ParseJson(std::string_view text);

}  // namespace tessera::agent::k8s
