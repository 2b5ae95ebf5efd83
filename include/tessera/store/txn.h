// Txn: an atomic, conditional batch of writes — the store's only way to change state.
//
// A transaction is `if (all compares hold) { success ops } else { failure ops }`, evaluated and
// applied atomically against the latest committed state: no other transaction's effects can
// fall between the compares and the ops. This is etcd's Txn and maps onto it one to one.
//
//   compares  each names a key, a target (version, create_revision, mod_revision or value), a
//             relation (==, !=, <, >) and an operand. A missing key has version,
//             create_revision and mod_revision 0; a compare on the *value* of a missing key is
//             always false (there is no value to compare). Helpers cover the usual cases:
//             Exists, Absent, ModRevisionIs, ValueIs.
//   ops       Put (create or overwrite), Delete (one key; no effect if missing) and
//             DeletePrefix (every key that starts with the prefix; the prefix must be
//             non-empty so that no typo wipes the store).
//
// A compare that does not hold is not an error: the failure branch runs and the result says
// succeeded == false. Errors (absl::Status) are reserved for transactions that cannot run at
// all — see Store::Commit for the codes.
//
// Within one branch a key may be put at most once and may not be both put and deleted
// (directly or through a delete-prefix); deletes may overlap. Violations are InvalidArgument,
// as in etcd. Backends also bound key, value and transaction sizes (TxnLimits below;
// InvalidArgument when exceeded). A caller that must never have a write refused — the job
// manager, the clusters behind agents — reads the bounds from Store::limits() and refuses
// oversized input up front, naming the field at fault.
//
// Plain value types; build them on any thread and hand them to a Store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/store/key_value.h"

namespace tessera::store {

struct Compare {
  enum class Target { kVersion, kCreateRevision, kModRevision, kValue };
  enum class Relation { kEqual, kNotEqual, kLess, kGreater };

  std::string key;
  Target target = Target::kVersion;
  Relation relation = Relation::kEqual;
  // The operand for the numeric targets.
  int64_t number = 0;
  // The operand for Target::kValue, compared bytewise.
  std::string value;

  // The key exists (version > 0).
  static Compare Exists(std::string key);
  // The key does not exist (version == 0): "create if absent".
  static Compare Absent(std::string key);
  // The key was last put at `revision` (0: the key is missing): optimistic concurrency.
  static Compare ModRevisionIs(std::string key, Revision revision);
  // The key exists and holds exactly `value`.
  static Compare ValueIs(std::string key, std::string value);
};

struct Op {
  enum class Type { kPut, kDelete, kDeletePrefix };

  Type type = Type::kPut;
  // The key for kPut and kDelete; the prefix for kDeletePrefix.
  std::string key;
  // The value for kPut; empty otherwise.
  std::string value;

  static Op Put(std::string key, std::string value);
  static Op Delete(std::string key);
  static Op DeletePrefix(std::string prefix);
};

struct Txn {
  std::vector<Compare> compares;
  std::vector<Op> success;
  std::vector<Op> failure;

  // A transaction that runs `ops` unconditionally.
  static Txn Unconditional(std::vector<Op> ops);
};

// The size bounds a backend enforces on one transaction (Store::limits()).
struct TxnLimits {
  size_t max_key_bytes = 4096;
  // etcd's default request limit, so that what one backend accepts the other does too.
  size_t max_value_bytes = 1536 * 1024;
  // Compares plus the ops of both branches.
  size_t max_entries = 10000;
  // Keys and values of the whole transaction together.
  size_t max_total_bytes = 64 * 1024 * 1024;
};

struct TxnResult {
  // Whether every compare held (and so the success branch ran).
  bool succeeded = false;
  // The revision of this transaction when its branch changed at least one key; otherwise the
  // store's current revision at the time it was evaluated (nothing new was written).
  Revision revision = 0;
  // How many keys the branch deleted (Delete and DeletePrefix together).
  int64_t deleted = 0;
};

}  // namespace tessera::store
