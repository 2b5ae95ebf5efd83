#include "sched/plugins/basic/plugin_args.h"

#include <algorithm>

#include "fmt/format.h"

namespace tessera {

absl::Status CheckKnownArgs(std::string_view plugin, const PluginArgs& args,
                            std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : args) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string accepted =
        known.size() == 0 ? "none" : fmt::format("{}", fmt::join(known, ", "));
    return absl::InvalidArgumentError(
        fmt::format("{}: unknown argument \"{}\" (accepted: {})", plugin, key, accepted));
  }
  return absl::OkStatus();
}

}  // namespace tessera
