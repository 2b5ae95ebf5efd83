#include "agent/slurm/slurm_jobcomp_line.h"

#include <charconv>
#include <string>

#include "absl/strings/escaping.h"
#include "fmt/format.h"

namespace tessera::agent {

absl::StatusOr<int64_t> ParseJobCompLine(std::string_view line) {
  constexpr std::string_view kKey = "JobId=";
  if (!line.starts_with(kKey)) return absl::InvalidArgumentError("JobId: missing");
  std::string_view value = line.substr(kKey.size());
  value = value.substr(0, value.find(' '));
  int64_t job_id = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), job_id);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || job_id <= 0) {
    const std::string shown(value.substr(0, 32));
    return absl::InvalidArgumentError(
        fmt::format("JobId: must be a positive integer, not \"{}\"", absl::CHexEscape(shown)));
  }
  return job_id;
}

}  // namespace tessera::agent
