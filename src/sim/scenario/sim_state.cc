#include "sim/scenario/sim_state.h"

namespace tessera::sim {

std::string_view PhaseName(const std::optional<JobPhase>& phase) {
  return phase.has_value() ? JobPhaseName(*phase) : "NotSubmitted";
}

int32_t JobRun::HeldTasks() const {
  int32_t n = 0;
  for (const std::optional<Placement>& p : held) n += p.has_value();
  return n;
}

Resources JobRun::HeldResources() const {
  Resources total;
  for (size_t i = 0; i < held.size(); ++i) {
    if (!held[i].has_value()) continue;
    const TaskRequest& t = tasks[i];
    total.cpu += t.cpu;
    total.memory += t.memory;
    const auto devices = static_cast<int64_t>(held[i]->gpus.size());
    total.gpu += devices * t.gpu_milli;
    total.gpu_memory += devices * t.gpu_memory;
  }
  return total;
}

Resources JobRun::AdmittedResources() const {
  Resources r;
  if (!charged) return r;
  for (const TaskRequest& task : tasks) r += task.AsResources();
  return r;
}

}  // namespace tessera::sim
