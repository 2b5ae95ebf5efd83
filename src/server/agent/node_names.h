// NodeNames: which cluster owns each node name. Node names are unique across the control
// plane's clusters (the scheduler knows nodes by name), so an agent that reports a name another
// cluster owns is refused.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace tessera::server {

class NodeNames {
 public:
  // Records that `cluster` owns `node`. AlreadyExists naming the owner when another cluster
  // owns it; OK when `cluster` already does.
  absl::Status Claim(std::string_view node, std::string_view cluster);
  // Gives `node` up if `cluster` owns it.
  void Release(std::string_view node, std::string_view cluster);

 private:
  std::mutex mu_;
  std::map<std::string, std::string, std::less<>> owner_;
};

}  // namespace tessera::server
