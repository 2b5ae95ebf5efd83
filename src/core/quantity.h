// Quantity parsing at the edges: Kubernetes quantity notation to Tessera's standard units.
//
// Accepted forms: plain numbers ("8", "1.5", "0.5"), decimal SI suffixes ("500m", "2k", "1M",
// "1G", "1T", "1P", "1E", and Kubernetes' "u" and "n"), binary suffixes ("16Ki", "64Mi", "16Gi",
// "1Ti", "1Pi", "1Ei") and exponents ("1e3", "5E-1"); surrounding whitespace is ignored.
// Results are exact integers in the target unit; a value that is not a whole number of the unit
// (e.g. "0.5m" cpu), negative, non-numeric, or beyond int64 is an error. The one exception is
// ParseCpuMillisRoundedUp, for measured rates, which rounds a fraction up.
// Every error message starts with the field path it was given ("spec.tasks[1].resources.gpu:
// must be >= 0"), so callers pass the path of the value being parsed.
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tessera {

// "500m" -> 500, "2" -> 2000, "1.5" -> 1500 (millicores).
absl::StatusOr<int64_t> ParseCpuMillis(std::string_view text, std::string_view field);

// A measured CPU rate in millicores, a fraction of a millicore rounded up as Kubernetes'
// Quantity.MilliValue() (and so kubectl top) does: "123456789n" -> 124, "1500u" -> 2,
// "250m" -> 250, "2" -> 2000. Errors as ParseCpuMillis, less the "not a whole number" one.
absl::StatusOr<int64_t> ParseCpuMillisRoundedUp(std::string_view text, std::string_view field);

// "16Gi" -> 17179869184, "1G" -> 1000000000, "512" -> 512 (bytes).
absl::StatusOr<int64_t> ParseBytes(std::string_view text, std::string_view field);

// GPU request in milli-GPU: "1" -> 1000, "0.5" -> 500, "500m" -> 500, "8" -> 8000.
absl::StatusOr<int64_t> ParseMilliGpu(std::string_view text, std::string_view field);

// A non-negative whole count ("3"; quantity notation allowed: "2k" -> 2000, "1Ki" -> 1024);
// used for replicas and extended resources.
absl::StatusOr<int64_t> ParseCount(std::string_view text, std::string_view field);

// Formats back to the edge notation: 1500 -> "1500m", 2000 -> "2"; 17179869184 -> "16Gi".
std::string FormatCpuMillis(int64_t millis);
std::string FormatBytes(int64_t bytes);
// 1500 -> "1.5", 2000 -> "2", 1 -> "0.001" (milli-GPU to GPUs).
std::string FormatMilliGpu(int64_t milli);

}  // namespace tessera
