#include "agent/slurm/slurm_jobcomp_line.h"

#include <charconv>
#include <chrono>
#include <ctime>
#include <optional>
#include <string>

#include "absl/strings/escaping.h"
#include "fmt/format.h"

namespace tessera::agent {
namespace {

// The value of " KEY=" up to the next space; nullopt when the line has no such field.
std::optional<std::string_view> Field(std::string_view line, std::string_view key) {
  const std::string needle = fmt::format(" {}=", key);
  const size_t at = line.find(needle);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view value = line.substr(at + needle.size());
  return value.substr(0, value.find(' '));
}

std::optional<int64_t> Integer(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "status:signal" as a raw wait status.
std::optional<int64_t> ExitCode(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::optional<int64_t> status = Integer(text.substr(0, colon));
  const std::optional<int64_t> signal = Integer(text.substr(colon + 1));
  if (!status || !signal || *status < 0 || *status > 255 || *signal < 0 || *signal > 127) {
    return std::nullopt;
  }
  return *signal != 0 ? *signal : *status << 8;
}

// "2026-12-07T19:22:13", local time.
std::optional<TimePoint> LocalTime(std::string_view text) {
  const std::string value(text);
  std::tm tm{};
  const char* end = strptime(value.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  tm.tm_isdst = -1;
  const std::time_t seconds = std::mktime(&tm);
  if (seconds <= 0) return std::nullopt;
  return TimePoint(std::chrono::seconds(seconds));
}

}  // namespace

absl::StatusOr<SlurmJob> ParseJobCompLine(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  constexpr std::string_view kKey = "JobId=";
  if (!line.starts_with(kKey)) return absl::InvalidArgumentError("JobId: missing");
  std::string_view id = line.substr(kKey.size());
  id = id.substr(0, id.find(' '));
  const std::optional<int64_t> job_id = Integer(id);
  if (!job_id.has_value() || *job_id <= 0) {
    const std::string shown(id.substr(0, 32));
    return absl::InvalidArgumentError(
        fmt::format("JobId: must be a positive integer, not \"{}\"", absl::CHexEscape(shown)));
  }
  SlurmJob job{.id = *job_id};
  if (auto state = Field(line, "JobState")) job.state = std::string(*state);
  if (auto code = Field(line, "ExitCode")) job.exit_code = ExitCode(*code);
  if (auto start = Field(line, "StartTime")) job.start_time = LocalTime(*start);
  if (auto end = Field(line, "EndTime")) job.end_time = LocalTime(*end);
  return job;
}

bool TellsWholeEnd(const SlurmJob& logged) {
  return (logged.state == "COMPLETED" || logged.state == "CANCELLED") &&
         logged.exit_code.has_value() && logged.start_time.has_value();
}

}  // namespace tessera::agent
