#include "store/etcd/txn_batch.h"

#include <algorithm>

#include "store/etcd/etcd_messages.h"

namespace tessera::store::etcd {
namespace {

bool SameCompare(const Compare& a, const Compare& b) {
  return a.key == b.key && a.target == b.target && a.relation == b.relation &&
         a.number == b.number && a.value == b.value;
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

bool TxnBatch::Writes(const std::string& key) const {
  if (keys_.count(key) > 0) return true;
  return std::any_of(prefixes_.begin(), prefixes_.end(),
                     [&](const std::string& prefix) { return StartsWith(key, prefix); });
}

bool TxnBatch::Overlaps(const Op& op) const {
  if (op.type != Op::Type::kDeletePrefix) return Writes(op.key);
  auto first = keys_.lower_bound(op.key);
  if (first != keys_.end() && StartsWith(*first, op.key)) return true;
  return std::any_of(prefixes_.begin(), prefixes_.end(), [&](const std::string& prefix) {
    return StartsWith(op.key, prefix) || StartsWith(prefix, op.key);
  });
}

void TxnBatch::Note(const Op& op) {
  if (op.type == Op::Type::kDeletePrefix) {
    prefixes_.insert(op.key);
  } else {
    keys_.insert(op.key);
  }
}

bool TxnBatch::Add(const Txn& txn) {
  const bool first = ends_.empty();
  if (!first && (closed_ || !txn.failure.empty())) return false;
  std::vector<const Compare*> new_compares;
  size_t bytes = 0;
  for (const Compare& compare : txn.compares) {
    if (!first && Writes(compare.key)) return false;
    const auto same = [&](const Compare& c) { return SameCompare(c, compare); };
    if (std::none_of(merged_.compares.begin(), merged_.compares.end(), same)) {
      new_compares.push_back(&compare);
      bytes += compare.key.size() + compare.value.size();
    }
  }
  for (const Op& op : txn.success) {
    if (!first && Overlaps(op)) return false;
    bytes += op.key.size() + op.value.size();
  }
  const size_t entries = merged_.compares.size() + new_compares.size() + merged_.success.size() +
                         txn.success.size() + txn.failure.size();
  if (!first && (entries > limits_.max_entries || bytes_ + bytes > limits_.max_total_bytes)) {
    return false;
  }
  for (const Compare* compare : new_compares) merged_.compares.push_back(*compare);
  for (const Op& op : txn.success) {
    Note(op);
    merged_.success.push_back(op);
  }
  merged_.failure = txn.failure;  // empty unless this is the only transaction
  closed_ = !txn.failure.empty();
  bytes_ += bytes;
  ends_.push_back(merged_.success.size());
  return true;
}

std::vector<TxnResult> TxnBatch::Split(const etcdserverpb::TxnResponse& response) const {
  const Revision revision = FromEtcdRevision(response.header().revision());
  std::vector<TxnResult> results;
  size_t begin = 0;
  for (size_t end : ends_) {
    TxnResult result{.succeeded = true, .revision = revision};
    for (size_t i = begin; i < end && i < static_cast<size_t>(response.responses_size()); ++i) {
      const etcdserverpb::ResponseOp& op = response.responses(static_cast<int>(i));
      if (op.has_response_delete_range()) result.deleted += op.response_delete_range().deleted();
    }
    results.push_back(result);
    begin = end;
  }
  return results;
}

}  // namespace tessera::store::etcd
