// Require: the fuzzers' invariant check. When `condition` is false, prints what was violated,
// an optional detail and the input, then aborts, so libFuzzer records the input as a crash.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace tessera::fuzz {

inline void Require(bool condition, const char* what, std::string_view input,
                    std::string_view detail = {}) {
  if (condition) return;
  std::fprintf(stderr, "invariant violated: %s\n", what);
  if (!detail.empty()) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(detail.size()), detail.data());
  }
  std::fprintf(stderr, "input (%zu bytes): %.*s\n", input.size(), static_cast<int>(input.size()),
               input.data());
  std::abort();
}

}  // namespace tessera::fuzz
