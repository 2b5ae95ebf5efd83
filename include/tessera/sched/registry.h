// Registry: the explicit list of plugin factories a profile can name.
//
// No static-initialisation magic: BuiltinPlugins() (sched/plugins/builtin.h) lists every in-tree
// plugin in one place; tests add fakes with Register(). A factory gets the plugin's arguments
// from the profile and the Handle, and fails with a clear status on bad configuration, so a
// misconfigured profile fails at start-up. Not thread-safe; built once at start-up.
// Source: kube-scheduler's runtime.Registry and Envoy's factory registry.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/plugin.h"

namespace tessera {

// A plugin's arguments from the profile: flat key -> value text ("resources: cpu,gpu").
using PluginArgs = std::map<std::string, std::string, std::less<>>;

using PluginFactory =
    std::function<absl::StatusOr<std::unique_ptr<Plugin>>(const PluginArgs& args,
                                                           const Handle& handle)>;

class Registry {
 public:
  // AlreadyExists when `name` is registered.
  absl::Status Register(std::string_view name, PluginFactory factory);
  // Adds every factory of `other`; AlreadyExists on the first duplicate name.
  absl::Status Merge(const Registry& other);
  // nullptr when unknown.
  const PluginFactory* Find(std::string_view name) const;
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, PluginFactory, std::less<>> factories_;
};

}  // namespace tessera
