// JobDocumentToJson: a JobDocument as a JSON value in the JOBSPEC.md shape, for API layers
// that embed jobs in larger responses (lists, watch events). RenderJobJson and RenderJobYaml
// (jobspec.h) print this same value.
//
// Keys keep the JOBSPEC.md order. Quantities are Kubernetes strings ("8", "500m", "64Gi")
// except `gpu` (a number: 4, or 0.5 for a share of one GPU) and plain-count extended
// resources (numbers); durations are Go-style strings ("1h30m"); times are RFC 3339 in UTC
// with milliseconds when not whole seconds ("2024-05-01T12:00:00.250Z"). Defaults are
// written out (queue, priority, preemptible, restartPolicy, ...); empty maps, lists and
// strings of the spec and unset optional values are left out, except status.tasks[].exitCode
// (null while the task runs). The job-wide nodeSelector and tolerations are written once
// when every task group has the same ones, and per task group otherwise.
// Thread-safe: pure function.
#pragma once

#include <map>
#include <string>

#include "nlohmann/json.hpp"
#include "spec/job_document.h"

namespace tessera::spec {

nlohmann::ordered_json JobDocumentToJson(const JobDocument& job);

// A time as the documents write it: RFC 3339 in UTC, with milliseconds when not whole seconds.
std::string FormatRfc3339(TimePoint t);
// A string map (labels, selectors) as a JSON object.
nlohmann::ordered_json StringMapToJson(const std::map<std::string, std::string, std::less<>>& map);

// Any JSON value (a job as a server returned it, a list of them) as block YAML, written the
// way RenderJobYaml writes a job: keys in their order, lists of scalars in flow style, strings
// that would read as a number, boolean, null or date double-quoted.
std::string RenderJsonAsYaml(const nlohmann::ordered_json& value);

}  // namespace tessera::spec
