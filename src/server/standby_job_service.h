// StandbyJobService: the JobService of a standby replica of a highly available control plane
// (docs/operations.md): the reads that the job records of a JobMirror answer, while the leader
// serves everything else.
//
// Get and List answer from the mirror exactly as the leader answers from its own records (the
// same visibility: a tenant sees its own jobs; the same filters, order and page tokens), as of
// the mirror's revision: a change the leader made shows once the standby's watch has brought
// it, usually within milliseconds; until the mirror has listed the store once they answer
// Unavailable ("still reading the jobs"). Events reads the job's stored events from the store, as the
// leader does. Every other call answers Unavailable ("a standby: ask the leader") — the REST
// server of a standby sends those requests to the leader before they reach a service — and
// Queues, Nodes and Clusters are empty. Ready() is false: a standby is never ready.
//
// Thread-safety: any number of threads at once. `mirror` and `store` outlive the service.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "server/job_mirror.h"
#include "server/job_service.h"
#include "tessera/store/store.h"

namespace tessera::server {

class StandbyJobService final : public JobService {
 public:
  StandbyJobService(const JobMirror* mirror, store::Store* store);

  absl::StatusOr<JobView> Get(const Caller& caller, std::string_view id) override;
  absl::StatusOr<ListJobsResult> List(const Caller& caller,
                                      const ListJobsRequest& request) override;
  absl::StatusOr<std::vector<JobEvent>> Events(const Caller& caller, std::string_view id) override;

  absl::StatusOr<SubmitResult> Submit(const Caller& caller, spec::JobDocument job) override;
  absl::StatusOr<SubmitBatchResult> SubmitBatch(const Caller& caller,
                                                std::vector<spec::JobDocument> jobs) override;
  absl::StatusOr<JobView> Cancel(const Caller& caller, std::string_view id) override;
  absl::StatusOr<JobExplanation> Explain(const Caller& caller, std::string_view id) override;
  absl::StatusOr<LogChunk> Logs(const Caller& caller, std::string_view id,
                                const LogRequest& request) override;
  absl::StatusOr<std::unique_ptr<EventStream>> Watch(const Caller& caller,
                                                     const WatchRequest& request) override;
  std::vector<QueueView> Queues() override { return {}; }
  absl::StatusOr<std::vector<QueueView>> ApplyQueues(const Caller& caller,
                                                     std::vector<QueueSpec> queues) override;
  absl::StatusOr<QueueView> ApplyQueue(const Caller& caller, QueueSpec queue) override;
  absl::Status DeleteQueue(const Caller& caller, std::string_view name) override;
  std::vector<NodeView> Nodes() override { return {}; }
  absl::StatusOr<NodeView> ChangeNode(const Caller& caller, const NodeChange& change) override;
  std::vector<ClusterView> Clusters() override { return {}; }
  absl::Status DeleteCluster(const Caller& caller, std::string_view name) override;
  bool Ready() const override { return false; }

 private:
  const JobMirror* const mirror_;
  store::Store* const store_;
};

}  // namespace tessera::server
