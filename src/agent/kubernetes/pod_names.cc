#include "agent/kubernetes/pod_names.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "fmt/format.h"

namespace tessera::agent::k8s {
namespace {

constexpr size_t kHashSuffix = 13;  // "-" and 12 hex digits

uint64_t Fnv1a(std::string_view text) {
  uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

bool IsAlnum(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)); }

// `cleaned` as it is when it equals `original` and fits, else its fitting prefix with the
// hash of `original`. `cleaned` holds only valid characters.
std::string WithHashIfChanged(std::string_view original, std::string cleaned,
                              bool (*valid)(std::string_view)) {
  if (cleaned == original && valid(cleaned)) return cleaned;
  // Drop leading characters that may not start a name, then cut to leave room for the hash.
  size_t start = 0;
  while (start < cleaned.size() && !IsAlnum(cleaned[start])) ++start;
  std::string_view prefix = std::string_view(cleaned).substr(start, kMaxNameLength - kHashSuffix);
  if (prefix.empty()) prefix = "t";
  return fmt::format("{}-{:012x}", prefix, Fnv1a(original) & 0xffffffffffffULL);
}

// Lower-cased, with every character a DNS label may not hold ('.', '_', ...) turned into '-'.
std::string DnsCharacters(std::string_view text) {
  std::string cleaned;
  cleaned.reserve(text.size());
  for (char c : text) {
    cleaned += IsAlnum(c) ? absl::ascii_tolower(static_cast<unsigned char>(c)) : '-';
  }
  return cleaned;
}

bool IsLabelValue(std::string_view value) {
  if (value.empty()) return true;
  if (value.size() > kMaxNameLength || !IsAlnum(value.front()) || !IsAlnum(value.back())) {
    return false;
  }
  for (char c : value) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

}  // namespace

bool IsDnsLabel(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  if (!IsAlnum(name.front()) || !IsAlnum(name.back())) return false;
  for (char c : name) {
    if (!(absl::ascii_islower(static_cast<unsigned char>(c)) ||
          absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return true;
}

std::string PodNameForLaunch(std::string_view launch_id) {
  return WithHashIfChanged(launch_id, DnsCharacters(launch_id), IsDnsLabel);
}

std::string ServiceNameForJob(std::string_view job_id) {
  std::string cleaned = DnsCharacters(job_id);
  if (cleaned.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(cleaned.front()))) {
    cleaned.insert(0, "j-");
  }
  return WithHashIfChanged(job_id, std::move(cleaned), IsDnsLabel);
}

std::string HostnameForRank(std::string_view job_id, int32_t rank) {
  const std::string suffix = fmt::format("-{}", rank);
  std::string base = ServiceNameForJob(job_id);
  base.resize(std::min(base.size(), kMaxNameLength - suffix.size()));
  while (!base.empty() && base.back() == '-') base.pop_back();
  return base + suffix;
}

std::string LabelValue(std::string_view text) {
  std::string cleaned;
  cleaned.reserve(text.size());
  for (char c : text) {
    cleaned += (IsAlnum(c) || c == '-' || c == '_' || c == '.') ? c : '-';
  }
  return WithHashIfChanged(text, std::move(cleaned), IsLabelValue);
}

}  // namespace tessera::agent::k8s
