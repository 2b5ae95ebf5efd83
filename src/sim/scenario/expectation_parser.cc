#include "sim/scenario/expectation_parser.h"

#include <map>
#include <optional>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sim/scenario/name_range.h"
#include "tessera/common/status_macros.h"

namespace tessera::sim {
namespace {

std::string FlowText(const YAML::Node& n) {
  YAML::Emitter emitter;
  emitter.SetMapFormat(YAML::Flow);
  emitter.SetSeqFormat(YAML::Flow);
  emitter << n;
  return emitter.c_str();
}

}  // namespace

absl::StatusOr<std::vector<Expectation>> ExpectationParser::ParseAll(const YAML::Node& list) const {
  std::vector<Expectation> out;
  TESSERA_RETURN_IF_ERROR(
      r_.ForEachItem(list, "expect", [&](const YAML::Node& n, const std::string& path) {
        TESSERA_ASSIGN_OR_RETURN(Expectation e, ParseOne(n, path));
        e.index = static_cast<int>(out.size());
        out.push_back(std::move(e));
        return absl::OkStatus();
      }));
  return out;
}

absl::StatusOr<Expectation> ExpectationParser::ParseOne(const YAML::Node& n,
                                                        const std::string& path) const {
  Expectation e;
  e.line = YamlReader::Line(n);
  int timings = 0;
  int subjects = 0;
  bool invariant = false;
  bool has_always = false;
  int queue_checks = 0;
  int job_checks = 0;
  TESSERA_RETURN_IF_ERROR(r_.ForEach(
      n, path,
      {"at",
       "by",
       "always",
       "end",
       "job",
       "queue",
       "invariant",
       "phase",
       "reason",
       "reason_contains",
       "running_tasks",
       "running_tasks_in",
       "nodes_in",
       "node_model",
       "cluster",
       "pool",
       "preemptions",
       "restarts",
       "start_time",
       "end_time",
       "started_after",
       "started_before",
       "started_after_end_of",
       "allocated"},
      [&](std::string_view key, const YAML::Node& v, const std::string& field) -> absl::Status {
        if (key == "at" || key == "by" || key == "always" || key == "end") {
          ++timings;
          has_always = has_always || key == "always";
          return ParseTiming(key, v, field, e);
        }
        if (key == "job") {
          ++subjects;
          TESSERA_ASSIGN_OR_RETURN(e.job, ExistingJob(v, field));
        } else if (key == "queue") {
          ++subjects;
          TESSERA_ASSIGN_OR_RETURN(e.queue, r_.Name(v, field));
          if (!index_.queues.contains(e.queue)) {
            return r_.Error(v, field, Cat("queue '", e.queue, "' does not exist"));
          }
        } else if (key == "invariant") {
          ++subjects;
          invariant = true;
          TESSERA_ASSIGN_OR_RETURN(
              std::string name,
              r_.Choice(v, field,
                        {"no_overcommit", "gang_atomic", "quota_respected", "pending_has_reason"}));
          Check c{.kind = CheckKind::kInvariant, .key = "invariant"};
          c.invariant = name == "no_overcommit"     ? Invariant::kNoOvercommit
                        : name == "gang_atomic"     ? Invariant::kGangAtomic
                        : name == "quota_respected" ? Invariant::kQuotaRespected
                                                    : Invariant::kPendingHasReason;
          e.checks.push_back(std::move(c));
        } else if (key == "allocated") {
          ++queue_checks;
          Check c{.kind = CheckKind::kAllocated, .key = "allocated"};
          TESSERA_ASSIGN_OR_RETURN(c.resources, ParseResourceBounds(v, field));
          e.checks.push_back(std::move(c));
        } else {
          ++job_checks;
          TESSERA_ASSIGN_OR_RETURN(Check c, ParseJobCheck(key, v, field));
          e.checks.push_back(std::move(c));
        }
        return absl::OkStatus();
      }));
  if (subjects != 1) {
    return r_.Error(n, path, "needs exactly one of job, queue, invariant");
  }
  if (invariant) {
    if (timings > (has_always ? 1 : 0) || (has_always && e.timing != Timing::kAlways)) {
      return r_.Error(n, path, "an invariant holds always: leave out at, by and end");
    }
    e.timing = Timing::kAlways;
  } else if (timings != 1) {
    return r_.Error(n, path, "needs exactly one of at, by, always, end");
  }
  if (!e.job.empty() && queue_checks > 0) {
    return r_.Error(n, Field(path, "allocated"), "is a check of a queue, not of a job");
  }
  if (!e.queue.empty() && job_checks > 0) {
    return r_.Error(n, path, "a queue takes only the allocated check");
  }
  if (!invariant && e.checks.empty()) return r_.Error(n, path, "names no check");
  e.text = FlowText(n);
  return e;
}

absl::Status ExpectationParser::ParseTiming(std::string_view key, const YAML::Node& v,
                                            const std::string& field, Expectation& e) const {
  if (key == "at" || key == "by") {
    e.timing = key == "at" ? Timing::kAt : Timing::kBy;
    TESSERA_ASSIGN_OR_RETURN(e.time, r_.Dur(v, field));
    return absl::OkStatus();
  }
  TESSERA_ASSIGN_OR_RETURN(bool on, r_.Bool(v, field));
  if (!on) return r_.Error(v, field, "must be true (leave the key out instead)");
  e.timing = key == "always" ? Timing::kAlways : Timing::kEnd;
  return absl::OkStatus();
}

absl::StatusOr<std::string> ExpectationParser::ExistingJob(const YAML::Node& v,
                                                           const std::string& field) const {
  TESSERA_ASSIGN_OR_RETURN(std::string job, r_.Name(v, field));
  if (!index_.jobs.contains(job)) {
    return r_.Error(v, field, Cat("job '", job, "' does not exist"));
  }
  return job;
}

absl::StatusOr<Check> ExpectationParser::ParseJobCheck(std::string_view key, const YAML::Node& v,
                                                       const std::string& field) const {
  Check c;
  c.key = std::string(key);
  if (key == "phase") {
    c.kind = CheckKind::kPhase;
    TESSERA_ASSIGN_OR_RETURN(c.text, r_.Choice(v, field,
                                               {"Pending", "Admitted", "Running", "Succeeded",
                                                "Failed", "Cancelled", "Preempted"}));
  } else if (key == "reason") {
    // The contract's codes (pending, then ending), and NodeUnavailable, which the scheduler
    // gives a job besides.
    c.kind = CheckKind::kReason;
    TESSERA_ASSIGN_OR_RETURN(
        c.text, r_.Choice(v, field,
                          {"InsufficientResources", "GpuModelMismatch", "NodeSelectorMismatch",
                           "Untolerated", "QuotaExceeded", "GangIncomplete", "Priority",
                           "Reservation", "Backoff", "Refused", "NoFit", "TimeLimitExceeded",
                           "StartFailed", "TaskLost", "Cancelled", "Error", "NodeUnavailable"}));
  } else if (key == "reason_contains" || key == "node_model") {
    c.kind = key == "reason_contains" ? CheckKind::kReasonContains : CheckKind::kNodeModel;
    TESSERA_ASSIGN_OR_RETURN(c.text, r_.Name(v, field));
  } else if (key == "cluster" || key == "pool") {
    c.kind = key == "cluster" ? CheckKind::kCluster : CheckKind::kPool;
    TESSERA_ASSIGN_OR_RETURN(c.text, r_.Name(v, field));
    const bool known =
        key == "cluster" ? index_.clusters.contains(c.text) : index_.pools.contains(c.text);
    if (!known) {
      return r_.Error(v, field, Cat(key, " '", c.text, "' does not exist"));
    }
  } else if (key == "running_tasks") {
    c.kind = CheckKind::kRunningTasks;
    TESSERA_ASSIGN_OR_RETURN(int64_t count, r_.Int(v, field, 0));
    c.bounds = Bounds{count, count};
  } else if (key == "running_tasks_in") {
    c.kind = CheckKind::kRunningTasksIn;
    TESSERA_RETURN_IF_ERROR(
        r_.ForEachItem(v, field, [&](const YAML::Node& i, const std::string& f) {
          TESSERA_ASSIGN_OR_RETURN(int64_t count, r_.Int(i, f, 0));
          c.counts.push_back(count);
          return absl::OkStatus();
        }));
    if (c.counts.empty()) return r_.Error(v, field, "must list at least one count");
  } else if (key == "nodes_in") {
    c.kind = CheckKind::kNodesIn;
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> patterns, r_.StringList(v, field));
    for (const std::string& pattern : patterns) {
      absl::StatusOr<std::vector<std::string>> names = ExpandNameRanges(pattern);
      if (!names.ok()) return r_.Error(v, field, std::string(names.status().message()));
      for (std::string& name : *names) {
        if (!index_.nodes.contains(name)) {
          return r_.Error(v, field, Cat("node '", name, "' does not exist"));
        }
        c.names.push_back(std::move(name));
      }
    }
  } else if (key == "preemptions" || key == "restarts") {
    c.kind = key == "preemptions" ? CheckKind::kPreemptions : CheckKind::kRestarts;
    TESSERA_ASSIGN_OR_RETURN(c.bounds, ParseBounds(v, field, false));
  } else if (key == "start_time" || key == "end_time") {
    c.kind = key == "start_time" ? CheckKind::kStartTime : CheckKind::kEndTime;
    TESSERA_ASSIGN_OR_RETURN(c.bounds, ParseBounds(v, field, true));
  } else {
    c.kind = key == "started_after"    ? CheckKind::kStartedAfter
             : key == "started_before" ? CheckKind::kStartedBefore
                                       : CheckKind::kStartedAfterEndOf;
    TESSERA_ASSIGN_OR_RETURN(c.text, ExistingJob(v, field));
  }
  return c;
}

absl::StatusOr<Bounds> ExpectationParser::ParseBounds(const YAML::Node& v, const std::string& field,
                                                      bool durations) const {
  auto value = [&](const YAML::Node& n, const std::string& f) -> absl::StatusOr<int64_t> {
    if (!durations) return r_.Int(n, f, 0);
    TESSERA_ASSIGN_OR_RETURN(Duration d, r_.Dur(n, f));
    return d.count();
  };
  Bounds b;
  if (v.IsScalar()) {  // a single value: exactly that
    TESSERA_ASSIGN_OR_RETURN(int64_t exact, value(v, field));
    return Bounds{exact, exact};
  }
  TESSERA_RETURN_IF_ERROR(r_.ForEach(
      v, field, {"min", "max"},
      [&](std::string_view key, const YAML::Node& n, const std::string& f) -> absl::Status {
        TESSERA_ASSIGN_OR_RETURN(int64_t x, value(n, f));
        (key == "min" ? b.min : b.max) = x;
        return absl::OkStatus();
      }));
  if (!b.min && !b.max) return r_.Error(v, field, "needs min, max or both");
  if (b.min && b.max && *b.min > *b.max) return r_.Error(v, field, "min is above max");
  return b;
}

absl::StatusOr<ResourceBounds> ExpectationParser::ParseResourceBounds(
    const YAML::Node& v, const std::string& field) const {
  ResourceBounds b;
  TESSERA_RETURN_IF_ERROR(r_.ForEach(
      v, field, {"min", "max"},
      [&](std::string_view key, const YAML::Node& n, const std::string& f) -> absl::Status {
        auto& out = key == "min" ? b.min : b.max;
        return r_.ForEach(
            n, f, {"cpu", "memory", "gpu", "gpu_memory"},
            [&](std::string_view k, const YAML::Node& q, const std::string& qf) -> absl::Status {
              TESSERA_ASSIGN_OR_RETURN(int64_t x, r_.ResourceQuantity(k, q, qf, static_cast<int64_t>(kMaxNodes)));
              out.emplace_back(std::string(k), x);
              return absl::OkStatus();
            });
      }));
  if (b.min.empty() && b.max.empty()) return r_.Error(v, field, "needs min, max or both");
  return b;
}

}  // namespace tessera::sim
