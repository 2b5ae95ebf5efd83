#include "agent/local/task_outcome.h"

namespace tessera::agent {

std::string_view TaskEndName(TaskEnd end) {
  switch (end) {
    case TaskEnd::kSucceeded:
      return "Succeeded";
    case TaskEnd::kFailed:
      return "Failed";
    case TaskEnd::kKilled:
      return "Killed";
    case TaskEnd::kCancelled:
      return "Cancelled";
    case TaskEnd::kTimeLimitExceeded:
      return "TimeLimitExceeded";
    case TaskEnd::kStartFailed:
      return "StartFailed";
    case TaskEnd::kLost:
      return "Lost";
  }
  return "Lost";
}

}  // namespace tessera::agent
