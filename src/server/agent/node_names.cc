#include "server/agent/node_names.h"

#include "fmt/format.h"

namespace tessera::server {

absl::Status NodeNames::Claim(std::string_view node, std::string_view cluster) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, added] = owner_.try_emplace(std::string(node), std::string(cluster));
  if (!added && it->second != cluster) {
    return absl::AlreadyExistsError(
        fmt::format("node name \"{}\" belongs to cluster \"{}\"", node, it->second));
  }
  return absl::OkStatus();
}

void NodeNames::Release(std::string_view node, std::string_view cluster) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = owner_.find(node);
  if (it != owner_.end() && it->second == cluster) owner_.erase(it);
}

}  // namespace tessera::server
