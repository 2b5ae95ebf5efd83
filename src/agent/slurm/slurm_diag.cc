#include "agent/slurm/slurm_diag.h"

#include <optional>
#include <string>

#include "agent/slurm/slurm_json.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace tessera::agent {
namespace {

// As the job times: epoch seconds beyond this (year 2286) would overflow milliseconds.
constexpr int64_t kMaxEpochSeconds = int64_t{1} << 33;

}  // namespace

absl::StatusOr<int64_t> ParseSlurmClock(std::string_view text) {
  using nlohmann::json;
  const json reply = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded() || !reply.is_object()) {
    return absl::InvalidArgumentError("slurm diag: the reply is not a JSON object");
  }
  auto statistics = reply.find("statistics");
  if (statistics == reply.end() || !statistics->is_object()) {
    const std::string errors = slurm_json::ErrorText(reply);
    return absl::InvalidArgumentError(fmt::format("slurm diag: the reply has no \"statistics\"{}",
                                                  errors.empty() ? "" : ": " + errors));
  }
  absl::StatusOr<std::optional<int64_t>> now = slurm_json::NonNegative(*statistics, "req_time");
  if (!now.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("slurm diag: statistics.{}", std::string(now.status().message())));
  }
  if (!now->has_value() || **now == 0) {
    return absl::InvalidArgumentError("slurm diag: statistics.req_time: missing");
  }
  if (**now > kMaxEpochSeconds) {
    return absl::InvalidArgumentError(
        fmt::format("slurm diag: statistics.req_time: {} is out of range", **now));
  }
  return **now;
}

}  // namespace tessera::agent
