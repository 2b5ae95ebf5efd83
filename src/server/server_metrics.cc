#include "server/server_metrics.h"

#include <algorithm>

namespace tessera::server {
namespace {

void SetResourceGauges(prometheus::Family<prometheus::Gauge>& family, const Resources& r) {
  family.Add({{"resource", "cpu"}}).Set(static_cast<double>(r.cpu) / 1000.0);
  family.Add({{"resource", "memory"}}).Set(static_cast<double>(r.memory));
  family.Add({{"resource", "gpu"}}).Set(static_cast<double>(r.gpu) / 1000.0);
}

}  // namespace

ServerMetrics::ServerMetrics(prometheus::Registry* registry) : registry_(registry) {
  if (registry_ == nullptr) return;
  cycle_ = &prometheus::BuildHistogram()
                .Name("tessera_scheduling_cycle_seconds")
                .Help("Wall time of one scheduling cycle")
                .Register(*registry_)
                .Add({}, prometheus::Histogram::BucketBoundaries{0.0001, 0.0005, 0.001, 0.005, 0.01,
                                                                 0.05, 0.1, 0.5, 1, 5});
  // Fine enough below 100 ms to read a p99 against an aim of 50 ms, up to a job that waited
  // for capacity.
  placement_latency_ =
      &prometheus::BuildHistogram()
           .Name("tessera_job_placement_latency_seconds")
           .Help(
               "Time from a job's submission (a requeued attempt: its requeue) to the "
               "placement of its gang, once per attempt")
           .Register(*registry_)
           .Add({}, prometheus::Histogram::BucketBoundaries{0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
                                                            0.1, 0.2, 0.5, 1, 2, 5, 10, 30});
  auto& decisions = prometheus::BuildCounter()
                        .Name("tessera_scheduling_decisions_total")
                        .Help("Scheduling decisions: jobs placed or refused")
                        .Register(*registry_);
  placed_ = &decisions.Add({{"result", "placed"}});
  refused_ = &decisions.Add({{"result", "refused"}});
  submitted_ = &prometheus::BuildCounter()
                    .Name("tessera_jobs_submitted_total")
                    .Help("Jobs accepted")
                    .Register(*registry_)
                    .Add({});
  finished_ = &prometheus::BuildCounter()
                   .Name("tessera_jobs_finished_total")
                   .Help("Jobs that reached a terminal phase")
                   .Register(*registry_);
  jobs_ = &prometheus::BuildGauge().Name("tessera_jobs").Help("Jobs per phase").Register(*registry_);
  pending_ = &prometheus::BuildGauge()
                  .Name("tessera_pending_jobs")
                  .Help("Pending jobs per reason code")
                  .Register(*registry_);
  capacity_ = &prometheus::BuildGauge()
                   .Name("tessera_resource_capacity")
                   .Help("Allocatable capacity of ready nodes (cpu in cores, memory in bytes, "
                         "gpu in GPUs)")
                   .Register(*registry_);
  allocated_ = &prometheus::BuildGauge()
                    .Name("tessera_resource_allocated")
                    .Help("Resources held by placed tasks (cpu in cores, memory in bytes, gpu in "
                          "GPUs)")
                    .Register(*registry_);
}

void ServerMetrics::CycleSeconds(double seconds) {
  if (cycle_ != nullptr) cycle_->Observe(seconds);
}
void ServerMetrics::PlacementLatency(double seconds) {
  if (placement_latency_ != nullptr) placement_latency_->Observe(std::max(seconds, 0.0));
}
void ServerMetrics::Placed(int jobs) {
  if (placed_ != nullptr) placed_->Increment(jobs);
}
void ServerMetrics::Refused() {
  if (refused_ != nullptr) refused_->Increment();
}
void ServerMetrics::Submitted() {
  if (submitted_ != nullptr) submitted_->Increment();
}
void ServerMetrics::Finished(JobPhase phase) {
  if (finished_ != nullptr) finished_->Add({{"phase", std::string(JobPhaseName(phase))}}).Increment();
}

void ServerMetrics::SetJobCounts(const std::map<JobPhase, int>& by_phase,
                                 const std::map<std::string, int>& pending_by_reason) {
  if (registry_ == nullptr) return;
  for (JobPhase phase : {JobPhase::kPending, JobPhase::kAdmitted, JobPhase::kRunning,
                         JobPhase::kSucceeded, JobPhase::kFailed, JobPhase::kCancelled}) {
    const auto it = by_phase.find(phase);
    jobs_->Add({{"phase", std::string(JobPhaseName(phase))}})
        .Set(it == by_phase.end() ? 0 : it->second);
  }
  for (auto& [reason, gauge] : pending_reasons_) gauge->Set(0);
  for (const auto& [reason, count] : pending_by_reason) {
    prometheus::Gauge*& gauge = pending_reasons_[reason];
    if (gauge == nullptr) gauge = &pending_->Add({{"reason", reason}});
    gauge->Set(count);
  }
}

void ServerMetrics::SetResources(const Resources& capacity, const Resources& allocated) {
  if (registry_ == nullptr) return;
  SetResourceGauges(*capacity_, capacity);
  SetResourceGauges(*allocated_, allocated);
}

}  // namespace tessera::server
