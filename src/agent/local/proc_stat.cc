#include "agent/local/proc_stat.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/strip.h"
#include "fmt/format.h"

namespace tessera::agent {
namespace {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    const int err = errno;
    if (err == ENOENT || err == ESRCH) return absl::NotFoundError(fmt::format("{}: missing", path));
    return absl::UnavailableError(fmt::format("{}: {}", path, std::strerror(err)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Fields separated by blanks (spaces, the trailing newline).
std::vector<std::string_view> SplitFields(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n')) ++i;
    const size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\n') ++i;
    if (i > start) fields.push_back(text.substr(start, i - start));
  }
  return fields;
}

template <typename T>
bool ParseNumber(std::string_view text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

absl::StatusOr<ProcStat> ParseProcStat(std::string_view text) {
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return absl::DataLossError("stat: no ')' after the name");
  const std::vector<std::string_view> fields = SplitFields(text.substr(close + 1));
  // fields[0] is field 3 (state); field n is fields[n - 3].
  constexpr size_t kStartTimeIndex = 22 - 3;
  if (fields.size() <= kStartTimeIndex || fields[0].size() != 1) {
    return absl::DataLossError("stat: too few fields");
  }
  ProcStat stat;
  stat.state = fields[0][0];
  if (!ParseNumber(fields[1], stat.ppid) || !ParseNumber(fields[2], stat.pgrp) ||
      !ParseNumber(fields[3], stat.session) ||
      !ParseNumber(fields[kStartTimeIndex], stat.start_ticks)) {
    return absl::DataLossError("stat: a numeric field does not parse");
  }
  return stat;
}

absl::StatusOr<ProcStat> ReadProcStat(pid_t pid, std::string_view proc_root) {
  absl::StatusOr<std::string> text =
      ReadWholeFile(fmt::format("{}/{}/stat", std::string(proc_root), pid));
  if (!text.ok()) return text.status();
  return ParseProcStat(*text);
}

absl::StatusOr<std::string> ReadBootId(std::string_view proc_root) {
  absl::StatusOr<std::string> text =
      ReadWholeFile(fmt::format("{}/sys/kernel/random/boot_id", std::string(proc_root)));
  if (!text.ok()) return text.status();
  return std::string(absl::StripAsciiWhitespace(*text));
}

}  // namespace tessera::agent
