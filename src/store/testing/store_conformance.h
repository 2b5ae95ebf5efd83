// The Store conformance suite: what every backend of tessera/store/store.h must do, written
// once against the interface so that the SQLite backend and a later etcd backend pass the very
// same tests (DESIGN.md §5).
//
// A backend's test binary compiles store_conformance.cc and instantiates the suite with a
// factory of test environments:
//
//   INSTANTIATE_TEST_SUITE_P(Sqlite, StoreConformanceTest,
//                            ::testing::Values(StoreBackend{"Sqlite", MakeSqliteEnvironment}),
//                            StoreBackendName);
//
// Every test gets a fresh environment (an empty store: a new temporary directory, a new etcd
// key prefix, ...) and may close and reopen the store through it; a reopened store must hold
// the same data. The crash test forks: Open must work in a child process (the suite closes the
// parent's store before forking, so no store thread is running at the fork), unless the
// backend says it cannot be (StoreBackend::usable_after_fork).
//
// Tests use real storage (real files, a real server), never mocks, and assert no timings; a
// few guard against hangs with generous deadlines.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tessera/store/store.h"

namespace tessera::store::testing {

// Opens stores over one test's data. Not thread-safe; used by one test.
class StoreTestEnvironment {
 public:
  virtual ~StoreTestEnvironment() = default;
  // Opens the store. Called again after the previous store was destroyed (a reopen), and in
  // a forked child process.
  virtual absl::StatusOr<std::unique_ptr<Store>> Open() = 0;
};

struct StoreBackend {
  std::string name;
  std::function<std::unique_ptr<StoreTestEnvironment>()> make_environment;
  // False for a client library that cannot be used in a forked child of a process that used
  // it (gRPC's: the etcd backend). The crash test, which kills a forked client, is then
  // skipped, and the backend's own tests must kill its server instead.
  bool usable_after_fork = true;
};

// For INSTANTIATE_TEST_SUITE_P: names the instantiation after the backend.
std::string StoreBackendName(const ::testing::TestParamInfo<StoreBackend>& info);

class StoreConformanceTest : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override;
  // Closes the store and opens it again over the same data.
  void Reopen();

  std::unique_ptr<StoreTestEnvironment> env_;
  std::unique_ptr<Store> store_;
};

}  // namespace tessera::store::testing
