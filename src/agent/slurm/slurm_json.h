// SlurmJson: typed reads of one field of a slurmrestd JSON object, for the parsers of its
// replies (slurm_inventory.h, slurm_jobs.h).
//
// slurmrestd's replies are outside input: every read checks the type and range and returns
// InvalidArgument naming the field ("cpus: must be a non-negative integer, got -3") instead of
// throwing. A field that is missing or JSON null reads as absent (nullopt, or the empty
// string/list). Integers must be whole JSON numbers within int64 (8.0 and 1e30 are refused).
//
// One reader serves every REST API version: from v0.0.39 on, slurmrestd writes many numbers
// as a flagged object {"set": bool, "infinite": bool, "number": N} where v0.0.38 wrote N.
// Integer and NonNegative accept both forms; an object that is unset ("set": false) or
// infinite reads as absent, like a missing field. Errors in the object name its member
// ("start_time.number: must be an integer, got \"x\"").
//
// Pure functions over nlohmann::json; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tessera::agent::slurm_json {

// A string field; nullopt when missing or null.
absl::StatusOr<std::optional<std::string>> String(const nlohmann::json& object,
                                                  std::string_view key);
// An integer field >= 0 (plain or flagged); nullopt when missing, null, unset or infinite.
absl::StatusOr<std::optional<int64_t>> NonNegative(const nlohmann::json& object,
                                                   std::string_view key);
// An integer field of any sign (plain or flagged); nullopt when missing, null, unset or infinite.
absl::StatusOr<std::optional<int64_t>> Integer(const nlohmann::json& object, std::string_view key);
// An array of strings; empty when missing or null.
absl::StatusOr<std::vector<std::string>> Strings(const nlohmann::json& object,
                                                 std::string_view key);
// The texts of a reply's "errors" array ("error", or "description" when more telling),
// joined with "; "; "" when there are none. Entries that are not objects are skipped.
std::string ErrorText(const nlohmann::json& reply);

}  // namespace tessera::agent::slurm_json
