#include "spec/key_style.h"

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/strings/ascii.h"

namespace tessera::spec {
namespace {

// The one key SCENARIOS.md names otherwise than by its letters.
constexpr std::string_view kGraceCamel = "terminationGracePeriod";
constexpr std::string_view kGraceSnake = "termination_grace";

}  // namespace

std::string StyleKey(std::string_view camel, KeyStyle style) {
  if (style == KeyStyle::kCamelCase) return std::string(camel);
  if (camel == kGraceCamel) return std::string(kGraceSnake);
  std::string out;
  for (const char c : camel) {
    if (absl::ascii_isupper(static_cast<unsigned char>(c))) {
      out.push_back('_');
      out.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

bool IsSpelledAs(std::string_view camel, std::string_view written, KeyStyle style) {
  if (style == KeyStyle::kCamelCase) return camel == written;
  if (camel == kGraceCamel) return written == kGraceSnake;
  size_t at = 0;
  for (const char c : camel) {
    const auto u = static_cast<unsigned char>(c);
    if (absl::ascii_isupper(u)) {
      if (at + 1 >= written.size() || written[at] != '_' ||
          written[at + 1] != absl::ascii_tolower(u)) {
        return false;
      }
      at += 2;
    } else {
      if (at >= written.size() || written[at] != c) return false;
      ++at;
    }
  }
  return at == written.size();
}

}  // namespace tessera::spec
