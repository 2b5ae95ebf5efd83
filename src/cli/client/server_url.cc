#include "cli/client/server_url.h"

#include <algorithm>
#include <charconv>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace tessera::cli {
namespace {

absl::Status Bad(std::string_view flag, std::string_view text, std::string_view problem) {
  return absl::InvalidArgumentError(fmt::format("{}: '{}': {}", flag, text, problem));
}

}  // namespace

std::string ServerUrl::ToString() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  return fmt::format("http://{}{}{}:{}{}", ipv6 ? "[" : "", host, ipv6 ? "]" : "", port,
                     path_prefix);
}

absl::StatusOr<ServerUrl> ParseServerUrl(std::string_view text, std::string_view flag) {
  std::string_view rest = text;
  if (const size_t scheme_end = rest.find("://"); scheme_end != std::string_view::npos) {
    const std::string_view scheme = rest.substr(0, scheme_end);
    if (scheme == "https") {
      return Bad(flag, text,
                 "https is not supported: the API is served over plain HTTP; use http://HOST:PORT "
                 "(and a TLS-terminating proxy in front of it if needed)");
    }
    if (scheme != "http") {
      return Bad(flag, text, fmt::format("unsupported scheme '{}': use http://HOST:PORT", scheme));
    }
    rest.remove_prefix(scheme_end + 3);
  }
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return Bad(flag, text, "a query or fragment is not allowed");
  }
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view prefix = slash == std::string_view::npos ? "" : rest.substr(slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  if (authority.find('@') != std::string_view::npos) {
    return Bad(flag, text, "user info is not allowed: pass the token with --token");
  }
  ServerUrl url;
  url.path_prefix = std::string(prefix);
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return Bad(flag, text, "unterminated '[' in the host");
    url.host = std::string(authority.substr(1, close - 1));
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Bad(flag, text, "expected ':PORT' after ']'");
      port = after.substr(1);
      if (port.empty()) return Bad(flag, text, "empty port");
    }
  } else {
    const size_t colon = authority.find(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) return Bad(flag, text, "empty port");
    }
  }
  if (url.host.empty()) return Bad(flag, text, "no host: use http://HOST:PORT");
  if (url.host.find_first_of(" \t/[]") != std::string::npos) {
    return Bad(flag, text, "invalid character in the host");
  }
  if (!port.empty()) {
    int value = 0;
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || ptr != port.data() + port.size() || value < 1 || value > 65535) {
      return Bad(flag, text, fmt::format("port must be a number in 1..65535, got '{}'", port));
    }
    url.port = value;
  }
  return url;
}

absl::StatusOr<std::vector<ServerUrl>> ParseServerUrls(std::string_view text,
                                                       std::string_view flag) {
  std::vector<ServerUrl> urls;
  if (text.find(',') == std::string_view::npos) {
    absl::StatusOr<ServerUrl> url = ParseServerUrl(text, flag);
    if (!url.ok()) return url.status();
    return std::vector<ServerUrl>{*std::move(url)};
  }
  for (size_t start = 0; start <= text.size();) {
    const size_t comma = std::min(text.find(',', start), text.size());
    std::string_view part = text.substr(start, comma - start);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (part.empty()) return Bad(flag, text, "an empty URL in the list");
    absl::StatusOr<ServerUrl> url = ParseServerUrl(part, flag);
    if (!url.ok()) return url.status();
    urls.push_back(*std::move(url));
    start = comma + 1;
  }
  return urls;
}

}  // namespace tessera::cli
