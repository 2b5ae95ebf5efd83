#include "temp_dir.h"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <system_error>

namespace tessera::integration {

TempDir::TempDir(std::string_view prefix) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::Sub(std::string_view name) const { return path_ + "/" + std::string(name); }

}  // namespace tessera::integration
