// TraceJobs: the job documents `tessera replay` submits for the rows of a real trace — Alibaba
// GPU pods (sim/alibaba/alibaba_trace.h) or Parallel Workloads Archive jobs (sim/swf/swf_trace.h)
// — with their arrival times.
//
// The trace's rows are taken in arrival order (stable for ties); `skip` and `limit` select a
// window of them. A row becomes the job its trace format's mapping gives — the same mapping
// `tessera sim` runs, so a row is the same job in a simulation and in a replay:
//   Alibaba pod  sim/alibaba/pod_job.h (PodJobSpec): one task "main" with the pod's cpu, memory,
//                GPU (num_gpu x gpu_milli: 0.46 of one GPU, or whole GPUs) and allowed GPU
//                models; spec.duration = the pod's run time (deletion_time - scheduled_time, or
//                - creation_time when it never ran); no time limit. Arrival = creation_time.
//   SWF job      sim/swf/swf_job.h (SwfJobSpec): a task group "proc" of P = requested (else
//                allocated) processors, 1 cpu each and the requested memory per processor when
//                known, minAvailable = all (a rigid gang); spec.duration = run time;
//                spec.timeLimit = requested time raised to the run time when below it, the run
//                time when unknown. Arrival = submit time.
// Durations and time limits are then divided by `speedup` like the arrivals (at least 1 ms).
// With `rate` set, the arrivals are steady instead: the k-th job of the plan (k from 0, rows
// skipped for the reasons below not counted) arrives at k / rate seconds, to the millisecond,
// whatever the trace's times (they still order the rows); `speedup` then scales only durations
// and time limits.
// Every job gets the toleration {key: tessera.io/simulated, operator: Exists}, the label
// tessera.io/replay: <trace name>, metadata.requestId "replay-<trace name>-<row id>" (a re-run
// replay submits nothing twice), metadata.name "<trace name>-<row id>" made a DNS-1123 name,
// and spec.queue / spec.clusterSelector {tessera.io/cluster: <cluster>} when given.
// Rows that cannot be replayed are counted by reason, not submitted: unknown arrival, the
// mapping's reasons (a pod without deletion_time; an SWF run time <= 0 or unknown, processors
// unknown or above kMaxTasksPerJob), a spec that does not validate.
// Errors: InvalidArgument for options out of range or a pod list without times.
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/alibaba/alibaba_trace.h"
#include "sim/swf/swf_trace.h"
#include "spec/job_document.h"
#include "tessera/common/clock.h"

namespace tessera::cli {

inline constexpr char kSimulatedTaintKey[] = "tessera.io/simulated";
inline constexpr char kReplayLabel[] = "tessera.io/replay";

struct ReplayOptions {
  std::string trace_name;        // "openb_pod_list_default", "NASA-iPSC-1993-3.1-cln"
  double speedup = 1;            // > 0
  std::optional<double> rate;    // jobs per second, > 0; nullopt = the trace's arrival times
  int64_t skip = 0;              // rows skipped from the start, in arrival order
  std::optional<int64_t> limit;  // rows taken after the skipped ones; nullopt = all
  std::string queue;             // "" = the document default
  std::string cluster;           // "" = any cluster
};

struct ReplayJob {
  std::string trace_id;  // pod name or SWF job id
  Duration arrival{0};   // after the window's first row, already divided by the speed-up (or
                         // k / rate with a rate)
  spec::JobDocument document;
};

struct ReplayPlan {
  std::vector<ReplayJob> jobs;             // by arrival
  int64_t rows = 0;                        // rows in the window
  std::map<std::string, int64_t> skipped;  // reason -> rows
};

absl::StatusOr<ReplayPlan> PlanAlibabaReplay(const sim::alibaba::PodList& pods,
                                             const ReplayOptions& options);
absl::StatusOr<ReplayPlan> PlanSwfReplay(const sim::swf::SwfTrace& trace,
                                         const ReplayOptions& options);

// The trace's name from its path: the file name without .gz, .swf and .csv.
std::string TraceNameFromPath(std::string_view path);

// `text` as a DNS-1123 name: lower case, runs of other characters as '-', at most 253
// characters, starting and ending with a letter or digit ("NASA-iPSC_1" -> "nasa-ipsc-1").
std::string DnsName(std::string_view text);

}  // namespace tessera::cli
