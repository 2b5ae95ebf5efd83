// Feeds arbitrary text to the Alibaba GPU trace parsers (sim/alibaba: node list, pod list in
// both column forms, the FGD artifact's result CSVs) and checks their invariants: no crash or
// undefined behaviour; an error is InvalidArgument that starts with the source name and has a
// bounded message; a parsed node has non-negative quantities and 1000 milli-GPU per device of
// its model; a parsed task has a consistent GPU request whose models are all known.
//
// The first byte picks the parser ('n' nodes, 'p' pods, anything else the result CSV); the rest
// is the file's text.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "fuzz_check.h"
#include "sim/alibaba/alibaba_trace.h"
#include "sim/alibaba/expected_results.h"

namespace tessera::sim::alibaba {
namespace {

using ::tessera::fuzz::Require;

constexpr std::string_view kSource = "fuzz.csv";
constexpr size_t kMaxMessage = 1000;
const std::vector<std::string> kModels = {"A10", "G2", "G3", "P100", "T4", "V100M16", "V100M32"};

template <typename T>
void CheckError(const absl::StatusOr<T>& result, std::string_view input) {
  if (result.ok()) return;
  const absl::Status& s = result.status();
  const std::string message(s.message());
  Require(s.code() == absl::StatusCode::kInvalidArgument, "error is not InvalidArgument", input);
  Require(message.rfind(std::string(kSource), 0) == 0, "error does not start with the source",
          input);
  Require(message.size() <= kMaxMessage, "error message is unbounded", input);
}

void CheckNodes(const NodeList& list, std::string_view input) {
  int64_t gpus = 0;
  for (const Node& n : list.nodes) {
    Require(!n.name.empty(), "node without a name", input);
    Require(n.capacity.cpu >= 0 && n.capacity.memory >= 0, "negative node capacity", input);
    Require(n.capacity.gpu == kMilliGpuPerDevice * static_cast<int64_t>(n.gpus.size()),
            "node gpu capacity is not 1000 per device", input);
    Require(n.allocatable == n.capacity, "allocatable differs from capacity", input);
    for (const GpuDevice& d : n.gpus) {
      Require(!d.model.empty() && d.FreeMilli() == kMilliGpuPerDevice, "bad device", input);
    }
    gpus += static_cast<int64_t>(n.gpus.size());
  }
  Require(list.total_gpu_milli == gpus * kMilliGpuPerDevice, "total gpu mismatch", input);
}

void CheckPods(const PodList& list, std::string_view input) {
  for (const TraceTask& t : list.tasks) {
    const TaskRequest& r = t.request;
    Require(!t.name.empty() && t.line >= 2, "task without a name or line", input);
    Require(r.cpu >= 0 && r.memory >= 0, "negative task request", input);
    Require(r.gpu_milli >= 0 && r.gpu_milli <= kMilliGpuPerDevice, "gpu_milli out of range", input);
    Require((r.gpu_count == 0) == (r.gpu_milli == 0), "inconsistent CPU-only task", input);
    Require(r.gpu_count <= 1 || r.gpu_milli == kMilliGpuPerDevice, "shared multi-GPU task", input);
    for (const std::string& m : r.gpu_models) {
      Require(std::find(kModels.begin(), kModels.end(), m) != kModels.end(), "unknown model",
              input);
    }
    if (t.creation_time && t.deletion_time) {
      Require(*t.deletion_time >= *t.creation_time, "deleted before created", input);
    }
  }
}

}  // namespace
}  // namespace tessera::sim::alibaba

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::sim::alibaba;  // NOLINT(google-build-using-namespace): fuzz entry
  if (size == 0) return 0;
  const char selector = static_cast<char>(data[0]);
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (selector == 'n') {
    auto nodes = ParseNodeList(text, kSource);
    CheckError(nodes, text);
    if (nodes.ok()) CheckNodes(*nodes, text);
  } else if (selector == 'p') {
    auto pods = ParsePodList(text, kSource, kModels);
    CheckError(pods, text);
    if (pods.ok()) CheckPods(*pods, text);
  } else {
    auto runs = ParseExpectedCsv(text, kSource);
    CheckError(runs, text);
  }
  return 0;
}
