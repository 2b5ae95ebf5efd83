// ChangedLines: a backend that reports the same condition at every poll ("reading the node
// list: connection refused") logs it once, when it starts, and again only when it changes or
// after it cleared. Each condition has a key ("nodes", "metrics API"); its current line is
// remembered, "" meaning all is well.
// Not thread-safe: the caller serialises calls (one thread, or its own lock).
#pragma once

#include <functional>
#include <map>
#include <string>

namespace tessera::agent {

class ChangedLines {
 public:
  // Records `line` as the condition under `key`; true when it should be logged now: it is not
  // empty and differs from the line last recorded under `key`.
  bool Changed(const std::string& key, const std::string& line);

 private:
  std::map<std::string, std::string, std::less<>> last_;
};

}  // namespace tessera::agent
