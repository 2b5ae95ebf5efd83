// EtcdStore against a real etcd started by the test (Debian's etcd-server): the store
// conformance suite, one fresh etcd per test, and what is particular to etcd.
#include "store/etcd/etcd_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "store/etcd/testing/etcd_process.h"
#include "store/testing/store_conformance.h"

namespace tessera::store::testing {
namespace {

using ::testing::HasSubstr;

class EtcdEnvironment final : public StoreTestEnvironment {
 public:
  absl::StatusOr<std::unique_ptr<Store>> Open() override {
    if (etcd_ == nullptr) {
      absl::StatusOr<std::unique_ptr<EtcdProcess>> etcd = EtcdProcess::Start();
      if (!etcd.ok()) return etcd.status();
      etcd_ = *std::move(etcd);
    }
    absl::StatusOr<std::unique_ptr<EtcdStore>> store =
        EtcdStore::Open({.endpoints = {etcd_->endpoint()}});
    if (!store.ok()) return store.status();
    return std::unique_ptr<Store>(*std::move(store));
  }

 private:
  std::unique_ptr<EtcdProcess> etcd_;
};

INSTANTIATE_TEST_SUITE_P(Etcd, StoreConformanceTest,
                         ::testing::Values(StoreBackend{
                             .name = "Etcd",
                             .make_environment = [] { return std::make_unique<EtcdEnvironment>(); },
                             .usable_after_fork = false}),
                         StoreBackendName);

TEST(EtcdStoreTest, AnEndpointNobodyServesIsUnavailable) {
  absl::StatusOr<std::unique_ptr<EtcdStore>> store = EtcdStore::Open(
      {.endpoints = {"127.0.0.1:1"}, .request_timeout = std::chrono::milliseconds(300)});
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(absl::IsUnavailable(store.status())) << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr("127.0.0.1:1"));
}

TEST(EtcdStoreTest, BadOptionsNameTheField) {
  EXPECT_THAT(EtcdStore::Open({}).status().message(), HasSubstr("etcd.endpoints"));
  EXPECT_THAT(
      EtcdStore::Open({.endpoints = {"127.0.0.1:1"}, .key_file = "k.pem"}).status().message(),
      HasSubstr("etcd.keyFile"));
  EXPECT_THAT(EtcdStore::Open({.endpoints = {"127.0.0.1:1"}, .ca_file = "/nonexistent.pem"})
                  .status()
                  .message(),
              HasSubstr("etcd.caFile"));
}

class EtcdMutualTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<EtcdProcess>> etcd = EtcdProcess::Start(1, /*mutual_tls=*/true);
    ASSERT_TRUE(etcd.ok()) << etcd.status();
    etcd_ = *std::move(etcd);
  }

  // The client's options with a short timeout, for the attempts that must fail.
  EtcdStoreOptions Options() const {
    EtcdStoreOptions options = etcd_->ClientOptions();
    options.request_timeout = std::chrono::milliseconds(1500);
    return options;
  }

  std::unique_ptr<EtcdProcess> etcd_;
};

TEST_F(EtcdMutualTlsTest, AClientWithItsCertificateCommitsAndReads) {
  absl::StatusOr<std::unique_ptr<EtcdStore>> store = EtcdStore::Open(etcd_->ClientOptions());
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Commit(Txn::Unconditional({Op::Put("/tls/k", "v")})).ok());
  absl::StatusOr<std::optional<KeyValue>> read = (*store)->Get("/tls/k");
  ASSERT_TRUE(read.ok() && read->has_value()) << read.status();
  EXPECT_EQ((*read)->value, "v");
}

TEST_F(EtcdMutualTlsTest, WithoutAClientCertificateTheConnectionIsRefused) {
  EtcdStoreOptions options = Options();
  options.cert_file.clear();
  options.key_file.clear();
  absl::StatusOr<std::unique_ptr<EtcdStore>> store = EtcdStore::Open(options);
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(absl::IsUnavailable(store.status())) << store.status();
}

TEST_F(EtcdMutualTlsTest, PlaintextOrAnotherCaIsRefused) {
  EtcdStoreOptions plaintext = Options();
  plaintext.ca_file.clear();
  plaintext.cert_file.clear();
  plaintext.key_file.clear();
  EXPECT_TRUE(absl::IsUnavailable(EtcdStore::Open(plaintext).status()));
  // The client's own certificate as the only trusted root: the server's is not signed by it.
  EtcdStoreOptions other_ca = Options();
  other_ca.ca_file = etcd_->pki_dir() + "/client.crt";
  EXPECT_TRUE(absl::IsUnavailable(EtcdStore::Open(other_ca).status()));
}

TEST(EtcdStoreTest, MoreOperationsThanEtcdTakesAreRefusedBeforeSending) {
  absl::StatusOr<std::unique_ptr<EtcdProcess>> etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  absl::StatusOr<std::unique_ptr<EtcdStore>> store =
      EtcdStore::Open({.endpoints = {(*etcd)->endpoint()}});
  ASSERT_TRUE(store.ok()) << store.status();
  std::vector<Op> ops;
  for (int i = 0; i < 129; ++i) ops.push_back(Op::Put("/k/" + std::to_string(i), "v"));
  absl::StatusOr<TxnResult> result = (*store)->Commit(Txn::Unconditional(std::move(ops)));
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(result.status())) << result.status();
  // 128, etcd's default --max-txn-ops, are taken.
  std::vector<Op> fits;
  for (int i = 0; i < 128; ++i) fits.push_back(Op::Put("/k/" + std::to_string(i), "v"));
  EXPECT_TRUE((*store)->Commit(Txn::Unconditional(std::move(fits))).ok());
}

// The crash that matters for etcd is the server's: writers commit until etcd is killed
// (SIGKILL) under them; once it is back on the same data, every acknowledged write is there
// with the revision it was acknowledged at, and the store takes writes at the next revision.
TEST(EtcdStoreTest, AServerCrashLosesNoAcknowledgedWrite) {
  constexpr int kWriters = 4;
  constexpr int kAcksBeforeKill = 300;
  absl::StatusOr<std::unique_ptr<EtcdProcess>> etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  absl::StatusOr<std::unique_ptr<EtcdStore>> store = EtcdStore::Open(
      {.endpoints = {(*etcd)->endpoint()}, .request_timeout = std::chrono::milliseconds(2000)});
  ASSERT_TRUE(store.ok()) << store.status();
  std::mutex mu;
  std::map<std::string, Revision> acknowledged;
  std::atomic<bool> stop = false;
  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; !stop; ++i) {
        const std::string key = "/crash/" + std::to_string(t) + "/" + std::to_string(i);
        absl::StatusOr<TxnResult> put = (*store)->Commit(Txn::Unconditional({Op::Put(key, "v")}));
        if (!put.ok()) continue;  // etcd is down: the outcome is unknown, nothing is claimed
        std::lock_guard<std::mutex> lock(mu);
        acknowledged[key] = put->revision;
      }
    });
  }
  auto acks = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return acknowledged.size();
  };
  while (acks() < static_cast<size_t>(kAcksBeforeKill)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  (*etcd)->Kill();  // mid-stream: the writers are still committing
  stop = true;
  for (std::thread& writer : writers) writer.join();
  ASSERT_TRUE((*etcd)->Restart().ok());

  absl::StatusOr<std::unique_ptr<EtcdStore>> reopened =
      EtcdStore::Open({.endpoints = {(*etcd)->endpoint()}});
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  Revision highest = 0;
  for (const auto& [key, revision] : acknowledged) {
    absl::StatusOr<std::optional<KeyValue>> kv = (*reopened)->Get(key);
    ASSERT_TRUE(kv.ok()) << kv.status();
    ASSERT_TRUE(kv->has_value()) << "acknowledged " << key << " at " << revision << " is lost";
    EXPECT_EQ((*kv)->mod_revision, revision) << key;
    highest = std::max(highest, revision);
  }
  absl::StatusOr<RangeResult> all = (*reopened)->Range({.limit = 1});
  ASSERT_TRUE(all.ok());
  EXPECT_GE(all->revision, highest);
  absl::StatusOr<TxnResult> after =
      (*reopened)->Commit(Txn::Unconditional({Op::Put("/after-crash", "v")}));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->revision, all->revision + 1);
}

// Three members keep a quorum when one fails: a store given every endpoint goes on committing
// through another member (a Commit in the failover may answer Unavailable; it is retried), and
// the member that comes back has every write.
TEST(EtcdStoreTest, AClusterOfThreeKeepsServingWhenAMemberFails) {
  absl::StatusOr<std::unique_ptr<EtcdProcess>> etcd = EtcdProcess::Start(3);
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  absl::StatusOr<std::unique_ptr<EtcdStore>> store = EtcdStore::Open(
      {.endpoints = (*etcd)->endpoints(), .request_timeout = std::chrono::milliseconds(2000)});
  ASSERT_TRUE(store.ok()) << store.status();
  auto put = [&](int i) -> Revision {
    const std::string key = "/three/" + std::to_string(1000 + i);
    for (int attempt = 0; attempt < 30; ++attempt) {
      absl::StatusOr<TxnResult> result =
          (*store)->Commit(Txn{.compares = {Compare::Absent(key)}, .success = {Op::Put(key, "v")}});
      if (result.ok() && result->succeeded) return result->revision;
      if (result.ok()) return result->revision;  // an earlier try committed it
      EXPECT_TRUE(absl::IsUnavailable(result.status())) << result.status();
    }
    ADD_FAILURE() << "no member took " << key;
    return 0;
  };
  for (int i = 0; i < 50; ++i) put(i);
  (*etcd)->Kill(0);
  for (int i = 50; i < 100; ++i) put(i);
  absl::StatusOr<RangeResult> all = (*store)->Range({.prefix = "/three/"});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->kvs.size(), 100u);

  ASSERT_TRUE((*etcd)->Restart(0).ok());
  absl::StatusOr<std::unique_ptr<EtcdStore>> back =
      EtcdStore::Open({.endpoints = {(*etcd)->endpoint()}});
  ASSERT_TRUE(back.ok()) << back.status();
  absl::StatusOr<RangeResult> seen = (*back)->Range({.prefix = "/three/"});
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(seen->kvs.size(), 100u);
  EXPECT_EQ(seen->revision, all->revision);
}

}  // namespace
}  // namespace tessera::store::testing
