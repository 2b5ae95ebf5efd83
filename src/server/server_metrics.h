// ServerMetrics: the control plane's Prometheus metrics (prometheus-cpp), served at /metrics.
//
//   tessera_scheduling_cycle_seconds        histogram  wall time of one scheduling cycle
//   tessera_job_placement_latency_seconds   histogram  from a job's submission (a requeued
//                                                      attempt: its requeue) to the placement of
//                                                      its gang, once per attempt, on the job
//                                                      manager's clock
//   tessera_scheduling_decisions_total      counter    {result: placed|refused}
//   tessera_jobs_submitted_total            counter
//   tessera_jobs_finished_total             counter    {phase: Succeeded|Failed|Cancelled}
//   tessera_jobs                            gauge      {phase}: jobs per phase now
//   tessera_pending_jobs                    gauge      {reason}: pending jobs per reason code
//   tessera_resource_capacity / _allocated  gauge      {resource: cpu (cores)|memory (bytes)|gpu (GPUs)}
// Without a registry every call is a no-op. Thread-safety: every method may be called
// concurrently (prometheus-cpp metrics are atomic; family lookups are locked).
#pragma once

#include <map>
#include <string>

#include "core/job_phase.h"
#include "core/resources.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace tessera::server {

class ServerMetrics {
 public:
  explicit ServerMetrics(prometheus::Registry* registry);

  void CycleSeconds(double seconds);
  // One attempt's wait for its gang's placement, in seconds (>= 0; a negative value, from a
  // clock set back, counts as 0).
  void PlacementLatency(double seconds);
  void Placed(int jobs);
  void Refused();
  void Submitted();
  void Finished(JobPhase phase);
  // Replaces the per-phase and per-reason gauges with these counts.
  void SetJobCounts(const std::map<JobPhase, int>& by_phase,
                    const std::map<std::string, int>& pending_by_reason);
  void SetResources(const Resources& capacity, const Resources& allocated);

 private:
  prometheus::Registry* const registry_;
  prometheus::Histogram* cycle_ = nullptr;
  prometheus::Histogram* placement_latency_ = nullptr;
  prometheus::Counter* placed_ = nullptr;
  prometheus::Counter* refused_ = nullptr;
  prometheus::Counter* submitted_ = nullptr;
  prometheus::Family<prometheus::Counter>* finished_ = nullptr;
  prometheus::Family<prometheus::Gauge>* jobs_ = nullptr;
  prometheus::Family<prometheus::Gauge>* pending_ = nullptr;
  prometheus::Family<prometheus::Gauge>* capacity_ = nullptr;
  prometheus::Family<prometheus::Gauge>* allocated_ = nullptr;
  std::map<std::string, prometheus::Gauge*> pending_reasons_;
};

}  // namespace tessera::server
