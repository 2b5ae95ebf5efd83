// CycleWrites: the job writes one turn of the scheduling loop decides, gathered into one store
// transaction (JobManager, job_manager.h "Durability").
//
// Each Add is one job's lifecycle step: the puts and deletes (never DeletePrefix) of its keys
// (record, tasks, events), the events to publish once stored, and a callback to run after the commit. Steps of
// the same job in one transaction are coalesced key by key: a key written twice keeps its last
// op (a put after a delete is a put, and the other way round), in the place of the first, so
// that a transaction never names a key twice (Txn's rule). The events and callbacks keep their
// order of Add.
//
// Bounds: Fits says whether a step still goes into the transaction under the store's TxnLimits
// (entries and total bytes, counted as if no key were coalesced). A step always fits an empty
// transaction (CheckStorable admitted every job for its largest step). When a step does not fit, the caller commits Take() first:
// the store commits transactions in order, so the writes of a job stay in decision order.
//
// Value type; thread-compatible (the job manager guards it with its mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "server/job_service.h"
#include "tessera/store/txn.h"

namespace tessera::server {

class CycleWrites {
 public:
  struct Batch {
    store::Txn txn;  // unconditional: every op in `success`
    // Each stored event with its job's tenant, in decision order (EventHub::Publish).
    std::vector<std::pair<JobEvent, std::string>> events;
    std::vector<std::function<void()>> done;  // in decision order; run after the commit
    int64_t steps = 0;  // the Adds it coalesces
  };

  explicit CycleWrites(store::TxnLimits limits) : limits_(limits) {}

  bool empty() const { return batch_.steps == 0; }
  // Whether a step of these ops fits the current transaction.
  bool Fits(const std::vector<store::Op>& ops) const;
  // Adds one step (see above). REQUIRES: Fits(ops).
  void Add(std::vector<store::Op> ops, std::string tenant, std::vector<JobEvent> events,
           std::function<void()> done);
  // The transaction gathered so far; the writes start again empty.
  Batch Take();

 private:
  static size_t Bytes(const std::vector<store::Op>& ops);

  store::TxnLimits limits_;
  Batch batch_;
  absl::flat_hash_map<std::string, size_t> op_index_;  // key → its op in batch_.txn.success
  size_t entries_ = 0;  // ops added, coalesced or not
  size_t bytes_ = 0;    // their keys and values
};

}  // namespace tessera::server
