#include "tessera/store/txn.h"

#include <utility>

namespace tessera::store {

Compare Compare::Exists(std::string key) {
  return {.key = std::move(key), .target = Target::kVersion, .relation = Relation::kGreater};
}

Compare Compare::Absent(std::string key) {
  return {.key = std::move(key), .target = Target::kVersion, .relation = Relation::kEqual};
}

Compare Compare::ModRevisionIs(std::string key, Revision revision) {
  return {.key = std::move(key),
          .target = Target::kModRevision,
          .relation = Relation::kEqual,
          .number = revision};
}

Compare Compare::ValueIs(std::string key, std::string value) {
  return {.key = std::move(key),
          .target = Target::kValue,
          .relation = Relation::kEqual,
          .value = std::move(value)};
}

Op Op::Put(std::string key, std::string value) {
  return {.type = Type::kPut, .key = std::move(key), .value = std::move(value)};
}

Op Op::Delete(std::string key) { return {.type = Type::kDelete, .key = std::move(key)}; }

Op Op::DeletePrefix(std::string prefix) {
  return {.type = Type::kDeletePrefix, .key = std::move(prefix)};
}

Txn Txn::Unconditional(std::vector<Op> ops) { return {.success = std::move(ops)}; }

}  // namespace tessera::store
