// Plugin argument checks shared by the basic plugins' factories.
//
// A profile hands each plugin a flat key -> value map (tessera/sched/registry.h). Factories call
// CheckKnownArgs first so a misspelt or unsupported key fails at start-up with a message that
// names the plugin, the key and the keys it accepts, instead of being silently ignored.
// Pure functions; thread-safe.
#pragma once

#include <initializer_list>
#include <string_view>

#include "absl/status/status.h"
#include "tessera/sched/registry.h"

namespace tessera {

// InvalidArgument when `args` holds a key outside `known`, e.g.
// `NodeAffinity: unknown argument "foo" (accepted: none)`.
absl::Status CheckKnownArgs(std::string_view plugin, const PluginArgs& args,
                            std::initializer_list<std::string_view> known);

}  // namespace tessera
