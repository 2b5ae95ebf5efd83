#include "server/cycle_writes.h"

namespace tessera::server {

size_t CycleWrites::Bytes(const std::vector<store::Op>& ops) {
  size_t bytes = 0;
  for (const store::Op& op : ops) bytes += op.key.size() + op.value.size();
  return bytes;
}

bool CycleWrites::Fits(const std::vector<store::Op>& ops) const {
  if (empty()) return true;
  return entries_ + ops.size() <= limits_.max_entries &&
         bytes_ + Bytes(ops) <= limits_.max_total_bytes;
}

void CycleWrites::Add(std::vector<store::Op> ops, std::string tenant, std::vector<JobEvent> events,
                      std::function<void()> done) {
  entries_ += ops.size();
  bytes_ += Bytes(ops);
  std::vector<store::Op>& txn_ops = batch_.txn.success;
  for (store::Op& op : ops) {
    auto [it, added] = op_index_.try_emplace(op.key, txn_ops.size());
    if (added) {
      txn_ops.push_back(std::move(op));
    } else {
      txn_ops[it->second] = std::move(op);
    }
  }
  for (JobEvent& event : events) batch_.events.emplace_back(std::move(event), tenant);
  if (done) batch_.done.push_back(std::move(done));
  ++batch_.steps;
}

CycleWrites::Batch CycleWrites::Take() {
  Batch taken = std::move(batch_);
  batch_ = Batch{};
  op_index_.clear();
  entries_ = 0;
  bytes_ = 0;
  return taken;
}

}  // namespace tessera::server
