// Feeds arbitrary text to every edge parser of src/core (quantities and durations) and checks
// their invariants: no crash or undefined behaviour, a parsed value is never negative, errors
// are InvalidArgument naming the field with a bounded message, formatting then parsing returns
// the same value, the parsers agree with each other, and surrounding whitespace is ignored.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/duration.h"
#include "core/quantity.h"
#include "fuzz_check.h"

namespace tessera {
namespace {

using ::tessera::fuzz::Require;

constexpr std::string_view kField = "spec.tasks[0].resources.x";
constexpr size_t kMaxMessage = 400;  // messages quote at most 64 bytes of the input

template <typename T>
void CheckError(const absl::StatusOr<T>& result, std::string_view input) {
  if (result.ok()) return;
  const absl::Status& status = result.status();
  Require(status.code() == absl::StatusCode::kInvalidArgument, "error is InvalidArgument", input);
  const std::string_view message(status.message().data(), status.message().size());
  Require(message.starts_with(std::string(kField) + ": "), "error names the field", input);
  Require(message.size() <= kMaxMessage, "error message is bounded", input);
}

// Runs `parse`, checks its error or value, and returns the result.
template <typename Parse>
absl::StatusOr<int64_t> CheckQuantity(Parse parse, std::string_view input) {
  absl::StatusOr<int64_t> result = parse(input, kField);
  CheckError(result, input);
  if (result.ok()) Require(*result >= 0, "parsed quantity is >= 0", input);
  return result;
}

template <typename T>
bool SameResult(const absl::StatusOr<T>& a, const absl::StatusOr<T>& b) {
  if (a.ok() != b.ok()) return false;
  return a.ok() ? *a == *b : a.status() == b.status();
}

void CheckQuantities(std::string_view input) {
  const absl::StatusOr<int64_t> cpu = CheckQuantity(ParseCpuMillis, input);
  const absl::StatusOr<int64_t> bytes = CheckQuantity(ParseBytes, input);
  const absl::StatusOr<int64_t> gpu = CheckQuantity(ParseMilliGpu, input);
  const absl::StatusOr<int64_t> count = CheckQuantity(ParseCount, input);
  const absl::StatusOr<int64_t> measured = CheckQuantity(ParseCpuMillisRoundedUp, input);
  // Rounding a fraction of a millicore up only ever accepts more, and never lowers a value.
  Require(!cpu.ok() || (measured.ok() && *measured == *cpu), "rounded-up cpu agrees on whole "
          "millicores", input);

  // Round trips through the edge notation.
  if (cpu.ok()) {
    const absl::StatusOr<int64_t> back = ParseCpuMillis(FormatCpuMillis(*cpu), kField);
    Require(back.ok() && *back == *cpu, "FormatCpuMillis round trip", input);
  }
  if (bytes.ok()) {
    const absl::StatusOr<int64_t> back = ParseBytes(FormatBytes(*bytes), kField);
    Require(back.ok() && *back == *bytes, "FormatBytes round trip", input);
  }
  if (gpu.ok()) {
    const absl::StatusOr<int64_t> back = ParseMilliGpu(FormatMilliGpu(*gpu), kField);
    Require(back.ok() && *back == *gpu, "FormatMilliGpu round trip", input);
  }

  // Millicores and milli-GPU share a scale; so do bytes and counts (only the messages' unit
  // names differ, so compare values and success only).
  Require(cpu.ok() == gpu.ok() && (!cpu.ok() || *cpu == *gpu), "cpu and gpu parsers agree", input);
  Require(bytes.ok() == count.ok() && (!bytes.ok() || *bytes == *count),
          "bytes and count parsers agree", input);
  // A whole number of units is 1000 whole milli-units when that fits.
  if (bytes.ok() && *bytes <= INT64_MAX / 1000) {
    Require(cpu.ok() && *cpu == *bytes * 1000, "cpu is 1000 x bytes", input);
  }
  if (cpu.ok() && *cpu % 1000 == 0) {
    Require(bytes.ok() && *bytes == *cpu / 1000, "whole cpu parses as bytes", input);
  }

  const std::string padded = " \t" + std::string(input) + "\n ";
  Require(SameResult(ParseBytes(padded, kField), bytes), "whitespace is ignored", input);
}

void CheckDurations(std::string_view input) {
  const absl::StatusOr<Duration> d = ParseDuration(input, kField);
  CheckError(d, input);
  if (!d.ok()) return;
  Require(d->count() >= 0, "parsed duration is >= 0", input);
  const absl::StatusOr<Duration> back = ParseDuration(FormatDuration(*d), kField);
  Require(back.ok() && *back == *d, "FormatDuration round trip", input);
}

}  // namespace
}  // namespace tessera

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  tessera::CheckQuantities(input);
  tessera::CheckDurations(input);
  return 0;
}
