#include "store/txn_validation.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "store/key_range.h"

namespace tessera::store {
namespace {

absl::Status CheckKey(const std::string& key, const std::string& path, const TxnLimits& limits) {
  if (key.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": must not be empty"));
  if (key.size() > limits.max_key_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", key.size(), " bytes exceed the limit of ", limits.max_key_bytes));
  }
  return absl::OkStatus();
}

absl::Status CheckOp(const Op& op, const std::string& path, const TxnLimits& limits) {
  if (absl::Status s = CheckKey(op.key, absl::StrCat(path, ".key"), limits); !s.ok()) return s;
  if (op.value.size() > limits.max_value_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ".value: ", op.value.size(), " bytes exceed the limit of ", limits.max_value_bytes));
  }
  if (op.type != Op::Type::kPut && !op.value.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".value: only a put carries a value"));
  }
  return absl::OkStatus();
}

// A key may be put once per branch, and not deleted in the same branch.
absl::Status CheckBranchKeys(const std::vector<Op>& ops, const std::string& branch) {
  absl::flat_hash_set<std::string_view> puts;
  absl::flat_hash_set<std::string_view> deletes;
  std::vector<std::string_view> delete_prefixes;
  for (const Op& op : ops) {
    if (op.type == Op::Type::kDelete) deletes.insert(op.key);
    if (op.type == Op::Type::kDeletePrefix) delete_prefixes.push_back(op.key);
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].type != Op::Type::kPut) continue;
    const std::string& key = ops[i].key;
    std::string path = absl::StrCat(branch, "[", i, "].key");
    if (!puts.insert(key).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": \"", key, "\" is put more than once in one branch"));
    }
    bool deleted = deletes.contains(key);
    for (std::string_view prefix : delete_prefixes) deleted = deleted || HasPrefix(key, prefix);
    if (deleted) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": \"", key, "\" is both put and deleted in one branch"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBranch(const std::vector<Op>& ops, const std::string& branch,
                         const TxnLimits& limits, size_t& total_bytes) {
  for (size_t i = 0; i < ops.size(); ++i) {
    if (absl::Status s = CheckOp(ops[i], absl::StrCat(branch, "[", i, "]"), limits); !s.ok()) {
      return s;
    }
    total_bytes += ops[i].key.size() + ops[i].value.size();
  }
  return CheckBranchKeys(ops, branch);
}

template <typename T>
bool Holds(Compare::Relation relation, const T& actual, const T& operand) {
  switch (relation) {
    case Compare::Relation::kEqual:
      return actual == operand;
    case Compare::Relation::kNotEqual:
      return actual != operand;
    case Compare::Relation::kLess:
      return actual < operand;
    case Compare::Relation::kGreater:
      return actual > operand;
  }
  return false;
}

}  // namespace

absl::Status ValidateTxn(const Txn& txn, const TxnLimits& limits) {
  size_t entries = txn.compares.size() + txn.success.size() + txn.failure.size();
  if (entries > limits.max_entries) {
    return absl::InvalidArgumentError(absl::StrCat(
        "txn: ", entries, " compares and ops exceed the limit of ", limits.max_entries));
  }
  size_t total_bytes = 0;
  for (size_t i = 0; i < txn.compares.size(); ++i) {
    const Compare& compare = txn.compares[i];
    std::string path = absl::StrCat("compares[", i, "]");
    if (absl::Status s = CheckKey(compare.key, path + ".key", limits); !s.ok()) return s;
    if (compare.value.size() > limits.max_value_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".value: ", compare.value.size(),
                                                     " bytes exceed the limit of ",
                                                     limits.max_value_bytes));
    }
    total_bytes += compare.key.size() + compare.value.size();
  }
  if (absl::Status s = CheckBranch(txn.success, "success", limits, total_bytes); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckBranch(txn.failure, "failure", limits, total_bytes); !s.ok()) {
    return s;
  }
  if (total_bytes > limits.max_total_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("txn: ", total_bytes,
                                                   " bytes of keys and values exceed the limit of ",
                                                   limits.max_total_bytes));
  }
  return absl::OkStatus();
}

bool EvaluateCompare(const Compare& compare, const KeyValue* current) {
  static const KeyValue kMissing;
  const KeyValue& kv = current != nullptr ? *current : kMissing;
  switch (compare.target) {
    case Compare::Target::kVersion:
      return Holds(compare.relation, kv.version, compare.number);
    case Compare::Target::kCreateRevision:
      return Holds(compare.relation, kv.create_revision, compare.number);
    case Compare::Target::kModRevision:
      return Holds(compare.relation, kv.mod_revision, compare.number);
    case Compare::Target::kValue:
      // A missing key has no value to compare: the compare fails whatever the relation.
      return current != nullptr &&
             Holds(compare.relation, std::string_view(kv.value), std::string_view(compare.value));
  }
  return false;
}

}  // namespace tessera::store
