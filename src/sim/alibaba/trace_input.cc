#include "sim/alibaba/trace_input.h"

#include <filesystem>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "tessera/common/status_macros.h"

namespace tessera::sim::alibaba {

std::string WorkloadNameFromPath(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

std::unique_ptr<TraceInput> TraceInput::FromLists(NodeList nodes, PodList pods,
                                                  std::string workload_name,
                                                  const TargetWorkloadOptions& options) {
  auto input = std::make_unique<TraceInput>();
  input->workload_name = std::move(workload_name);
  input->nodes = std::move(nodes);
  input->pods = std::move(pods);
  input->target = BuildTargetWorkload(input->pods.tasks, options, &input->target_stats);
  input->prepared = std::make_unique<gpushare::PreparedWorkload>(input->target);
  return input;
}

absl::StatusOr<std::unique_ptr<TraceInput>> TraceInput::Load(const std::string& nodes_path,
                                                             const std::string& pods_path,
                                                             const TargetWorkloadOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(NodeList nodes, LoadNodeList(nodes_path));
  if (nodes.total_gpu_milli == 0) {
    return absl::InvalidArgumentError(fmt::format("{}: no node has a GPU", nodes_path));
  }
  TESSERA_ASSIGN_OR_RETURN(PodList pods, LoadPodList(pods_path, nodes.models));
  auto input =
      FromLists(std::move(nodes), std::move(pods), WorkloadNameFromPath(pods_path), options);
  input->nodes_path = nodes_path;
  input->pods_path = pods_path;
  return input;
}

}  // namespace tessera::sim::alibaba
