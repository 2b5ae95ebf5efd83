// Checks shared by every store backend: is a transaction well-formed, and does a compare hold.
//
// ValidateTxn enforces the rules of txn.h (non-empty keys, no key put twice or both put and
// deleted in one branch) and the backend's size limits, returning InvalidArgument with the
// offending field path ("success[2].key: ...") so API callers see exactly what to fix.
// TxnLimits is defined with the transaction (tessera/store/txn.h).
// EvaluateCompare applies etcd's compare semantics to a key's current state.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "tessera/store/key_value.h"
#include "tessera/store/txn.h"

namespace tessera::store {

absl::Status ValidateTxn(const Txn& txn, const TxnLimits& limits);

// Whether `compare` holds for the key's current state (`current` == nullptr: missing key).
// REQUIRES: current == nullptr or current->key == compare.key.
bool EvaluateCompare(const Compare& compare, const KeyValue* current);

}  // namespace tessera::store
