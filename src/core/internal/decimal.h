// Exact decimal numbers for the edge parsers (quantities and durations); not a public API.
//
// A Decimal is `digits x 10^exponent` with arbitrary-length digits, so "1.5", "0.0009765625" or
// a 40-digit number lose nothing before conversion. ToInt64 converts `value x multiplier x
// 10^scale` to an int64 exactly, reporting a fractional result or one beyond int64 instead of
// rounding or wrapping. Thread-safe: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"

namespace tessera::internal {

// Exponents are clamped to this magnitude so sums of them never overflow; any nonzero value
// scaled this far is either fractional or beyond int64 anyway.
inline constexpr int64_t kMaxExponent = int64_t{1} << 40;

struct Decimal {
  std::string digits;    // no leading or trailing zeros; empty means zero
  int64_t exponent = 0;  // clamped to +-kMaxExponent
  bool IsZero() const { return digits.empty(); }
};

// Parses an unsigned decimal number "12", "1.5", ".5" or "1." at the front of `text`.
// Returns the number of characters consumed; 0 when `text` does not start with a number.
inline size_t ConsumeDecimal(std::string_view text, Decimal* out) {
  std::string digits;
  int64_t exponent = 0;
  size_t i = 0;
  bool any_digit = false;
  bool in_fraction = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !in_fraction) {
      in_fraction = true;
      continue;
    }
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) break;
    any_digit = true;
    if (!(digits.empty() && c == '0')) digits.push_back(c);  // drop leading zeros
    if (in_fraction && exponent > -kMaxExponent) --exponent;
  }
  if (!any_digit) return 0;
  while (!digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++exponent;
  }
  out->digits = std::move(digits);
  out->exponent = out->digits.empty() ? 0 : exponent;
  return i;
}

// Parses an optionally signed decimal integer "3", "-12", "+4" that makes up all of `text`,
// clamping its magnitude to kMaxExponent. False when `text` is not such an integer.
inline bool ParseClampedExponent(std::string_view text, int64_t* out) {
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return false;
  int64_t value = 0;
  for (const char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    value = value >= kMaxExponent ? kMaxExponent : value * 10 + (c - '0');
  }
  if (value > kMaxExponent) value = kMaxExponent;
  *out = negative ? -value : value;
  return true;
}

enum class Exactness { kOk, kNotWhole, kOverflow };

// What ToInt64 does with a result that has a fractional part.
enum class Rounding {
  kExact,  // refuse it (kNotWhole)
  kUp,     // round it up to the next whole number (a measurement, not a request)
};

// Sets *out to `d x multiplier x 10^scale` when that is a whole number within int64 (or, with
// Rounding::kUp, to that value rounded up).
// REQUIRES: multiplier >= 1, |scale| <= kMaxExponent.
inline Exactness ToInt64(const Decimal& d, uint64_t multiplier, int64_t scale, int64_t* out,
                         Rounding rounding = Rounding::kExact) {
  if (d.IsZero()) {
    *out = 0;
    return Exactness::kOk;
  }
  // Schoolbook multiplication of the digit string by the (small) multiplier.
  std::string product(d.digits.size(), '0');
  unsigned __int128 carry = 0;
  for (size_t i = d.digits.size(); i-- > 0;) {
    carry += static_cast<unsigned __int128>(d.digits[i] - '0') * multiplier;
    product[i] = static_cast<char>('0' + static_cast<int>(carry % 10));
    carry /= 10;
  }
  std::string prefix;
  for (; carry > 0; carry /= 10) prefix.insert(prefix.begin(), '0' + static_cast<int>(carry % 10));
  product.insert(0, prefix);

  const int64_t exponent = d.exponent + scale;
  constexpr size_t kMaxDigits = 19;  // INT64_MAX has 19 digits
  bool round_up = false;
  if (exponent < 0) {
    const size_t drop = static_cast<size_t>(-exponent);
    // A nonzero product has fewer trailing zeros than digits.
    const bool fractional =
        drop >= product.size() ||
        product.find_first_not_of('0', product.size() - drop) != std::string::npos;
    if (fractional && rounding == Rounding::kExact) return Exactness::kNotWhole;
    round_up = fractional;
    product.resize(drop >= product.size() ? 0 : product.size() - drop);
  } else {
    if (product.size() + static_cast<size_t>(exponent) > kMaxDigits) return Exactness::kOverflow;
    product.append(static_cast<size_t>(exponent), '0');
  }
  if (product.size() > kMaxDigits) return Exactness::kOverflow;
  uint64_t value = 0;
  for (const char c : product) value = value * 10 + static_cast<uint64_t>(c - '0');
  if (round_up) ++value;  // at most 10^19, within uint64
  if (value > static_cast<uint64_t>(INT64_MAX)) return Exactness::kOverflow;
  *out = static_cast<int64_t>(value);
  return Exactness::kOk;
}

// `text` without leading and trailing ASCII whitespace.
inline std::string_view StripWhitespace(std::string_view text) {
  const auto space = [](char c) { return absl::ascii_isspace(static_cast<unsigned char>(c)); };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

// Removes a leading '+' or '-' from `rest`; true when it was '-'.
inline bool ConsumeSign(std::string_view& rest) {
  if (rest.empty() || (rest[0] != '+' && rest[0] != '-')) return false;
  const bool negative = rest[0] == '-';
  rest.remove_prefix(1);
  return negative;
}

// `text` for an error message: non-printable bytes escaped, long input cut to 64 bytes.
inline std::string ShowForMessage(std::string_view text) {
  constexpr size_t kMaxShown = 64;
  const std::string_view shown = text.substr(0, kMaxShown);
  std::string out = absl::CHexEscape(absl::string_view(shown.data(), shown.size()));
  if (text.size() > kMaxShown) out += "...";
  return out;
}

// ShowForMessage in double quotes.
inline std::string QuoteForMessage(std::string_view text) {
  return "\"" + ShowForMessage(text) + "\"";
}

}  // namespace tessera::internal
