#include "server/auth/authenticator.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <utility>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace tessera::server {
namespace {

constexpr std::string_view kTokenPrefix = "tsr_";
constexpr size_t kTokenBytes = 32;
constexpr std::string_view kTokensPrefix = "/tessera/tokens/";

std::string Hex(const unsigned char* data, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 0xf]);
  }
  return out;
}

bool IsLowerHex(std::string_view text) {
  return text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool WellFormed(std::string_view token) {
  return token.size() == kTokenPrefix.size() + 2 * kTokenBytes && token.starts_with(kTokenPrefix) &&
         IsLowerHex(token.substr(kTokenPrefix.size()));
}

// The hex SHA-256 of the whole token text (prefix included).
absl::StatusOr<std::string> HashToken(std::string_view token) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(token.data(), token.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1) {
    return absl::InternalError("SHA-256 failed");
  }
  return Hex(digest.data(), size);
}

bool ValidTenant(std::string_view tenant) {
  auto allowed = [](char c, bool first) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    return alnum || (!first && (c == '.' || c == '_' || c == '-'));
  };
  if (tenant.empty() || tenant.size() > 63) return false;
  for (size_t i = 0; i < tenant.size(); ++i) {
    if (!allowed(tenant[i], i == 0)) return false;
  }
  return true;
}

std::string_view RoleName(Role role) { return role == Role::kAdmin ? "admin" : "tenant"; }

std::string TokenKey(std::string_view hash) { return fmt::format("{}{}", kTokensPrefix, hash); }

// A stored token record: {"tenant": ..., "role": "admin" | "tenant"}; nullopt when it is not one.
struct StoredToken {
  std::string tenant;
  Role role;
};
std::optional<StoredToken> ParseStoredToken(std::string_view value) {
  const nlohmann::json json = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  const bool valid = json.is_object() && json.contains("tenant") && json["tenant"].is_string() &&
                     json.contains("role") && (json["role"] == "admin" || json["role"] == "tenant");
  if (!valid) return std::nullopt;
  return StoredToken{.tenant = json["tenant"].get<std::string>(),
                     .role = json["role"] == "admin" ? Role::kAdmin : Role::kTenant};
}

}  // namespace

absl::StatusOr<std::unique_ptr<Authenticator>> Authenticator::Create(store::Store* store,
                                                                     AuthenticatorOptions options) {
  absl::StatusOr<store::RangeResult> range = store->Range({.prefix = std::string(kTokensPrefix)});
  if (!range.ok()) return range.status();
  std::unique_ptr<Authenticator> auth(new Authenticator(store, options));
  for (const store::KeyValue& kv : range->kvs) {
    const std::string hash = kv.key.substr(kTokensPrefix.size());
    const std::optional<StoredToken> token = ParseStoredToken(kv.value);
    if (!token.has_value() || !IsLowerHex(hash)) {
      return absl::DataLossError(fmt::format("{}: not a token record", kv.key));
    }
    auth->by_hash_[hash] = Entry{.tenant = token->tenant, .role = token->role};
  }
  return auth;
}

absl::StatusOr<std::optional<Authenticator::Entry>> Authenticator::LookUp(
    const std::string& hash) const {
  absl::StatusOr<std::optional<store::KeyValue>> stored = store_->Get(TokenKey(hash));
  if (!stored.ok()) return stored.status();
  if (!stored->has_value()) return std::nullopt;
  const std::optional<StoredToken> token = ParseStoredToken((*stored)->value);
  if (!token.has_value()) {
    return absl::DataLossError(fmt::format("{}: not a token record", TokenKey(hash)));
  }
  return Entry{.tenant = token->tenant, .role = token->role};
}

absl::StatusOr<Caller> Authenticator::Authenticate(std::string_view token) const {
  if (!WellFormed(token)) return absl::UnauthenticatedError("malformed token");
  absl::StatusOr<std::string> hash = HashToken(token);
  if (!hash.ok()) return hash.status();
  std::optional<Entry> entry;
  {
    std::lock_guard lock(mu_);
    auto it = by_hash_.find(*hash);
    if (it != by_hash_.end()) entry = it->second;
  }
  if (!entry.has_value() && options_.look_up_misses) {
    absl::StatusOr<std::optional<Entry>> stored = LookUp(*hash);
    if (!stored.ok()) return stored.status();
    entry = *std::move(stored);
    if (entry.has_value()) {
      std::lock_guard lock(mu_);
      by_hash_[*hash] = *entry;
    }
  }
  if (!entry.has_value()) return absl::UnauthenticatedError("unknown token");
  return Caller{.tenant = entry->tenant, .admin = entry->role == Role::kAdmin};
}

absl::StatusOr<IssuedToken> Authenticator::IssueToken(std::string_view tenant, Role role) {
  if (!ValidTenant(tenant)) {
    return absl::InvalidArgumentError(
        fmt::format("tenant: \"{}\" must match [a-z0-9][a-z0-9._-]{{0,62}}", tenant));
  }
  if (role == Role::kTenant && tenant == kAdminTenant) {
    // Admins submit as this tenant: a tenant token under its name would see their jobs.
    return absl::InvalidArgumentError(
        fmt::format("tenant: \"{}\" is reserved for administrators", kAdminTenant));
  }
  std::array<unsigned char, kTokenBytes> secret{};
  if (RAND_bytes(secret.data(), secret.size()) != 1) {
    return absl::InternalError("no random bytes for a token");
  }
  IssuedToken issued{.token = fmt::format("{}{}", kTokenPrefix, Hex(secret.data(), secret.size())),
                     .tenant = std::string(tenant),
                     .role = role};
  absl::StatusOr<std::string> hash = HashToken(issued.token);
  if (!hash.ok()) return hash.status();
  const nlohmann::json record = {{"tenant", issued.tenant}, {"role", RoleName(role)}};
  store::Txn txn{.compares = {store::Compare::Absent(TokenKey(*hash))},
                 .success = {store::Op::Put(TokenKey(*hash), record.dump())}};
  absl::StatusOr<store::TxnResult> result = store_->Commit(std::move(txn));
  if (!result.ok()) return result.status();
  if (!result->succeeded) return absl::InternalError("token collision");  // 2^-256: never
  std::lock_guard lock(mu_);
  by_hash_[*hash] = Entry{.tenant = issued.tenant, .role = role};
  return issued;
}

absl::Status Authenticator::RevokeToken(std::string_view token) {
  if (!WellFormed(token)) return absl::NotFoundError("unknown token");
  absl::StatusOr<std::string> hash = HashToken(token);
  if (!hash.ok()) return hash.status();
  store::Txn txn{.compares = {store::Compare::Exists(TokenKey(*hash))},
                 .success = {store::Op::Delete(TokenKey(*hash))}};
  absl::StatusOr<store::TxnResult> result = store_->Commit(std::move(txn));
  if (!result.ok()) return result.status();
  std::lock_guard lock(mu_);
  by_hash_.erase(*hash);
  if (!result->succeeded) return absl::NotFoundError("unknown token");
  return absl::OkStatus();
}

}  // namespace tessera::server
