// A task's log as a cluster serves it: which stream, and one slice of it.
#pragma once

#include <cstdint>
#include <string>

namespace tessera {

enum class LogStream { kStdout, kStderr };

// One slice of a task's log, read from a byte offset.
struct LogChunk {
  std::string data;
  int64_t next_offset = 0;  // offset + data.size()
  bool end = false;         // the task has ended and the log was read to its end
};

}  // namespace tessera
