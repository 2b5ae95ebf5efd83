// Checks shared by every store backend: is a transaction well-formed, and does a compare hold.
//
// ValidateTxn enforces the rules of txn.h (non-empty keys, no key put twice or both put and
// deleted in one branch) and the backend's size limits, returning InvalidArgument with the
// offending field path ("success[2].key: ...") so API callers see exactly what to fix.
// EvaluateCompare applies etcd's compare semantics to a key's current state.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "tessera/store/key_value.h"
#include "tessera/store/txn.h"

namespace tessera::store {

struct TxnLimits {
  size_t max_key_bytes = 4096;
  // etcd's default request limit, so that what one backend accepts the other does too.
  size_t max_value_bytes = 1536 * 1024;
  // Compares plus the ops of both branches.
  size_t max_entries = 10000;
  // Keys and values of the whole transaction together.
  size_t max_total_bytes = 64 * 1024 * 1024;
};

absl::Status ValidateTxn(const Txn& txn, const TxnLimits& limits);

// Whether `compare` holds for the key's current state (`current` == nullptr: missing key).
// REQUIRES: current == nullptr or current->key == compare.key.
bool EvaluateCompare(const Compare& compare, const KeyValue* current);

}  // namespace tessera::store
