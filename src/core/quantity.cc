#include "core/quantity.h"

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

// How a suffix scales the number in front of it: x multiplier x 10^exponent.
struct Scale {
  uint64_t multiplier = 1;
  int64_t exponent = 0;
};

// The target unit of a parser: values are multiplied by 10^exponent (1000 millicores per core).
struct Unit {
  int64_t exponent;
  std::string_view name;  // for "... is not a whole number of <name>"; empty for plain counts
};

constexpr Unit kMillicores{3, "millicores"};
constexpr Unit kBytes{0, "bytes"};
constexpr Unit kMilliGpu{3, "milli-GPU"};
constexpr Unit kCount{0, ""};

// Decodes a suffix: "", decimal SI, binary SI or an exponent ("e3", "E-2"). False when unknown.
bool DecodeSuffix(std::string_view suffix, Scale* scale) {
  struct Named {
    std::string_view suffix;
    Scale scale;
  };
  static constexpr Named kSuffixes[] = {
      {"", {1, 0}},
      {"n", {1, -9}},
      {"u", {1, -6}},
      {"m", {1, -3}},
      {"k", {1, 3}},
      {"M", {1, 6}},
      {"G", {1, 9}},
      {"T", {1, 12}},
      {"P", {1, 15}},
      {"E", {1, 18}},
      {"Ki", {1ull << 10, 0}},
      {"Mi", {1ull << 20, 0}},
      {"Gi", {1ull << 30, 0}},
      {"Ti", {1ull << 40, 0}},
      {"Pi", {1ull << 50, 0}},
      {"Ei", {1ull << 60, 0}},
  };
  for (const Named& named : kSuffixes) {
    if (suffix == named.suffix) {
      *scale = named.scale;
      return true;
    }
  }
  if (suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    *scale = Scale{};
    return internal::ParseClampedExponent(suffix.substr(1), &scale->exponent);
  }
  return false;
}

absl::Status Error(std::string_view field, std::string_view message) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", field, message));
}

absl::StatusOr<int64_t> ParseQuantity(std::string_view text, std::string_view field, Unit unit,
                                      internal::Rounding rounding = internal::Rounding::kExact) {
  const std::string_view trimmed = internal::StripWhitespace(text);
  std::string_view rest = trimmed;
  const bool negative = internal::ConsumeSign(rest);
  Decimal number;
  const size_t consumed = internal::ConsumeDecimal(rest, &number);
  Scale scale;
  if (consumed == 0 || !DecodeSuffix(rest.substr(consumed), &scale)) {
    return Error(field, fmt::format("{} is not a quantity", internal::QuoteForMessage(trimmed)));
  }
  if (negative && !number.IsZero()) return Error(field, "must be >= 0");
  int64_t value = 0;
  switch (internal::ToInt64(number, scale.multiplier, scale.exponent + unit.exponent, &value,
                            rounding)) {
    case Exactness::kOk:
      return value;
    case Exactness::kNotWhole:
      return Error(field,
                   fmt::format("{} is not a whole number{}{}", internal::ShowForMessage(trimmed),
                               unit.name.empty() ? "" : " of ", unit.name));
    case Exactness::kOverflow:
      break;
  }
  return Error(field, fmt::format("{} is too large", internal::ShowForMessage(trimmed)));
}

}  // namespace

absl::StatusOr<int64_t> ParseCpuMillis(std::string_view text, std::string_view field) {
  return ParseQuantity(text, field, kMillicores);
}

absl::StatusOr<int64_t> ParseCpuMillisRoundedUp(std::string_view text, std::string_view field) {
  return ParseQuantity(text, field, kMillicores, internal::Rounding::kUp);
}

absl::StatusOr<int64_t> ParseBytes(std::string_view text, std::string_view field) {
  return ParseQuantity(text, field, kBytes);
}

absl::StatusOr<int64_t> ParseMilliGpu(std::string_view text, std::string_view field) {
  return ParseQuantity(text, field, kMilliGpu);
}

absl::StatusOr<int64_t> ParseCount(std::string_view text, std::string_view field) {
  return ParseQuantity(text, field, kCount);
}

std::string FormatCpuMillis(int64_t millis) {
  if (millis % 1000 == 0) return fmt::format("{}", millis / 1000);
  return fmt::format("{}m", millis);
}

std::string FormatBytes(int64_t bytes) {
  // The magnitude as unsigned so that INT64_MIN formats too.
  const uint64_t magnitude = bytes < 0 ? 0 - static_cast<uint64_t>(bytes) : bytes;
  const std::string_view sign = bytes < 0 ? "-" : "";
  if (magnitude == 0) return "0";
  static constexpr std::string_view kBinary[] = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};
  for (int i = 0; i < 6; ++i) {
    const int shift = 10 * (6 - i);
    if (magnitude % (uint64_t{1} << shift) == 0) {
      return fmt::format("{}{}{}", sign, magnitude >> shift, kBinary[i]);
    }
  }
  static constexpr std::string_view kDecimal[] = {"E", "P", "T", "G", "M", "k"};
  uint64_t power = 1'000'000'000'000'000'000ull;
  for (int i = 0; i < 6; ++i, power /= 1000) {
    if (magnitude % power == 0) return fmt::format("{}{}{}", sign, magnitude / power, kDecimal[i]);
  }
  return fmt::format("{}{}", sign, magnitude);
}

std::string FormatMilliGpu(int64_t milli) {
  const uint64_t magnitude = milli < 0 ? 0 - static_cast<uint64_t>(milli) : milli;
  const std::string_view sign = milli < 0 ? "-" : "";
  const uint64_t whole = magnitude / 1000;
  const uint64_t fraction = magnitude % 1000;
  if (fraction == 0) return fmt::format("{}{}", sign, whole);
  std::string digits = fmt::format("{:03}", fraction);
  while (digits.back() == '0') digits.pop_back();
  return fmt::format("{}{}.{}", sign, whole, digits);
}

}  // namespace tessera
