// Feeds arbitrary text to the parsers of slurmrestd's replies (agent/slurm), in the shapes of
// every REST API version v0.0.38 to v0.0.43 (flagged numbers, state lists, verbose exit codes):
// the node list, the job list with the outcome of every job, the submit reply, gres strings and
// the diag reply's clock; and a line of Slurm's job-completion log (jobcomp/filetxt). The first
// byte picks the parser ('N' nodes, 'J' jobs, 'S' submit reply, 'G' gres, 'D' diag, 'E' a
// job-completion line; any other byte by its value modulo 6), the rest is the input.
// Checks: no crash or undefined behaviour; a refused document is InvalidArgument (as is a diag
// reply without a usable clock, which is otherwise positive); every node kept has a name,
// non-negative capacity equal to its
// allocatable, at most kMaxGpusPerNode GPUs indexed 0..n-1 with capacity.gpu = 1000 x n, the
// cluster label and a unique name, a bounded allocation (alloc_cpus, alloc_memory, gres_used)
// and offers (slurm_offer.h) within its capacity; every malformed entry is reported as an error;
// every job has a positive id and an ended job always has an outcome with an exit code in 0..255;
// a job-completion line names a positive job id or is refused naming `JobId`, and one that tells
// a whole end has an outcome.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "agent/slurm/slurm_diag.h"
#include "agent/slurm/slurm_inventory.h"
#include "agent/slurm/slurm_jobcomp_line.h"
#include "agent/slurm/slurm_jobs.h"
#include "agent/slurm/slurm_offer.h"
#include "agent/slurm/slurm_submit.h"
#include "fuzz_check.h"

namespace tessera::agent {
namespace {

using ::tessera::fuzz::Require;

// What Slurm allocated is bounded, and what the node offers Tessera — alone, or beside a job
// of Tessera's — stays within its capacity, with one unhealthy device per GPU taken.
void CheckOffers(const SlurmNode& parsed, std::string_view input) {
  const SlurmHeld& held = parsed.allocated;
  Require(held.cpu >= 0 && held.memory >= 0 && held.gpus >= 0 && held.gpus <= kMaxGpusPerNode,
          "what Slurm allocated is bounded", input);
  const TesseraOnNode beside{.held = {.cpu = 1000, .memory = int64_t{1} << 30, .gpus = 1},
                             .devices = {0}};
  for (const TesseraOnNode& tessera : {TesseraOnNode{}, beside}) {
    const Node offered = OfferedNode(parsed, tessera);
    const Resources& capacity = parsed.node.capacity;
    Require(offered.allocatable.cpu >= 0 && offered.allocatable.cpu <= capacity.cpu &&
                offered.allocatable.memory >= 0 && offered.allocatable.memory <= capacity.memory,
            "allocatable is within the capacity", input);
    int64_t unhealthy = 0;
    for (const GpuDevice& d : offered.gpus) unhealthy += d.healthy ? 0 : 1;
    Require(offered.allocatable.gpu == capacity.gpu - 1000 * unhealthy,
            "allocatable.gpu counts the healthy devices", input);
  }
}

void FuzzNodes(std::string_view text, std::string_view input, bool filter) {
  SlurmInventoryOptions options{.cluster = "c", .labels = {{"tessera.io/cluster", "c"}}};
  if (filter) options.partition = "gpu";
  absl::StatusOr<SlurmNodeList> list = ParseSlurmNodes(text, options);
  if (!list.ok()) {
    Require(list.status().code() == absl::StatusCode::kInvalidArgument,
            "a refused node list is InvalidArgument", input);
    return;
  }
  std::set<std::string> names;
  for (const SlurmNode& parsed : list->nodes) {
    const Node& node = parsed.node;
    Require(!node.name.empty(), "a node has a name", input);
    Require(names.insert(node.name).second, "node names are unique", input, node.name);
    Require(node.cluster == "c" && node.labels.at("tessera.io/cluster") == "c",
            "a node carries the cluster", input);
    Require(node.capacity.cpu >= 0 && node.capacity.memory >= 0, "capacity is not negative", input);
    Require(node.allocatable == node.capacity, "allocatable is the capacity", input);
    Require(node.gpus.size() <= static_cast<size_t>(kMaxGpusPerNode), "GPUs are bounded", input);
    Require(node.capacity.gpu == 1000 * static_cast<int64_t>(node.gpus.size()),
            "capacity.gpu counts the devices", input);
    for (size_t i = 0; i < node.gpus.size(); ++i) {
      Require(node.gpus[i].index == static_cast<int32_t>(i), "devices are indexed in order", input);
    }
    Require(!parsed.address.empty(), "a node has an address", input);
    Require(!parsed.usage.cpu.has_value() || *parsed.usage.cpu >= 0, "cpu usage >= 0", input);
    CheckOffers(parsed, input);
  }
  for (const std::string& error : list->errors) {
    Require(error.starts_with("slurm node"), "errors name the node", input, error);
  }
}

void FuzzJobs(std::string_view text, std::string_view input) {
  absl::StatusOr<SlurmJobList> list = ParseSlurmJobs(text);
  if (!list.ok()) {
    Require(list.status().code() == absl::StatusCode::kInvalidArgument,
            "a refused job list is InvalidArgument", input);
    return;
  }
  const TimePoint now(Duration(1'000'000));
  for (const SlurmJob& job : list->jobs) {
    Require(job.id > 0, "job ids are positive", input);
    const std::string launch_id = LaunchIdOf(job);
    for (bool cancel : {false, true}) {
      std::optional<TaskEnd> end = TaskEndOf(job, launch_id, cancel, now);
      Require(end.has_value() == (PhaseOf(job.state) == SlurmJobPhase::kEnded),
              "exactly the ended jobs have an outcome", input, job.state);
      if (!end.has_value()) continue;
      Require(!cancel || end->phase == TaskPhase::kCancelled, "a cancelled task ends Cancelled",
              input);
      Require(!end->exit_code.has_value() || (*end->exit_code >= 0 && *end->exit_code <= 255),
              "exit codes are 0..255", input);
    }
  }
  for (const std::string& error : list->errors) {
    Require(error.starts_with("slurm jobs["), "errors name the entry", input, error);
  }
}

void FuzzSubmitReply(std::string_view text, std::string_view input) {
  for (int status : {200, 500}) {
    absl::StatusOr<int64_t> id = ParseSubmitReply(status, text);
    Require(!id.ok() || *id > 0, "a submitted job has a positive id", input);
  }
}

void FuzzGres(std::string_view text, std::string_view input) {
  absl::StatusOr<std::vector<GresGpus>> gpus = ParseGpuGres(text);
  if (!gpus.ok()) return;
  for (const GresGpus& entry : *gpus) {
    Require(entry.count >= 0 && entry.count <= kMaxGpusPerNode, "gres counts are bounded", input);
    const std::string model = GpuModelFromGresType(entry.type);
    Require(model.size() <= entry.type.size(), "a model is no longer than its type", input);
  }
}

void FuzzDiag(std::string_view text, std::string_view input) {
  absl::StatusOr<int64_t> now = ParseSlurmClock(text);
  Require(now.ok() || now.status().code() == absl::StatusCode::kInvalidArgument,
          "a refused diag reply is InvalidArgument", input);
  Require(!now.ok() || *now > 0, "slurmctld's clock is positive", input);
}

void FuzzJobCompLine(std::string_view text, std::string_view input) {
  absl::StatusOr<SlurmJob> logged = ParseJobCompLine(text);
  if (!logged.ok()) {
    Require(logged.status().code() == absl::StatusCode::kInvalidArgument &&
                absl::StartsWith(logged.status().message(), "JobId: "),
            "a refused job-completion line names JobId", input);
    return;
  }
  Require(logged->id > 0, "a logged job has a positive id", input);
  if (!TellsWholeEnd(*logged)) return;
  const std::optional<TaskEnd> end = TaskEndOf(*logged, "t", false, TimePoint(Duration(1)));
  Require(end.has_value() && end->exit_code.has_value() && *end->exit_code >= 0 &&
              *end->exit_code <= 255,
          "an end logged whole has an outcome with an exit code in 0..255", input);
}

}  // namespace
}  // namespace tessera::agent

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string_view text = input.substr(1);
  switch (input[0]) {
    case 'N':
      tessera::agent::FuzzNodes(text, input, false);
      return 0;
    case 'J':
      tessera::agent::FuzzJobs(text, input);
      return 0;
    case 'S':
      tessera::agent::FuzzSubmitReply(text, input);
      return 0;
    case 'G':
      tessera::agent::FuzzGres(text, input);
      return 0;
    case 'D':
      tessera::agent::FuzzDiag(text, input);
      return 0;
    case 'E':
      tessera::agent::FuzzJobCompLine(text, input);
      return 0;
  }
  switch (static_cast<uint8_t>(input[0]) % 6) {
    case 0:
      tessera::agent::FuzzNodes(text, input, true);
      break;
    case 1:
      tessera::agent::FuzzJobs(text, input);
      break;
    case 2:
      tessera::agent::FuzzSubmitReply(text, input);
      break;
    case 3:
      tessera::agent::FuzzGres(text, input);
      break;
    case 4:
      tessera::agent::FuzzJobCompLine(text, input);
      break;
    default:
      tessera::agent::FuzzDiag(text, input);
      break;
  }
  return 0;
}
