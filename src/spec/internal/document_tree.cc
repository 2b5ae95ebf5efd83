#include "spec/internal/document_tree.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "spec/internal/document_error.h"

namespace tessera::spec::internal {
namespace {

// Length of the UTF-8 sequence starting at text[i] (1..4), or 0 when it is malformed
// (overlong, surrogate, beyond U+10FFFF, truncated).
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char min_second = 0x80;
  unsigned char max_second = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) min_second = 0xA0;  // overlong
    if (lead == 0xED) max_second = 0x9F;  // UTF-16 surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) min_second = 0x90;  // overlong
    if (lead == 0xF4) max_second = 0x8F;  // beyond U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < min_second || byte(i + 1) > max_second) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

bool IsForbiddenControl(unsigned char c) {
  return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F;
}

}  // namespace

std::string AtPosition(Position position, std::string_view message) {
  if (!position.IsKnown()) return std::string(message);
  return fmt::format("{}:{}: {}", position.line, position.column, message);
}

Position PositionOfOffset(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const size_t line_start = before.rfind('\n');
  Position position;
  position.line = 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
  position.column =
      1 + static_cast<int>(line_start == std::string_view::npos ? offset : offset - line_start - 1);
  return position;
}

absl::Status CheckText(std::string_view text, const DocumentLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return DocumentError(Position{}, "",
                         fmt::format("the document is {} bytes, more than the limit of {}",
                                     text.size(), limits.max_bytes));
  }
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const size_t length = Utf8SequenceLength(text, i);
    if (length == 0 || IsForbiddenControl(c)) {
      return DocumentError(
          PositionOfOffset(text, i), "",
          fmt::format("the document is not UTF-8 text (byte 0x{:02X} at offset {})", c, i));
    }
    i += length;
  }
  return absl::OkStatus();
}

}  // namespace tessera::spec::internal
