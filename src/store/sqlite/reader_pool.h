// ReaderPool: lends read-only SQLite connections to the threads that read the store.
//
// WAL mode lets any number of readers run beside the one writer, each seeing the last commit
// as of its read transaction's start. A connection is lent to one thread at a time and
// returned after the read; up to `max_idle` are kept open for reuse, and more are opened when
// more threads read at once. Thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "store/sqlite/sqlite_connection.h"

namespace tessera::store::sqlite {

class ReaderPool {
 public:
  ReaderPool(std::string path, size_t max_idle) : path_(std::move(path)), max_idle_(max_idle) {}

  // Runs `read(Connection&)`, which returns an absl::StatusOr<T> or absl::Status, on a lent
  // connection.
  template <typename Read>
  auto With(Read&& read) -> decltype(read(std::declval<Connection&>())) {
    absl::StatusOr<std::unique_ptr<Connection>> connection = Acquire();
    if (!connection.ok()) return connection.status();
    auto result = read(**connection);
    Release(std::move(*connection));
    return result;
  }

 private:
  absl::StatusOr<std::unique_ptr<Connection>> Acquire();
  void Release(std::unique_ptr<Connection> connection);

  const std::string path_;
  const size_t max_idle_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tessera::store::sqlite
