// CallbackProbe: checks a backend's destruction contract (tessera/cluster/cluster.h) — once a
// Cluster's destructor has returned, none of its threads calls back. A test gives the cluster
// a log callback from Log() and a ProbeObserver, destroys the cluster while its threads are
// busy, then calls ClusterGone(); a callback that arrives afterwards is counted in late_calls().
//
// The observer is meant to be freed right after the cluster, so that under ASan a late observer
// call is also reported as a use after free. Thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string_view>

#include "tessera/cluster/cluster.h"

namespace tessera::agent::testing {

class CallbackProbe {
 public:
  void Called() {
    calls_.fetch_add(1);
    if (gone_.load()) late_calls_.fetch_add(1);
  }
  void ClusterGone() { gone_.store(true); }
  int calls() const { return calls_.load(); }
  int late_calls() const { return late_calls_.load(); }

 private:
  std::atomic<bool> gone_{false};
  std::atomic<int> calls_{0};
  std::atomic<int> late_calls_{0};
};

// A log callback for the backend's options that reports to `probe`.
inline std::function<void(std::string_view)> Log(std::shared_ptr<CallbackProbe> probe) {
  return [probe = std::move(probe)](std::string_view) { probe->Called(); };
}

class ProbeObserver final : public TaskObserver {
 public:
  explicit ProbeObserver(std::shared_ptr<CallbackProbe> probe) : probe_(std::move(probe)) {}
  void OnTaskStarted(std::string_view, TimePoint) override { probe_->Called(); }
  void OnTaskEnded(const tessera::TaskEnd&) override { probe_->Called(); }

 private:
  std::shared_ptr<CallbackProbe> probe_;
};

}  // namespace tessera::agent::testing
