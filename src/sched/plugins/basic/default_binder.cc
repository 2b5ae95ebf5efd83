#include "sched/plugins/basic/default_binder.h"

#include <concepts>

#include "fmt/format.h"
#include "sched/plugins/basic/plugin_args.h"

namespace tessera {

static_assert(std::derived_from<DefaultBinder, BindPlugin>);

absl::StatusOr<std::unique_ptr<Plugin>> DefaultBinder::New(const PluginArgs& args,
                                                           const Handle& handle) {
  if (absl::Status s = CheckKnownArgs(kName, args, {}); !s.ok()) return s;
  if (handle.sink == nullptr) {
    return absl::FailedPreconditionError(
        fmt::format("{}: the handle has no decision sink to bind through", kName));
  }
  return std::make_unique<DefaultBinder>(handle.sink);
}

SchedStatus DefaultBinder::Bind(std::string_view job, int32_t task_index,
                                const Placement& placement) {
  const absl::Status status = sink_->Bind(job, task_index, placement);
  if (status.ok()) return {};
  return SchedStatus::Error(fmt::format("binding task {} of job {} to node {}: {}", task_index, job,
                                        placement.node, status.ToString()));
}

}  // namespace tessera
