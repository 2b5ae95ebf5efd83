#include "cli/wall_time.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/duration.h"
#include "fmt/format.h"

namespace tessera::cli {
namespace {

constexpr std::string_view kForms =
    "use minutes (90), MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, a duration (1h30m) or "
    "'unlimited'";
// 100 years: more is a typo, and keeps every sum far from overflow.
constexpr int64_t kMaxSeconds = int64_t{100} * 365 * 24 * 3600;

absl::Status Bad(std::string_view flag, std::string_view text, std::string_view problem) {
  return absl::InvalidArgumentError(fmt::format("{}: '{}': {}", flag, text.substr(0, 40), problem));
}

bool ParseNumber(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 12) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size() && *out >= 0;
}

std::vector<std::string_view> SplitColons(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t colon = s.find(':', start);
    parts.push_back(s.substr(start, colon - start));
    if (colon == std::string_view::npos) return parts;
    start = colon + 1;
  }
}

// Seconds of a Slurm form, or an error.
absl::StatusOr<int64_t> SlurmSeconds(std::string_view text, std::string_view flag) {
  int64_t days = 0;
  std::string_view clock = text;
  const size_t dash = text.find('-');
  const bool has_days = dash != std::string_view::npos;
  if (has_days) {
    if (!ParseNumber(text.substr(0, dash), &days)) return Bad(flag, text, kForms);
    clock = text.substr(dash + 1);
  }
  const std::vector<std::string_view> parts = SplitColons(clock);
  if (parts.size() > 3) return Bad(flag, text, kForms);
  std::vector<int64_t> values;
  for (std::string_view p : parts) {
    int64_t v = 0;
    if (!ParseNumber(p, &v)) return Bad(flag, text, kForms);
    values.push_back(v);
  }
  // Units of each position: with days "H[:M[:S]]", without "M", "M:S", "H:M:S".
  std::vector<int64_t> units = {3600, 60, 1};
  if (!has_days && values.size() == 1) units = {60};
  if (!has_days && values.size() == 2) units = {60, 1};
  int64_t seconds = days * 86400;
  for (size_t i = 0; i < values.size(); ++i) {
    const bool leading = i == 0 && !has_days;
    if (!leading && values[i] > (i == 0 ? 23 : 59)) {
      return Bad(flag, text,
                 fmt::format("{} must be {}", i == 0 ? "hours after 'D-'" : "minutes and seconds",
                             i == 0 ? "0..23" : "0..59"));
    }
    if (values[i] > kMaxSeconds / units[i]) return Bad(flag, text, "too long");
    seconds += values[i] * units[i];
  }
  return seconds;
}

}  // namespace

absl::StatusOr<std::optional<Duration>> ParseWallTime(std::string_view text,
                                                      std::string_view flag) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "unlimited" || lower == "infinite") return std::optional<Duration>();
  if (text.empty()) return Bad(flag, text, kForms);
  const bool go_style =
      std::any_of(text.begin(), text.end(), [](unsigned char c) { return std::isalpha(c); });
  if (go_style) {
    absl::StatusOr<Duration> d = ParseDuration(text, flag);
    if (!d.ok()) return Bad(flag, text, kForms);
    if (d->count() <= 0) return Bad(flag, text, "must be > 0");
    return std::optional<Duration>(*d);
  }
  absl::StatusOr<int64_t> seconds = SlurmSeconds(text, flag);
  if (!seconds.ok()) return seconds.status();
  if (*seconds <= 0) return Bad(flag, text, "must be > 0");
  if (*seconds > kMaxSeconds) return Bad(flag, text, "too long");
  return std::optional<Duration>(std::chrono::seconds(*seconds));
}

}  // namespace tessera::cli
