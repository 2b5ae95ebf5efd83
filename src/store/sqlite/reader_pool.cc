#include "store/sqlite/reader_pool.h"

#include "tessera/common/status_macros.h"

namespace tessera::store::sqlite {

absl::StatusOr<std::unique_ptr<Connection>> ReaderPool::Acquire() {
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Connection> connection = std::move(idle_.back());
      idle_.pop_back();
      return connection;
    }
  }
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Connection> connection,
                           Connection::Open(path_, /*create=*/false));
  TESSERA_RETURN_IF_ERROR(connection->Exec("PRAGMA query_only = 1; PRAGMA busy_timeout = 5000"));
  return connection;
}

void ReaderPool::Release(std::unique_ptr<Connection> connection) {
  absl::MutexLock lock(&mu_);
  if (idle_.size() < max_idle_) idle_.push_back(std::move(connection));
  // Otherwise the surplus connection closes here.
}

}  // namespace tessera::store::sqlite
