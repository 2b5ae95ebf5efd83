// KeyStyle: how a document spells the keys of one schema. Job and queue documents of the API,
// the CLI and the server configuration write camelCase (shared/JOBSPEC.md: "minAvailable",
// "borrowingLimit"); scenario files write the same keys in snake_case (shared/SCENARIOS.md:
// "min_available", "borrowing_limit"). The decoders hold one table of keys, in camelCase, and
// spell each key in the document's style with StyleKey.
// Thread-safe: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace tessera::spec {

enum class KeyStyle {
  kCamelCase,  // the API's documents: JOBSPEC.md, the queue document
  kSnakeCase,  // scenario files: SCENARIOS.md
};

// `camel` as a document of `style` spells it: unchanged in kCamelCase; in kSnakeCase every
// capital becomes '_' and its lowercase letter ("minAvailable" -> "min_available"), except
// where SCENARIOS.md names a key otherwise ("terminationGracePeriod" -> "termination_grace").
std::string StyleKey(std::string_view camel, KeyStyle style);

// Whether `written` is `camel` as `style` spells it: StyleKey(camel, style) == written, without
// building the spelling.
bool IsSpelledAs(std::string_view camel, std::string_view written, KeyStyle style);

}  // namespace tessera::spec
