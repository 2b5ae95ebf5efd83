// Key ranges of the store: a prefix as the half-open interval [prefix, PrefixEnd(prefix)).
//
// Keys order bytewise (unsigned). PrefixEnd is the smallest key greater than every key that
// starts with the prefix, or nullopt when there is none (the prefix is empty or all 0xff
// bytes): such a range is unbounded above. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tessera::store {

std::optional<std::string> PrefixEnd(std::string_view prefix);

// Whether `key` starts with `prefix`.
inline bool HasPrefix(std::string_view key, std::string_view prefix) {
  return key.substr(0, prefix.size()) == prefix;
}

}  // namespace tessera::store
