// Small inline traces for the simulator's tests. Not a public API.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "sim/alibaba/trace_input.h"

namespace tessera::sim::alibaba::testing {

// Four nodes: two with 2 T4s, one with 8 G2s, one CPU-only node.
inline constexpr std::string_view kTestNodes =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "node-a,32000,65536,2,T4\n"
    "node-b,32000,65536,2,T4\n"
    "node-c,96000,393216,8,G2\n"
    "node-d,64000,131072,0,\n";

inline std::unique_ptr<TraceInput> MakeInput(std::string_view nodes, std::string_view pods,
                                             std::string name = "test") {
  absl::StatusOr<NodeList> n = ParseNodeList(nodes, "nodes.csv");
  EXPECT_TRUE(n.ok()) << n.status();
  absl::StatusOr<PodList> p = ParsePodList(pods, "pods.csv", n->models);
  EXPECT_TRUE(p.ok()) << p.status();
  auto input = TraceInput::FromLists(std::move(*n), std::move(*p), std::move(name));
  input->pods_path = "pods.csv";
  return input;
}

inline constexpr std::string_view kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

}  // namespace tessera::sim::alibaba::testing
