#include "server/auth/authenticator.h"

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "store/sqlite/sqlite_store.h"

namespace tessera::server {
namespace {

class AuthenticatorTest : public ::testing::Test {
 protected:
  AuthenticatorTest() {
    std::string pattern = std::filesystem::temp_directory_path() / "tessera-auth-XXXXXX";
    dir_ = mkdtemp(pattern.data());
    Reopen();
  }
  ~AuthenticatorTest() override {
    auth_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Closes the store and the authenticator and opens them again: a restart.
  void Reopen() {
    auth_.reset();
    store_.reset();
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> store =
        store::SqliteStore::Open({.data_dir = dir_});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    absl::StatusOr<std::unique_ptr<Authenticator>> auth = Authenticator::Create(store_.get());
    ASSERT_TRUE(auth.ok()) << auth.status();
    auth_ = *std::move(auth);
  }

  std::string dir_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<Authenticator> auth_;
};

TEST_F(AuthenticatorTest, IssuedTokenAuthenticatesAsItsTenantAndRole) {
  absl::StatusOr<IssuedToken> tenant = auth_->IssueToken("team-a", Role::kTenant);
  absl::StatusOr<IssuedToken> admin = auth_->IssueToken("ops", Role::kAdmin);
  ASSERT_TRUE(tenant.ok() && admin.ok());
  EXPECT_EQ(tenant->token.size(), 68);
  EXPECT_TRUE(tenant->token.starts_with("tsr_"));
  EXPECT_NE(tenant->token, admin->token);

  absl::StatusOr<Caller> caller = auth_->Authenticate(tenant->token);
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->tenant, "team-a");
  EXPECT_FALSE(caller->admin);
  caller = auth_->Authenticate(admin->token);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->tenant, "ops");
  EXPECT_TRUE(caller->admin);
}

TEST_F(AuthenticatorTest, StoreKeepsOnlyTheHash) {
  absl::StatusOr<IssuedToken> issued = auth_->IssueToken("team-a", Role::kTenant);
  ASSERT_TRUE(issued.ok());
  absl::StatusOr<store::RangeResult> range = store_->Range({.prefix = "/tessera/tokens/"});
  ASSERT_TRUE(range.ok());
  ASSERT_EQ(range->kvs.size(), 1);
  const store::KeyValue& kv = range->kvs[0];
  EXPECT_EQ(kv.key.size(), std::string("/tessera/tokens/").size() + 64);
  EXPECT_EQ(kv.key.find(issued->token.substr(4)), std::string::npos);
  EXPECT_EQ(kv.value, R"({"role":"tenant","tenant":"team-a"})");
}

TEST_F(AuthenticatorTest, BadTokensAreUnauthenticated) {
  ASSERT_TRUE(auth_->IssueToken("team-a", Role::kTenant).ok());
  const std::string unknown = "tsr_" + std::string(64, 'a');
  for (const std::string& token : {std::string(), std::string("Bearer x"), std::string("tsr_"),
                                   unknown, "tsr_" + std::string(64, 'A'),
                                   "xyz_" + std::string(64, 'a'), "tsr_" + std::string(65, 'a')}) {
    EXPECT_EQ(auth_->Authenticate(token).status().code(), absl::StatusCode::kUnauthenticated)
        << token;
  }
}

TEST_F(AuthenticatorTest, TenantNamesAreChecked) {
  for (const char* bad : {"", "Team", "-a", ".a", "a b", "a/b", "ä"}) {
    EXPECT_EQ(auth_->IssueToken(bad, Role::kTenant).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(auth_->IssueToken(std::string(64, 'a'), Role::kTenant).status().code(),
            absl::StatusCode::kInvalidArgument);
  for (const std::string& good :
       {std::string("a"), std::string("0.team_a-b"), std::string(63, 'z')}) {
    EXPECT_TRUE(auth_->IssueToken(good, Role::kTenant).ok()) << good;
  }
  // Administrators' jobs belong to kAdminTenant: no tenant token may stand for it.
  EXPECT_EQ(auth_->IssueToken(kAdminTenant, Role::kTenant).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(auth_->IssueToken(kAdminTenant, Role::kAdmin).ok());
}

TEST_F(AuthenticatorTest, TokensSurviveARestartAndRevocationsToo) {
  absl::StatusOr<IssuedToken> kept = auth_->IssueToken("team-a", Role::kAdmin);
  absl::StatusOr<IssuedToken> revoked = auth_->IssueToken("team-b", Role::kTenant);
  ASSERT_TRUE(kept.ok() && revoked.ok());
  ASSERT_TRUE(auth_->RevokeToken(revoked->token).ok());
  EXPECT_EQ(auth_->Authenticate(revoked->token).status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(auth_->RevokeToken(revoked->token).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(auth_->RevokeToken("nonsense").code(), absl::StatusCode::kNotFound);

  Reopen();
  absl::StatusOr<Caller> caller = auth_->Authenticate(kept->token);
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->tenant, "team-a");
  EXPECT_TRUE(caller->admin);
  EXPECT_EQ(auth_->Authenticate(revoked->token).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(AuthenticatorTest, LookingUpMissesAcceptsTokensIssuedElsewhereLater) {
  // A standby's authenticator, created before the leader (auth_) issues the token.
  absl::StatusOr<std::unique_ptr<Authenticator>> standby =
      Authenticator::Create(store_.get(), {.look_up_misses = true});
  absl::StatusOr<std::unique_ptr<Authenticator>> cached_only = Authenticator::Create(store_.get());
  ASSERT_TRUE(standby.ok() && cached_only.ok());
  absl::StatusOr<IssuedToken> issued = auth_->IssueToken("team-a", Role::kTenant);
  ASSERT_TRUE(issued.ok());

  absl::StatusOr<Caller> caller = (*standby)->Authenticate(issued->token);
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->tenant, "team-a");
  EXPECT_FALSE(caller->admin);
  EXPECT_EQ((*cached_only)->Authenticate(issued->token).status().code(),
            absl::StatusCode::kUnauthenticated);
  const std::string unknown = "tsr_" + std::string(64, 'b');
  EXPECT_EQ((*standby)->Authenticate(unknown).status().code(), absl::StatusCode::kUnauthenticated);
}

TEST_F(AuthenticatorTest, CorruptRecordFailsCreate) {
  ASSERT_TRUE(store_
                  ->Commit(store::Txn::Unconditional(
                      {store::Op::Put("/tessera/tokens/" + std::string(64, 'a'), "not json")}))
                  .ok());
  EXPECT_EQ(Authenticator::Create(store_.get()).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace tessera::server
