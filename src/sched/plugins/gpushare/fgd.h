// FGD (Fragmentation Gradient Descent): places each task where the expected fragmentation of
// the target workload grows least — the FGD paper's policy.
//
// For a task p and a feasible node n, delta = F_{n'}(M) - F_n(M), where n' is n after placing p
// (fragmentation.h), and
//
//   score = trunc(100 * sigmoid(-delta / 1000))          an integer in [0, 100]
//
// The devices p would take on n define n':
//   * a sharing task tries every fitting device; the device with the highest score wins, the
//     lowest index among equal scores (the artifact compares the truncated scores, so devices
//     whose deltas truncate to the same score tie);
//   * a whole-GPU task takes the lowest-index fully free devices;
//   * a CPU-only task takes no device, but its cpu can strand the node's GPUs, so it gets a
//     delta too.
// A GPU task with no fitting device scores 0. Reserve places the task on the same devices.
//
// An empty target workload (no classes) has no fragmentation anywhere: every feasible node and
// device scores 50 and the tie-break decides (the server's window of recent tasks before the
// first submission).
//
// Arguments: none. Needs handle.target_workload (the factory fails without it); the wiring may
// replace it between cycles (TargetWorkloadPlugin). Thread-safety: Score is const and pure (the
// prepared workload is immutable while attempts run); it allocates nothing for nodes of up to 8
// devices.
// Source: Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
// Fragmentation Gradient Descent", USENIX ATC'23; hkust-adsl/kubernetes-scheduler-simulator,
// fgd_score.go.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/device_selection.h"
#include "core/target_workload.h"
#include "sched/plugins/gpushare/fragmentation.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/registry.h"
#include "tessera/sched/reserve_plugin.h"
#include "tessera/sched/score_plugin.h"
#include "tessera/sched/target_workload_plugin.h"

namespace tessera::gpushare {

// FGD's verdict for one (task, node): the score and the devices it would use (empty for a
// CPU-only task, or when no device fits).
struct FgdChoice {
  int64_t score = kMinNodeScore;
  DeviceList devices;
};

// FailedPrecondition when `workload` is null (the handle has none), InvalidArgument naming the
// class when a probability is outside [0, 1]; messages start with `plugin`.
absl::Status CheckTargetWorkload(std::string_view plugin, const TargetWorkload* workload);

// The fragmentation measure an FGD-family plugin descends, and the divisor of delta
// (milli-GPU) in its score's sigmoid: the paper's F_n(M) with scale 1000 (FGD), or a CPU-aware
// F~_n(M) that adds `stranded_weight` times the GPU stranded by CPU (FGD-CPU, fgd_cpu.h).
struct FgdMeasure {
  double stranded_weight = 0;  // 0: the paper's measure
  double scale = 1000;
};

// The score of a fragmentation change: trunc(100 * sigmoid((before - after) / scale)).
int64_t FgdScoreOf(double before, double after, double scale = 1000);

// Evaluates `task` on `node` against `workload` by `measure` (see above).
FgdChoice EvaluateFgd(const TaskRequest& task, const Node& node, const PreparedWorkload& workload,
                      const FgdMeasure& measure = {});

}  // namespace tessera::gpushare

namespace tessera {

// FGD, and the plugins that descend another measure the same way (FGD-CPU, fgd_cpu.h).
class Fgd final : public ScorePlugin, public ReservePlugin, public TargetWorkloadPlugin {
 public:
  static constexpr std::string_view kName = "FGD";

  // InvalidArgument on any argument or a class probability outside [0, 1]; FailedPrecondition
  // without handle.target_workload.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);
  // The plugin `name` that descends `measure`; errors as New, their messages naming `name`.
  static absl::StatusOr<std::unique_ptr<Plugin>> NewVariant(std::string_view name,
                                                            const gpushare::FgdMeasure& measure,
                                                            const PluginArgs& args,
                                                            const Handle& handle);

  explicit Fgd(const TargetWorkload& workload) : Fgd(kName, {}, workload) {}
  Fgd(std::string_view name, const gpushare::FgdMeasure& measure, const TargetWorkload& workload)
      : name_(name), measure_(measure), workload_(workload) {}

  std::string_view name() const override { return name_; }
  SchedStatus Score(const CycleState& state, const TaskRequest& task, const Node& node,
                    int64_t* score) const override;
  SchedStatus Reserve(CycleState& state, const TaskRequest& task, const Node& node,
                      Placement* placement) override;
  // InvalidArgument for a class probability outside [0, 1] (the previous workload stays).
  absl::Status SetTargetWorkload(const TargetWorkload& workload) override;

 private:
  std::string_view name_;  // a static string: the plugin's registered name
  gpushare::FgdMeasure measure_;
  gpushare::PreparedWorkload workload_;
};

}  // namespace tessera
