#include "cli/replay/trace_jobs.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "absl/status/status.h"
#include "cli/job_flags.h"
#include "core/cluster_name.h"
#include "fmt/format.h"
#include "sim/alibaba/pod_job.h"
#include "sim/swf/swf_job.h"

namespace tessera::cli {
namespace {

constexpr size_t kMaxNameLength = 253;

// One trace row, whatever the trace: its arrival and the job it maps to (or why none).
struct Row {
  std::string id;
  std::optional<int64_t> arrival_s;
  std::optional<JobSpec> spec;  // the trace format's mapping (sim/swf/swf_job.h, pod_job.h)
  std::string skip_reason;      // the mapping's reason when spec is unset
};

absl::Status CheckOptions(const ReplayOptions& o) {
  if (!(o.speedup > 0) || !std::isfinite(o.speedup)) {
    return absl::InvalidArgumentError(
        fmt::format("--speedup: must be a positive number, got {}", o.speedup));
  }
  if (o.rate && (!(*o.rate > 0) || !std::isfinite(*o.rate))) {
    return absl::InvalidArgumentError(
        fmt::format("--rate: must be a positive number of jobs per second, got {}", *o.rate));
  }
  if (o.skip < 0) return absl::InvalidArgumentError("--skip: must be >= 0");
  if (o.limit && *o.limit < 1) return absl::InvalidArgumentError("--limit: must be >= 1");
  if (o.trace_name.empty()) return absl::InvalidArgumentError("the trace has no name");
  return absl::OkStatus();
}

// Seconds of trace time as scaled wall time, at least 1 ms.
Duration Scaled(double seconds, double speedup, bool at_least_1ms) {
  const double ms = std::round(seconds * 1000.0 / speedup);
  // Far beyond any trace, and exactly representable: the cast below cannot overflow.
  constexpr double kMaxMillis = 1e15;
  const double bounded = std::min(ms, kMaxMillis);
  const auto out = Duration(static_cast<int64_t>(bounded));
  return at_least_1ms ? std::max(out, Duration(1)) : out;
}

// The arrival of the k-th job at a steady `rate` jobs per second: k / rate s, to the ms.
Duration SteadyArrival(size_t k, double rate) {
  return Scaled(static_cast<double>(k), rate, false);
}

// The mapped spec as a replay's document: named, labelled, tolerating simulated nodes, queued,
// its times divided by the speed-up.
spec::JobDocument Document(Row& row, const ReplayOptions& o) {
  spec::JobDocument doc;
  doc.metadata.request_id = fmt::format("replay-{}-{}", o.trace_name, row.id);
  JobSpec& spec = doc.spec;
  spec = *std::move(row.spec);
  spec.name = DnsName(fmt::format("{}-{}", o.trace_name, row.id));
  spec.labels.emplace(kReplayLabel, o.trace_name);
  if (!o.queue.empty()) spec.queue = o.queue;
  if (!o.cluster.empty()) spec.cluster_selector.emplace(std::string(kClusterLabel), o.cluster);
  const auto scaled = [&](Duration d) {
    return Scaled(std::chrono::duration<double>(d).count(), o.speedup, true);
  };
  if (spec.time_limit) spec.time_limit = scaled(*spec.time_limit);
  if (spec.duration) spec.duration = scaled(*spec.duration);
  Toleration simulated;
  simulated.key = kSimulatedTaintKey;
  simulated.exists = true;
  for (TaskGroup& group : spec.tasks) group.request.tolerations.push_back(simulated);
  return doc;
}

// The shared part: order by arrival, take the window, map or count each row.
ReplayPlan Plan(std::vector<Row> rows, const ReplayOptions& o) {
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  // Rows without an arrival go last (and are skipped); the rest by arrival, stable.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto key = [&](size_t i) {
      return rows[i].arrival_s.value_or(std::numeric_limits<int64_t>::max());
    };
    return key(a) < key(b);
  });
  const size_t begin = std::min(order.size(), static_cast<size_t>(o.skip));
  size_t end = order.size();
  if (o.limit) end = std::min(end, begin + static_cast<size_t>(*o.limit));

  ReplayPlan plan;
  plan.rows = static_cast<int64_t>(end - begin);
  std::optional<int64_t> origin;
  for (size_t k = begin; k < end; ++k) {
    Row& row = rows[order[k]];
    if (!row.arrival_s || !row.spec) {
      ++plan.skipped[!row.arrival_s ? std::string("unknown arrival time") : row.skip_reason];
      continue;
    }
    if (!origin) origin = *row.arrival_s;
    spec::JobDocument doc = Document(row, o);
    if (absl::Status valid = doc.spec.Validate("spec"); !valid.ok()) {
      ++plan.skipped[fmt::format("invalid job ({})", std::string(valid.message()))];
      continue;
    }
    const Duration arrival =
        o.rate ? SteadyArrival(plan.jobs.size(), *o.rate)
               : Scaled(static_cast<double>(*row.arrival_s - *origin), o.speedup, false);
    plan.jobs.push_back({row.id, arrival, std::move(doc)});
  }
  return plan;
}

std::optional<int64_t> Known(int64_t value) {
  return value == sim::swf::kSwfUnknown ? std::nullopt : std::optional<int64_t>(value);
}

}  // namespace

absl::StatusOr<ReplayPlan> PlanAlibabaReplay(const sim::alibaba::PodList& pods,
                                             const ReplayOptions& options) {
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  if (!pods.has_times) {
    return absl::InvalidArgumentError(
        "--pods: this pod list has no times (the 5-column form): a replay needs creation_time "
        "and deletion_time");
  }
  std::vector<Row> rows;
  rows.reserve(pods.tasks.size());
  for (const sim::alibaba::TraceTask& t : pods.tasks) {
    sim::alibaba::PodJobMapping mapped = sim::alibaba::PodJobSpec(t);
    rows.push_back({t.name, t.creation_time, std::move(mapped.spec), mapped.skip_reason});
  }
  return Plan(std::move(rows), options);
}

absl::StatusOr<ReplayPlan> PlanSwfReplay(const sim::swf::SwfTrace& trace,
                                         const ReplayOptions& options) {
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  std::vector<Row> rows;
  rows.reserve(trace.jobs.size());
  for (const sim::swf::SwfJob& j : trace.jobs) {
    sim::swf::SwfJobMapping mapped = sim::swf::SwfJobSpec(j);
    rows.push_back(
        {std::to_string(j.id), Known(j.submit_time), std::move(mapped.spec), mapped.skip_reason});
  }
  return Plan(std::move(rows), options);
}

std::string TraceNameFromPath(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (std::string_view suffix : {".gz", ".swf", ".csv"}) {
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
      name.remove_suffix(suffix.size());
    }
  }
  return std::string(name);
}

std::string DnsName(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) && u < 0x80) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  if (out.size() > kMaxNameLength) out.resize(kMaxNameLength);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "replay" : out;
}

}  // namespace tessera::cli
