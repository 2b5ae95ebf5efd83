// The flags of `tessera sim` and the helpers every kind of run shares (sim_command.cc runs
// traces and scenarios, sim_swf_flags.cc Parallel Workloads Archive logs).
//
// SimFlags holds the parsed command line; optional strings are flags whose empty value is an
// error, not "not given". BadInput prints "tessera sim: MESSAGE" on stderr and returns the bad
// input exit status (2). WriteFile and CheckOutputPaths return InvalidArgument naming the flag.
// Thread-safety: none needed; the command runs on one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "sched/scheduling_policy.h"

namespace tessera::cli::sim_cli {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;

struct SimFlags {
  std::string scenario;
  std::optional<std::string> seed;
  std::optional<std::string> seeds;
  std::string nodes;
  std::string pods;
  std::optional<std::string> policy;
  std::optional<std::string> policies;
  std::string mode = "paper";
  double inflate = 1.3;
  std::string expected_dir;
  bool no_expected = false;
  std::string summary_json;
  std::string metrics_csv;
  std::string metrics_json;
  std::string samples_csv;
  std::string report;
  std::string sample_interval = "1h";
  double arrival_speedup = 1;
  double typical_threshold = 95;
  int32_t threads = 0;
  bool progress = false;
  bool no_node_shuffle = false;
  // --swf: a Parallel Workloads Archive log under the batch policies.
  std::string swf;
  std::string backfill = "all";
  bool fifo = false;
  std::optional<int64_t> limit;
  int64_t skip = 0;
  std::string queues_from = "single";
  std::string fair_share = "drf";
  int32_t backfill_depth = SchedulingPolicy{}.backfill_depth;
  std::optional<int64_t> cpus_per_node;
  std::optional<int64_t> processors;
  int64_t clusters = 1;
  std::string site_placement = "any";
  bool cost_tiers = false;
};

// Printed on stderr, prefixed with "tessera sim: "; returns kExitBadInput.
int BadInput(std::string_view message);
int BadInput(const absl::Status& status);

// Writes `contents` to `path`; `flag` names the option in the error.
absl::Status WriteFile(const std::string& path, std::string_view flag, const std::string& contents);

// Output paths are checked before the runs, so that a typo does not waste a sweep: an existing
// directory, or a parent directory that does not exist, is an error.
absl::Status CheckOutputPaths(const SimFlags& f);

}  // namespace tessera::cli::sim_cli
