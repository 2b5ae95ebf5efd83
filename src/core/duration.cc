#include "core/duration.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "core/internal/decimal.h"
#include "fmt/format.h"

namespace tessera {
namespace {

using internal::Decimal;
using internal::Exactness;

// A Go duration unit and its length in milliseconds as multiplier x 10^exponent.
struct DurationUnit {
  std::string_view suffix;
  uint64_t multiplier;
  int64_t exponent;
};

// Longer suffixes first so that "ms" is not read as "m" followed by garbage.
constexpr DurationUnit kUnits[] = {
    {"ns", 1, -6},        {"us", 1, -3},  {"\xC2\xB5s", 1, -3},  // micro sign
    {"\xCE\xBCs", 1, -3},                                        // Greek mu
    {"ms", 1, 0},         {"s", 1000, 0}, {"m", 60'000, 0},     {"h", 3'600'000, 0},
};
constexpr uint64_t kMillisPerSecond = 1000;

absl::Status Error(std::string_view field, std::string_view message) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", field, message));
}

// Adds `number` x unit (in milliseconds as multiplier x 10^exponent) to *total.
Exactness Accumulate(const Decimal& number, uint64_t multiplier, int64_t exponent, int64_t* total) {
  int64_t millis = 0;
  const Exactness exactness = internal::ToInt64(number, multiplier, exponent, &millis);
  if (exactness != Exactness::kOk) return exactness;
  return __builtin_add_overflow(*total, millis, total) ? Exactness::kOverflow : Exactness::kOk;
}

enum class Outcome { kOk, kMalformed, kNotWhole, kOverflow };

Outcome FromExactness(Exactness exactness) {
  switch (exactness) {
    case Exactness::kOk:
      return Outcome::kOk;
    case Exactness::kNotWhole:
      return Outcome::kNotWhole;
    case Exactness::kOverflow:
      break;
  }
  return Outcome::kOverflow;
}

// Reads an unsigned duration: a bare number of seconds, or "<number><unit>" components
// ("1h30m", "1.5s") summed in milliseconds.
Outcome ToMillis(std::string_view text, int64_t* millis) {
  *millis = 0;
  if (text.empty()) return Outcome::kMalformed;
  Decimal number;
  if (internal::ConsumeDecimal(text, &number) == text.size()) {
    return FromExactness(Accumulate(number, kMillisPerSecond, 0, millis));
  }
  while (!text.empty()) {
    const size_t consumed = internal::ConsumeDecimal(text, &number);
    if (consumed == 0) return Outcome::kMalformed;
    text.remove_prefix(consumed);
    const DurationUnit* unit = nullptr;
    for (const DurationUnit& candidate : kUnits) {
      if (text.starts_with(candidate.suffix)) {
        unit = &candidate;
        break;
      }
    }
    if (unit == nullptr) return Outcome::kMalformed;
    text.remove_prefix(unit->suffix.size());
    const Exactness exactness = Accumulate(number, unit->multiplier, unit->exponent, millis);
    if (exactness != Exactness::kOk) return FromExactness(exactness);
  }
  return Outcome::kOk;
}

}  // namespace

absl::StatusOr<Duration> ParseDuration(std::string_view text, std::string_view field) {
  const std::string_view trimmed = internal::StripWhitespace(text);
  std::string_view rest = trimmed;
  const bool negative = internal::ConsumeSign(rest);
  int64_t millis = 0;
  const Outcome outcome = ToMillis(rest, &millis);
  if (outcome == Outcome::kMalformed) {
    return Error(field, fmt::format("{} is not a duration (want seconds or a string such as "
                                    "\"90s\", \"1h30m\" or \"250ms\")",
                                    internal::QuoteForMessage(trimmed)));
  }
  if (negative && (outcome != Outcome::kOk || millis != 0)) return Error(field, "must be >= 0");
  switch (outcome) {
    case Outcome::kOk:
      return Duration{millis};
    case Outcome::kNotWhole:
      return Error(field, fmt::format("{} is not a whole number of milliseconds",
                                      internal::ShowForMessage(trimmed)));
    default:
      break;
  }
  return Error(field, fmt::format("{} is too large", internal::ShowForMessage(trimmed)));
}

std::string FormatDuration(Duration d) {
  const int64_t count = d.count();
  if (count == 0) return "0s";
  uint64_t rest = count < 0 ? 0 - static_cast<uint64_t>(count) : count;
  std::string out = count < 0 ? "-" : "";
  constexpr uint64_t kHour = 3'600'000;
  constexpr uint64_t kMinute = 60'000;
  if (rest < kMillisPerSecond) return fmt::format("{}{}ms", out, rest);
  if (rest >= kHour) out += fmt::format("{}h", rest / kHour);
  rest %= kHour;
  if (rest >= kMinute) out += fmt::format("{}m", rest / kMinute);
  rest %= kMinute;
  if (rest == 0) return out;
  out += fmt::format("{}", rest / kMillisPerSecond);
  if (const uint64_t ms = rest % kMillisPerSecond; ms != 0) {
    std::string digits = fmt::format("{:03}", ms);
    while (digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out + "s";
}

}  // namespace tessera
