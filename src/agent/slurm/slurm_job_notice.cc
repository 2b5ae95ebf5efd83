#include "agent/slurm/slurm_job_notice.h"

#include <charconv>
#include <string>

#include "absl/strings/escaping.h"
#include "fmt/format.h"

namespace tessera::agent {

absl::StatusOr<int64_t> ParseJobEndedNotice(std::string_view body) {
  while (!body.empty()) {
    const size_t amp = body.find('&');
    std::string_view field = body.substr(0, amp);
    body = amp == std::string_view::npos ? std::string_view() : body.substr(amp + 1);
    if (!field.starts_with("job_id=")) continue;
    std::string_view value = field.substr(7);
    while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.remove_suffix(1);
    int64_t job_id = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), job_id);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size() || job_id <= 0) {
      const std::string shown(value.substr(0, 32));
      return absl::InvalidArgumentError(
          fmt::format("job_id: must be a positive integer, not \"{}\"", absl::CHexEscape(shown)));
    }
    return job_id;
  }
  return absl::InvalidArgumentError("job_id: missing");
}

}  // namespace tessera::agent
