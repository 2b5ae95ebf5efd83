#include "agent/common/changed_lines.h"

namespace tessera::agent {

bool ChangedLines::Changed(const std::string& key, const std::string& line) {
  std::string& last = last_[key];
  if (last == line) return false;
  last = line;
  return !line.empty();
}

}  // namespace tessera::agent
