// Gang: the all-or-nothing barrier of a job's gang.
//
// A Permit. Given the gang's progress in the current attempt (tessera/sched/permit_plugin.h):
//   reserved >= min_available               Success: the gang is complete; bind it
//   reserved + remaining >= min_available   Wait: tasks still to try could complete it
//   otherwise                               Unschedulable, code "GangIncomplete", detail
//                                           "gang incomplete": it can no longer be completed
//                                           in this attempt, so the framework releases every
//                                           task reserved for it
// A job of one task (min_available 1) is permitted as soon as its task is reserved.
//
// Arguments: none. Stateless, so thread-safe, though Permit runs on the scheduling thread only.
// Source: Volcano's gang plugin; the coscheduling plugin of kube-scheduler (PodGroup minMember).
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/permit_plugin.h"
#include "tessera/sched/registry.h"

namespace tessera {

class Gang final : public PermitPlugin {
 public:
  static constexpr std::string_view kName = "Gang";

  static constexpr Reason kIncomplete{"GangIncomplete", "gang incomplete"};

  // InvalidArgument on any argument.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  std::string_view name() const override { return kName; }
  SchedStatus Permit(const GangProgress& gang) override;
};

}  // namespace tessera
