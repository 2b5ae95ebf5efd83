#include "sched/plugins/basic/priority_sort.h"

#include <concepts>
#include <tuple>

#include "sched/plugins/basic/plugin_args.h"

namespace tessera {

static_assert(std::derived_from<PrioritySort, QueueSortPlugin>);

namespace {

int32_t PriorityOf(const QueuedJobInfo& info) {
  return info.spec == nullptr ? 0 : info.spec->priority;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> PrioritySort::New(const PluginArgs& args,
                                                          const Handle& handle) {
  if (absl::Status s = CheckKnownArgs(kName, args, {}); !s.ok()) return s;
  return std::make_unique<PrioritySort>();
}

bool PrioritySort::Less(const QueuedJobInfo& a, const QueuedJobInfo& b) const {
  // Priority descending (b's priority on the left), then submit time and sequence ascending.
  return std::tuple(PriorityOf(b), a.submit_time, a.sequence) <
         std::tuple(PriorityOf(a), b.submit_time, b.sequence);
}

}  // namespace tessera
