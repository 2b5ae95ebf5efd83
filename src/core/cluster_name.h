// Cluster names, and the label that carries them. Every node of a cluster carries the label
// tessera.io/cluster with the cluster's name, so a job's clusterSelector on it pins the job to
// that cluster. A name is [a-z0-9][a-z0-9._-]{0,62}: a label value, a DNS-safe word, and a path
// component of the data directory, so it is checked wherever a name enters (the server's config
// file, an agent's registration, the CLI's --cluster). Pure; thread-safe.
#pragma once

#include <string_view>

namespace tessera {

inline constexpr std::string_view kClusterLabel = "tessera.io/cluster";

inline bool IsValidClusterName(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  const auto lower_or_digit = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  if (!lower_or_digit(name[0])) return false;
  for (char c : name) {
    if (!lower_or_digit(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

}  // namespace tessera
