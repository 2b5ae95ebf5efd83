// PrioritySort: the default pending-job order.
//
// A QueueSort. A job is tried before another when its JobSpec priority is higher; among equal
// priorities, when it was submitted earlier; among equal submit times, when its submission
// sequence is lower. Sequences are unique, so this is a strict total order and deterministic.
// A null spec counts as priority 0.
//
// Arguments: none. Thread-safe: Less is const and reads only its inputs.
// Source: kube-scheduler's PrioritySort plugin; Slurm's priority order with FIFO ties.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/queue_sort_plugin.h"
#include "tessera/sched/registry.h"

namespace tessera {

class PrioritySort final : public QueueSortPlugin {
 public:
  static constexpr std::string_view kName = "PrioritySort";

  // InvalidArgument on any argument.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  std::string_view name() const override { return kName; }
  bool Less(const QueuedJobInfo& a, const QueuedJobInfo& b) const override;
};

}  // namespace tessera
