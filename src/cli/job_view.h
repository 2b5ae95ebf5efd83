// JobView: reading the server's JSON (jobs, events, explanations, nodes) for display — safe
// accessors that never throw on a missing or mistyped key, RFC 3339 times, ages, and the job
// table's columns:
//   ID NAME TENANT QUEUE PHASE REASON AGE        (-o wide adds NODES and GPUS)
// AGE is the time since status.submitTime ("45s", "12m", "5h", "3d"); NODES the distinct nodes
// of status.tasks; GPUS the job's total GPU request (replicas x gpu over task groups; "0.5").
// Absent values show as "" (REASON) or "-".
// Thread-safe: pure functions.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/client/rest_client.h"
#include "tessera/common/clock.h"

namespace tessera::cli {

// The value at `path` (object keys), or nullptr.
const Json* JsonAt(const Json& value, std::initializer_list<std::string_view> path);
// `value` as JSON text; invalid UTF-8 in strings is written as U+FFFD (never throws).
std::string DumpJson(const Json& value, int indent = -1);
// A string at `path`; numbers and booleans as their JSON text; "" when absent or null.
std::string JsonText(const Json& value, std::initializer_list<std::string_view> path);
// The array at `path`, or an empty one.
const Json& JsonArray(const Json& value, std::initializer_list<std::string_view> path);
// A number at `path` (a JSON number, or a string holding one); nullopt otherwise.
std::optional<double> JsonNumber(const Json& value, std::initializer_list<std::string_view> path);

// "2026-11-29T10:00:00Z", "2026-11-29T10:00:00.25+01:00".
std::optional<TimePoint> ParseRfc3339(std::string_view text);
// "45s", "12m", "5h", "3d"; "0s" for negative durations (clock skew).
std::string FormatAge(Duration age);
// "0.5", "2", "1.25" (at most three decimals, no trailing zeros).
std::string FormatNumber(double value);

std::vector<std::string> JobTableHeaders(bool wide);
std::vector<std::string> JobTableRow(const Json& job, TimePoint now, bool wide);

// Distinct nodes of status.tasks, in order: "gpu-1,gpu-2"; "-" when none.
std::string JobNodes(const Json& job);
// Sum of replicas x gpu over spec.tasks: "4", "0.5"; "0" when none.
std::string JobGpus(const Json& job);

}  // namespace tessera::cli
