#include "sched/plugins/basic/gang.h"

#include <concepts>

#include "sched/plugins/basic/plugin_args.h"

namespace tessera {

static_assert(std::derived_from<Gang, PermitPlugin>);

absl::StatusOr<std::unique_ptr<Plugin>> Gang::New(const PluginArgs& args, const Handle& handle) {
  if (absl::Status s = CheckKnownArgs(kName, args, {}); !s.ok()) return s;
  return std::make_unique<Gang>();
}

SchedStatus Gang::Permit(const GangProgress& gang) {
  if (gang.reserved >= gang.min_available) return {};
  // int64_t: the sum of two int32_t counts cannot overflow.
  if (int64_t{gang.reserved} + gang.remaining >= gang.min_available) return SchedStatus::Wait();
  return SchedStatus::Unschedulable(kIncomplete);
}

}  // namespace tessera
