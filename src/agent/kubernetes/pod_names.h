// Pod names, label values and rendezvous names derived from Tessera launch and job ids.
//
// A launch id ("<job>-<task>-a<attempt>", [A-Za-z0-9._-]) is not always a valid Kubernetes
// name: a pod name must be a DNS-1123 label here (lower-case alphanumerics and '-', starting
// and ending with an alphanumeric, at most 63 characters, so it is also a valid host name) and
// a label value at most 63 characters of [A-Za-z0-9._-] starting and ending with an
// alphanumeric. An id that is already valid is used as it is; any other is lower-cased (for
// names), has '.' and '_' turned into '-' (names), is cut to fit and gets "-" and 12 hex digits
// of a 64-bit FNV-1a hash of the exact id appended, so two different ids get different names
// (up to a hash collision) and the same id always gets the same name. The exact id is kept
// in the pod's annotation tessera.io/launch-id.
// A Service name must moreover start with a letter (a DNS-1035 label): a job id that does not
// is given a "j-" prefix (and so the hash).
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::agent::k8s {

inline constexpr size_t kMaxNameLength = 63;

// "train-7-worker-0-a1" -> "train-7-worker-0-a1"; "Train_7.w-a1" -> "train-7-w-a1-<hash>".
std::string PodNameForLaunch(std::string_view launch_id);

// The name of a multi-task job's headless Service (rendezvous.h), a DNS-1035 label:
// "train7" -> "train7"; "7_Train" -> "j-7-train-<hash>".
std::string ServiceNameForJob(std::string_view job_id);

// The host name (pod spec.hostname) of rank `rank` of a multi-task job, unique within the job:
// its Service name, cut to leave room, and "-<rank>": "train7", 1 -> "train7-1".
std::string HostnameForRank(std::string_view job_id, int32_t rank);

// A label value carrying `text` (a launch id, job id or task name).
std::string LabelValue(std::string_view text);

// True for a DNS-1123 label (a pod name or a namespace).
bool IsDnsLabel(std::string_view name);

}  // namespace tessera::agent::k8s
