#include "agent/local/exit_file.h"

#include <charconv>
#include <string>

namespace tessera::agent {
namespace {

constexpr std::string_view kExit = "exit ";
constexpr std::string_view kSignal = "signal ";
constexpr std::string_view kExecError = "exec-error ";
constexpr std::string_view kNotStarted = "not-started\n";

}  // namespace

std::string FormatExitFile(const ExitRecord& record) {
  if (record.kind == ExitRecord::Kind::kNotStarted) return std::string(kNotStarted);
  std::string_view prefix = kExit;
  if (record.kind == ExitRecord::Kind::kSignal) prefix = kSignal;
  if (record.kind == ExitRecord::Kind::kExecError) prefix = kExecError;
  return std::string(prefix) + std::to_string(record.value) + "\n";
}

std::optional<ExitRecord> ParseExitFile(std::string_view text) {
  if (text == kNotStarted) return ExitRecord{.kind = ExitRecord::Kind::kNotStarted, .value = 0};
  if (!text.ends_with('\n')) return std::nullopt;
  text.remove_suffix(1);
  ExitRecord record;
  if (text.starts_with(kExit)) {
    text.remove_prefix(kExit.size());
  } else if (text.starts_with(kSignal)) {
    record.kind = ExitRecord::Kind::kSignal;
    text.remove_prefix(kSignal.size());
  } else if (text.starts_with(kExecError)) {
    record.kind = ExitRecord::Kind::kExecError;
    text.remove_prefix(kExecError.size());
  } else {
    return std::nullopt;
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), record.value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || record.value < 0) {
    return std::nullopt;
  }
  return record;
}

}  // namespace tessera::agent
