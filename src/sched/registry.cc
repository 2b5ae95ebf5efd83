#include "tessera/sched/registry.h"

#include <utility>

#include "fmt/format.h"

namespace tessera {

absl::Status Registry::Register(std::string_view name, PluginFactory factory) {
  auto [it, inserted] = factories_.emplace(std::string(name), std::move(factory));
  if (!inserted) {
    return absl::AlreadyExistsError(fmt::format("plugin \"{}\" is already registered", name));
  }
  return absl::OkStatus();
}

absl::Status Registry::Merge(const Registry& other) {
  for (const auto& [name, factory] : other.factories_) {
    absl::Status status = Register(name, factory);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

const PluginFactory* Registry::Find(std::string_view name) const {
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::Names() const {
  std::vector<std::string> names;
  names.reserve(factories_.size());
  for (const auto& [name, factory] : factories_) names.push_back(name);
  return names;
}

}  // namespace tessera
