#include "sim/scenario/name_range.h"

#include <charconv>
#include <cstdint>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sim/scenario/yaml_reader.h"

namespace tessera::sim {
namespace {

bool ToInt(std::string_view text, int64_t* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && !text.empty();
}

struct Range {
  int64_t first = 0;
  int64_t last = 0;
  int width = 0;  // zero-padding width; 0 = none
};

absl::StatusOr<Range> ParseRange(std::string_view body) {
  const size_t dots = body.find("..");
  Range r;
  if (dots == std::string_view::npos || !ToInt(body.substr(0, dots), &r.first) ||
      !ToInt(body.substr(dots + 2), &r.last) || body[0] == '-' || body[0] == '+' ||
      body.substr(dots + 2).empty() || body[dots + 2] == '-' || body[dots + 2] == '+') {
    return absl::InvalidArgumentError(
        Cat("bad range '{", body, "}': expected {FIRST..LAST} with FIRST <= LAST"));
  }
  if (r.first > r.last) {
    return absl::InvalidArgumentError(
        Cat("bad range '{", body, "}': ", r.first, " is above ", r.last));
  }
  if (dots > 1 && body[0] == '0') r.width = static_cast<int>(dots);
  return r;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandNameRanges(std::string_view pattern, size_t limit) {
  std::vector<std::string> names = {""};
  size_t pos = 0;
  while (pos < pattern.size()) {
    const size_t open = pattern.find('{', pos);
    const std::string_view literal = pattern.substr(pos, open - pos);
    if (literal.find('}') != std::string_view::npos) {
      return absl::InvalidArgumentError(Cat("'}' without '{' in '", pattern, "'"));
    }
    for (std::string& n : names) n.append(literal);
    if (open == std::string_view::npos) break;
    const size_t close = pattern.find('}', open);
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError(Cat("'{' without '}' in '", pattern, "'"));
    }
    absl::StatusOr<Range> range = ParseRange(pattern.substr(open + 1, close - open - 1));
    if (!range.ok()) return range.status();
    const uint64_t count = static_cast<uint64_t>(range->last - range->first) + 1;
    if (count > limit || names.size() * count > limit) {
      return absl::InvalidArgumentError(Cat("'", pattern, "' names more than ", limit));
    }
    std::vector<std::string> next;
    next.reserve(names.size() * count);
    for (const std::string& n : names) {
      for (int64_t i = range->first; i <= range->last; ++i) {
        next.push_back(Cat(n, fmt::format("{:0{}}", i, range->width)));
      }
    }
    names = std::move(next);
    pos = close + 1;
  }
  return names;
}

}  // namespace tessera::sim
