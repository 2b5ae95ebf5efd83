// The events section of a scenario file: node, GPU, taint and job events, and the checks that
// the node, GPU or job an event names exists (the Parser of scenario_parser_impl.h).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/scenario/scenario_parser_impl.h"
#include "tessera/common/status_macros.h"

namespace tessera::sim::scenario_parsing {

absl::Status Parser::ParseEvent(const YAML::Node& n, const std::string& path) {
  ScenarioEvent event;
  event.line = YamlReader::Line(n);
  bool has_at = false;
  bool has_action = false;
  bool has_gpu = false;
  bool has_taint = false;
  int gpu_line = 0;
  TESSERA_RETURN_IF_ERROR(r_.ForEach(
      n, path, {"at", "node", "job", "gpu", "action", "taint"},
      [&](std::string_view key, const YAML::Node& v, const std::string& field) -> absl::Status {
        if (key == "at") {
          has_at = true;
          TESSERA_ASSIGN_OR_RETURN(event.at, r_.Dur(v, field));
        } else if (key == "node") {
          TESSERA_ASSIGN_OR_RETURN(event.node, r_.Name(v, field));
          if (!index_.nodes.contains(event.node)) {
            return r_.Error(v, field, Cat("node '", event.node, "' does not exist"));
          }
        } else if (key == "job") {
          TESSERA_ASSIGN_OR_RETURN(event.job, r_.Name(v, field));
          if (!index_.jobs.contains(event.job)) {
            return r_.Error(v, field, Cat("job '", event.job, "' does not exist"));
          }
        } else if (key == "gpu") {
          has_gpu = true;
          gpu_line = YamlReader::Line(v);
          TESSERA_ASSIGN_OR_RETURN(int64_t gpu, r_.Int(v, field, 0, 1024));
          event.gpu = static_cast<int32_t>(gpu);
        } else if (key == "action") {
          has_action = true;
          TESSERA_ASSIGN_OR_RETURN(
              std::string action,
              r_.Choice(v, field,
                        {"down", "up", "cordon", "uncordon", "drain", "remove", "gpu_unhealthy",
                         "gpu_healthy", "taint", "untaint", "cancel"}));
          static const std::map<std::string, EventAction, std::less<>> kActions = {
              {"down", EventAction::kDown},
              {"up", EventAction::kUp},
              {"cordon", EventAction::kCordon},
              {"uncordon", EventAction::kUncordon},
              {"drain", EventAction::kDrain},
              {"remove", EventAction::kRemove},
              {"gpu_unhealthy", EventAction::kGpuUnhealthy},
              {"gpu_healthy", EventAction::kGpuHealthy},
              {"taint", EventAction::kTaint},
              {"untaint", EventAction::kUntaint},
              {"cancel", EventAction::kCancel}};
          event.action = kActions.find(action)->second;
        } else {
          has_taint = true;
          TESSERA_ASSIGN_OR_RETURN(event.taint, ParseTaint(v, field, false, &event.has_effect));
        }
        return absl::OkStatus();
      }));
  if (!has_at) return r_.Error(n, Field(path, "at"), "required");
  if (!has_action) return r_.Error(n, Field(path, "action"), "required");
  TESSERA_RETURN_IF_ERROR(CheckEventTarget(event, n, path, has_gpu, has_taint));
  if (has_gpu && event.gpu >= index_.nodes.at(event.node)) {
    return r_.ErrorAtLine(
        gpu_line, Field(path, "gpu"),
        Cat("node '", event.node, "' has ", index_.nodes.at(event.node), " GPUs"));
  }
  scenario_.events.push_back(std::move(event));
  return absl::OkStatus();
}

absl::Status Parser::CheckEventTarget(const ScenarioEvent& event, const YAML::Node& n,
                                      const std::string& path, bool has_gpu, bool has_taint) {
  const bool cancel = event.action == EventAction::kCancel;
  const bool gpu_action =
      event.action == EventAction::kGpuUnhealthy || event.action == EventAction::kGpuHealthy;
  const bool taint_action =
      event.action == EventAction::kTaint || event.action == EventAction::kUntaint;
  const std::string action(ToString(event.action));
  if (cancel && event.job.empty()) return r_.Error(n, Field(path, "job"), "required by cancel");
  if (cancel && !event.node.empty()) return r_.Error(n, Field(path, "node"), "not used by cancel");
  if (!cancel && event.node.empty()) {
    return r_.Error(n, Field(path, "node"), Cat("required by ", action));
  }
  if (!cancel && !event.job.empty()) {
    return r_.Error(n, Field(path, "job"), Cat("not used by ", action));
  }
  if (gpu_action != has_gpu) {
    return r_.Error(n, Field(path, "gpu"),
                    gpu_action ? Cat("required by ", action) : Cat("not used by ", action));
  }
  if (taint_action != has_taint) {
    return r_.Error(n, Field(path, "taint"),
                    taint_action ? Cat("required by ", action) : Cat("not used by ", action));
  }
  if (event.action == EventAction::kTaint && !event.has_effect) {
    return r_.Error(n, Field(Field(path, "taint"), "effect"), "required by taint");
  }
  return absl::OkStatus();
}

}  // namespace tessera::sim::scenario_parsing
