// Small text helpers for the trace parsers (std::string_view based; the installed Abseil's
// string functions take absl::string_view, which is not std::string_view here). Not a public API.
// Thread-safe: pure functions.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace tessera::sim::alibaba::internal {

// Splits on `sep`; "" gives one empty piece, "a," gives {"a", ""}.
inline std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(sep, start);
    if (end == std::string_view::npos) {
      out.push_back(text.substr(start));
      return out;
    }
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

// Lines without their "\n" or "\r\n".
inline std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines = Split(text, '\n');
  for (std::string_view& l : lines) {
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  }
  return lines;
}

inline bool IsBlank(std::string_view s) {
  return s.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// The whole of `text` as a decimal integer (optional leading '-'); false otherwise, also on
// overflow.
inline bool ParseInt64(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

// The whole of `text` as a finite or infinite decimal floating-point number.
inline bool ParseDouble(std::string_view text, double* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

// `items` joined with `sep`.
template <typename Container>
std::string Join(const Container& items, std::string_view sep) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += sep;
    out += item;
    first = false;
  }
  return out;
}

}  // namespace tessera::sim::alibaba::internal
