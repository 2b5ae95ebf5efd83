// TempDir: a fresh directory under the system's temporary directory for one test, removed with
// everything in it when the TempDir goes away.
//
// The name starts with `prefix` and ends with six random characters (mkdtemp). Construction
// aborts the test binary when no directory can be made: nothing an integration test does could
// work without one. Not thread-safe; path() is immutable and may be read from any thread.
#pragma once

#include <string>
#include <string_view>

namespace tessera::integration {

class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "tessera-it");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string Sub(std::string_view name) const;

 private:
  std::string path_;
};

}  // namespace tessera::integration
