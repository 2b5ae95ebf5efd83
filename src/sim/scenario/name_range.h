// Brace ranges in names: "gpu-{0..3}" names gpu-0, gpu-1, gpu-2, gpu-3.
//
// Several ranges multiply ("r{0..1}-n{0..1}" -> r0-n0, r0-n1, r1-n0, r1-n1). A start with a
// leading zero pads every number to its width ("n{00..10}" -> n00 … n10). A name without braces
// names itself. Errors (InvalidArgument, without a field: the caller adds it): a malformed range,
// a start above its end, or more than `limit` names. Thread-safe: a pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::sim {

absl::StatusOr<std::vector<std::string>> ExpandNameRanges(std::string_view pattern,
                                                          size_t limit = 100000);

}  // namespace tessera::sim
