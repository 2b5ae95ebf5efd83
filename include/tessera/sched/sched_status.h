// SchedStatus: the verdict of a scheduling step, distinct from failures (absl::Status).
//
// "Does not fit" is a verdict, never an error. A verdict carries a code, a Reason (a named
// constant with a stable code such as "InsufficientResources" and a detail such as
// "insufficient gpu") and the name of the plugin that gave it. Reasons are static constants so
// that building and copying a verdict never allocates on the hot path; only kError carries a
// free-form message. Success is the default-constructed value and costs nothing.
// Thread-safe as a value type.
//
// Codes (after kube-scheduler's framework):
//   kSuccess                       the step passed
//   kUnschedulable                 does not fit now; may fit later or after preemption
//   kUnschedulableAndUnresolvable  can never fit on this node; preemption cannot help
//   kWait                          Permit only: hold the task until its gang is complete
//   kSkip                          PreFilter/PreScore: this plugin has nothing to do for the task
//   kError                         an internal failure; the attempt is aborted
#pragma once

#include <string>
#include <string_view>

namespace tessera {

// A named rejection reason. `code` is one of the pending-reason codes of the job status
// ("InsufficientResources", "GpuModelMismatch", "NodeSelectorMismatch", "Untolerated",
// "NodeUnavailable", ...); `detail` says it in words for "0/1213 nodes: 1100 insufficient gpu".
// Define reasons as `inline constexpr Reason` in the plugin that reports them.
// `out_of_scope` marks a reason that puts the node outside the job's scope rather than saying
// what it lacks: a node of a cluster the job does not select (clusterSelector, cluster affinity
// or anti-affinity). Such nodes are counted, but while any node in scope was rejected they do
// not decide the pending code (Diagnosis::TopCode), as kube-scheduler's "0/N nodes" lists nodes
// excluded by a selector without letting them hide why the others refused.
struct Reason {
  std::string_view code;
  std::string_view detail;
  bool out_of_scope = false;
};

class SchedStatus {
 public:
  enum class Code { kSuccess, kUnschedulable, kUnschedulableAndUnresolvable, kWait, kSkip, kError };

  SchedStatus() = default;  // Success
  static SchedStatus Unschedulable(const Reason& r) { return {Code::kUnschedulable, &r}; }
  static SchedStatus Unresolvable(const Reason& r) {
    return {Code::kUnschedulableAndUnresolvable, &r};
  }
  static SchedStatus Wait() { return {Code::kWait, nullptr}; }
  static SchedStatus Skip() { return {Code::kSkip, nullptr}; }
  static SchedStatus Error(std::string message) {
    SchedStatus s{Code::kError, nullptr};
    s.message_ = std::move(message);
    return s;
  }

  Code code() const { return code_; }
  bool ok() const { return code_ == Code::kSuccess; }
  bool IsRejection() const {
    return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable;
  }
  // The reason of a rejection; nullptr for other codes.
  const Reason* reason() const { return reason_; }
  // The error text of kError; empty otherwise.
  const std::string& message() const { return message_; }
  // The plugin that gave the verdict; set by the framework.
  std::string_view plugin() const { return plugin_; }
  SchedStatus& WithPlugin(std::string_view plugin) {
    plugin_ = plugin;
    return *this;
  }

 private:
  SchedStatus(Code code, const Reason* reason) : code_(code), reason_(reason) {}

  Code code_ = Code::kSuccess;
  const Reason* reason_ = nullptr;
  std::string_view plugin_;  // plugin names outlive every verdict (they are static strings)
  std::string message_;
};

}  // namespace tessera
