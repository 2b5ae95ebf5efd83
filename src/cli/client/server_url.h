// ServerUrl: where the CLI finds the control plane's REST API — `--server` or TESSERA_SERVER,
// http://127.0.0.1:8080 by default (shared/JOBSPEC.md, CLI conventions); a comma-separated list
// names the replicas of a highly available control plane.
//
// Accepted: "http://HOST[:PORT][/PREFIX]" and, for convenience, "HOST[:PORT]" (taken as http).
// HOST is a name, an IPv4 address or a bracketed IPv6 address ("[::1]"); PORT defaults to 80;
// PREFIX (no trailing slash kept) is put before every API path, for a server behind a proxy.
// The API is plain HTTP: https and any other scheme, user info, queries and fragments are
// refused with InvalidArgument naming what to write instead.
// Thread-safe: pure functions on value types.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::cli {

inline constexpr std::string_view kDefaultServer = "http://127.0.0.1:8080";

struct ServerUrl {
  std::string host;  // without brackets: "::1"
  int port = 80;
  std::string path_prefix;  // "" or "/tessera"

  // "http://host:port/prefix", as the user would write it (brackets around IPv6 hosts).
  std::string ToString() const;
};

// `flag` names the source in errors ("--server", "TESSERA_SERVER").
absl::StatusOr<ServerUrl> ParseServerUrl(std::string_view text, std::string_view flag);

// Several URLs separated by commas, the replicas of a highly available control plane
// ("http://a:8080,http://b:8080"); each as ParseServerUrl, an empty one refused.
absl::StatusOr<std::vector<ServerUrl>> ParseServerUrls(std::string_view text,
                                                       std::string_view flag);

}  // namespace tessera::cli
