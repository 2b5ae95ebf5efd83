// KeyValue: one key of the state store with its revision bookkeeping.
//
// The store is a revisioned key-value map in the manner of etcd. Keys are byte strings,
// conventionally slash-separated paths ("/jobs/<id>", "/nodes/<cluster>/<name>"), ordered
// bytewise. Values are opaque bytes (std::string). Every transaction that changes at least one
// key advances the store's single global revision by one; the keys it changes record:
//   create_revision  the revision of the transaction that created the key (put on a missing
//                    key); a key deleted and put again gets a new create_revision;
//   mod_revision     the revision of the transaction that last put it;
//   version          how many times it has been put since its creation (1 after creation).
// Revisions start at 1; 0 means "never" (a missing key has version 0, create_revision 0 and
// mod_revision 0, which is what compares against a missing key see).
//
// Plain value type: no thread-safety concerns beyond those of std::string.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::store {

// A revision of the store: 1, 2, 3, ... for the transactions that changed something.
using Revision = int64_t;

struct KeyValue {
  std::string key;
  std::string value;
  Revision create_revision = 0;
  Revision mod_revision = 0;
  int64_t version = 0;

  friend bool operator==(const KeyValue&, const KeyValue&) = default;
};

}  // namespace tessera::store
