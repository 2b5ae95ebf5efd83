// EtcdElection against a real etcd started by the test (Debian's etcd-server): one leader at a
// time, in the order the candidates joined; a resigned or lost lease hands over; the fence of a
// deposed leader fails its writes.
#include "store/etcd/etcd_election.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "store/etcd/etcd_channel.h"
#include "store/etcd/etcd_store.h"
#include "store/etcd/testing/etcd_process.h"
#include "store/fenced_store.h"

namespace tessera::store::testing {
namespace {

using ::testing::HasSubstr;

class EtcdElectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<EtcdProcess>> etcd = EtcdProcess::Start();
    ASSERT_TRUE(etcd.ok()) << etcd.status();
    etcd_ = *std::move(etcd);
  }

  EtcdStoreOptions Etcd() const { return {.endpoints = {etcd_->endpoint()}}; }

  std::unique_ptr<EtcdElection> Candidate(std::string name, std::function<void()> lost = {}) {
    absl::StatusOr<std::unique_ptr<EtcdElection>> election =
        EtcdElection::Open(Etcd(), {.candidate = std::move(name),
                                    .lease_ttl = std::chrono::seconds(2),
                                    .lost = std::move(lost)});
    EXPECT_TRUE(election.ok()) << election.status();
    return election.ok() ? *std::move(election) : nullptr;
  }

  std::unique_ptr<EtcdProcess> etcd_;
};

TEST_F(EtcdElectionTest, TheFirstCandidateLeadsAndTheNextWaitsForItToResign) {
  std::unique_ptr<EtcdElection> a = Candidate("a");
  std::unique_ptr<EtcdElection> b = Candidate("b");
  ASSERT_TRUE(a && b);
  absl::StatusOr<Revision> a_term = a->Campaign(nullptr);
  ASSERT_TRUE(a_term.ok()) << a_term.status();

  absl::StatusOr<std::optional<Leadership>> leader = b->Leader();
  ASSERT_TRUE(leader.ok() && leader->has_value());
  EXPECT_EQ((*leader)->candidate, "a");
  EXPECT_EQ((*leader)->term, *a_term);

  std::atomic<bool> b_saw_a{false};
  std::future<absl::StatusOr<Revision>> b_term = std::async(std::launch::async, [&] {
    return b->Campaign(nullptr, [&](const std::optional<Leadership>& seen) {
      if (seen && seen->candidate == "a") b_saw_a = true;
    });
  });
  EXPECT_EQ(b_term.wait_for(std::chrono::milliseconds(1500)), std::future_status::timeout)
      << "b leads while a still does";
  ASSERT_TRUE(a->Resign().ok());
  absl::StatusOr<Revision> b_elected = b_term.get();
  ASSERT_TRUE(b_elected.ok()) << b_elected.status();
  EXPECT_GT(*b_elected, *a_term) << "terms grow";
  EXPECT_TRUE(b_saw_a);
  EXPECT_EQ((*b->Leader())->candidate, "b");
}

TEST_F(EtcdElectionTest, ADeposedLeadersFencedWritesFail) {
  absl::StatusOr<std::unique_ptr<EtcdStore>> store = EtcdStore::Open(Etcd());
  ASSERT_TRUE(store.ok()) << store.status();
  std::unique_ptr<EtcdElection> a = Candidate("a");
  std::unique_ptr<EtcdElection> b = Candidate("b");
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->Campaign(nullptr).ok());
  std::atomic<int> a_fenced{0};
  FencedStore a_store(store->get(), a->Fence(), [&] { ++a_fenced; });
  ASSERT_TRUE(a_store.Commit(Txn::Unconditional({Op::Put("/tessera/x", "a")})).ok());

  ASSERT_TRUE(a->Resign().ok());
  ASSERT_TRUE(b->Campaign(nullptr).ok());
  FencedStore b_store(store->get(), b->Fence(), nullptr);
  absl::StatusOr<TxnResult> late =
      a_store.Commit(Txn::Unconditional({Op::Put("/tessera/x", "late")}));
  EXPECT_TRUE(absl::IsFailedPrecondition(late.status())) << late.status();
  EXPECT_EQ(a_fenced, 1);
  ASSERT_TRUE(b_store.Commit(Txn::Unconditional({Op::Put("/tessera/y", "b")})).ok());
  EXPECT_EQ((*(*store)->Get("/tessera/x"))->value, "a");
}

TEST_F(EtcdElectionTest, ALeaseRevokedElsewhereIsLostAndTheNextCandidateLeads) {
  std::promise<void> lost;
  std::unique_ptr<EtcdElection> a = Candidate("a", [&] { lost.set_value(); });
  std::unique_ptr<EtcdElection> b = Candidate("b");
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->Campaign(nullptr).ok());

  // What an expiry does to a's key: etcd ends the lease behind a's back.
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = etcd::OpenEtcdChannel(Etcd());
  ASSERT_TRUE(channel.ok());
  std::unique_ptr<etcdserverpb::Lease::Stub> lease = etcdserverpb::Lease::NewStub(*channel);
  etcdserverpb::LeaseRevokeRequest revoke;
  revoke.set_id(std::stoll(a->key().substr(a->key().rfind('/') + 1), nullptr, 16));
  etcdserverpb::LeaseRevokeResponse revoked;
  grpc::ClientContext context;
  ASSERT_TRUE(lease->LeaseRevoke(&context, revoke, &revoked).ok());

  EXPECT_EQ(lost.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "a is told that its lease is gone";
  absl::StatusOr<Revision> b_term = b->Campaign(nullptr);
  ASSERT_TRUE(b_term.ok()) << b_term.status();
  EXPECT_TRUE(absl::IsUnavailable(a->Campaign(nullptr).status()));
}

TEST_F(EtcdElectionTest, ALeaderCutOffFromEtcdIsToldBeforeItsLeaseCanExpire) {
  std::promise<void> lost;
  std::unique_ptr<EtcdElection> a = Candidate("a", [&] { lost.set_value(); });
  ASSERT_TRUE(a && a->Campaign(nullptr).ok());
  etcd_->Kill();
  EXPECT_EQ(lost.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

TEST_F(EtcdElectionTest, ACampaignStopsWhenAsked) {
  std::unique_ptr<EtcdElection> a = Candidate("a");
  std::unique_ptr<EtcdElection> b = Candidate("b");
  ASSERT_TRUE(a && b && a->Campaign(nullptr).ok());
  std::atomic<bool> stop{false};
  std::future<absl::StatusOr<Revision>> campaign =
      std::async(std::launch::async, [&] { return b->Campaign([&] { return stop.load(); }); });
  stop = true;
  EXPECT_TRUE(absl::IsCancelled(campaign.get().status()));
}

TEST_F(EtcdElectionTest, BadOptionsNameTheField) {
  absl::StatusOr<std::unique_ptr<EtcdElection>> short_lease =
      EtcdElection::Open(Etcd(), {.lease_ttl = std::chrono::milliseconds(1500)});
  EXPECT_THAT(short_lease.status().message(), HasSubstr("leaseTtl"));
  EXPECT_THAT(EtcdElection::Open(Etcd(), {.prefix = ""}).status().message(), HasSubstr("prefix"));
  EXPECT_THAT(EtcdElection::Open({}, {}).status().message(), HasSubstr("etcd.endpoints"));
}

}  // namespace
}  // namespace tessera::store::testing
