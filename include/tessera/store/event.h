// Event: one change of one key, as delivered to watchers.
//
// Each key a committed transaction changes yields one event; the events of one transaction
// share its revision and come in the order the transaction's operations ran (a delete-prefix
// yields its keys in key order). Watchers receive events in revision order, each exactly once.
//
// For a put, `kv` is the key as it stands after the put (value, create_revision, mod_revision
// == revision, version). For a delete, `kv` carries only the key and mod_revision == the
// revision of the deleting transaction; value is empty and create_revision and version are 0,
// as etcd reports deletions.
//
// Plain value type.
#pragma once

#include "tessera/store/key_value.h"

namespace tessera::store {

struct Event {
  enum class Type { kPut, kDelete };

  Type type = Type::kPut;
  KeyValue kv;

  // The revision of the transaction that made this change.
  Revision revision() const { return kv.mod_revision; }

  friend bool operator==(const Event&, const Event&) = default;
};

}  // namespace tessera::store
