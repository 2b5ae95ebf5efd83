#include "spec/key_style.h"

#include <string>
#include <string_view>

#include "absl/strings/ascii.h"

namespace tessera::spec {

std::string StyleKey(std::string_view camel, KeyStyle style) {
  if (style == KeyStyle::kCamelCase) return std::string(camel);
  if (camel == "terminationGracePeriod") return "termination_grace";
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

}  // namespace tessera::spec
