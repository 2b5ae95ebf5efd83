// Where the tests find the real trace files: $TESSERA_TRACE_DIR (the traces root), else
// ../shared/traces or ./traces beside the source tree ($TESSERA_SOURCE_DIR, set by ctest).
// Tests skip (GTEST_SKIP) when a file is absent. Not a public API.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::sim::swf::testing {

inline constexpr std::string_view kNasaLog = "pwa-swf/NASA-iPSC-1993-3.1-cln.swf.gz";
inline constexpr std::string_view kLcgLog = "pwa-swf/LCG-2005-1.swf.gz";

// The path of `relative` (e.g. kNasaLog) under the first traces root that has it.
inline std::optional<std::string> FindTraceFile(std::string_view relative) {
  namespace fs = std::filesystem;
  std::vector<fs::path> roots;
  if (const char* env = std::getenv("TESSERA_TRACE_DIR"); env != nullptr && *env != '\0') {
    roots.emplace_back(env);
  }
  if (const char* src = std::getenv("TESSERA_SOURCE_DIR"); src != nullptr && *src != '\0') {
    roots.emplace_back(fs::path(src) / ".." / "shared" / "traces");
    roots.emplace_back(fs::path(src) / "traces");
  }
  for (const fs::path& root : roots) {
    const fs::path candidate = root / relative;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
  }
  return std::nullopt;
}

}  // namespace tessera::sim::swf::testing
