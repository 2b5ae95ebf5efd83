// Authenticator: bearer tokens → Callers, with tokens stored hashed in the control plane's store.
//
// A token is 32 random bytes shown once, hex-encoded with the prefix "tsr_" (68 characters).
// The store keeps only its SHA-256 (OpenSSL) under "/tessera/tokens/<hex sha256>" with the
// tenant and role as JSON, so a copy of the database does not hand out credentials. Two roles:
// admin (every job, token management) and tenant (its own jobs only) — server/job_service.h.
// Tokens are cached in memory; IssueToken and RevokeToken write through to the store. With
// AuthenticatorOptions::look_up_misses (a standby replica of an HA control plane, whose leader
// issues tokens) a token missing from the cache is read from the store and cached when found,
// so tokens issued elsewhere after Create work too; a token revoked elsewhere stays cached until
// the process restarts (no API revokes tokens yet).
//
// Errors: Authenticate returns Unauthenticated for a missing, malformed or unknown token (and,
// looking up a miss, the store's error or DataLoss for a record that does not decode).
// IssueToken returns InvalidArgument for an empty or malformed tenant name (allowed:
// [a-z0-9][a-z0-9._-]{0,62}) or a tenant token for kAdminTenant, and the store's error when
// the write fails.
// Thread-safety: every method may be called concurrently.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "server/job_service.h"
#include "tessera/store/store.h"

namespace tessera::server {

enum class Role { kTenant, kAdmin };

// The tenant of administrators' tokens; reserved: no tenant token is issued under it.
inline constexpr std::string_view kAdminTenant = "admin";

struct IssuedToken {
  std::string token;  // the secret: shown once, never stored
  std::string tenant;
  Role role = Role::kTenant;
};

struct AuthenticatorOptions {
  bool look_up_misses = false;  // read a token missing from the cache from the store
};

class Authenticator {
 public:
  // Loads the stored token hashes. `store` outlives the Authenticator.
  static absl::StatusOr<std::unique_ptr<Authenticator>> Create(store::Store* store,
                                                               AuthenticatorOptions options = {});

  // The caller a bearer token stands for (the value after "Bearer ").
  absl::StatusOr<Caller> Authenticate(std::string_view token) const;

  // Creates a token for `tenant` with `role`, durably stored before it is returned.
  absl::StatusOr<IssuedToken> IssueToken(std::string_view tenant, Role role);

  // Forgets a token. NotFound when it is unknown.
  absl::Status RevokeToken(std::string_view token);

 private:
  struct Entry {
    std::string tenant;
    Role role;
  };
  Authenticator(store::Store* store, AuthenticatorOptions options)
      : store_(store), options_(options) {}
  // The stored entry of `hash`, read from the store; nullopt when there is none.
  absl::StatusOr<std::optional<Entry>> LookUp(const std::string& hash) const;

  store::Store* const store_;
  const AuthenticatorOptions options_;
  mutable std::mutex mu_;
  mutable absl::flat_hash_map<std::string, Entry> by_hash_;  // hex SHA-256 → entry
};

}  // namespace tessera::server
