// CommandEnv: what a client verb takes from its process — output streams, environment
// variables, the wall clock and sleeping — passed in so tests can run verbs in-process with
// string streams, a fixed environment and a manual clock.
// Thread-compatible: a verb uses its CommandEnv from one thread.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "tessera/common/clock.h"

namespace tessera::cli {

struct CommandEnv {
  std::ostream* out = nullptr;  // results
  std::ostream* err = nullptr;  // errors and progress
  // An environment variable; nullopt when unset.
  std::function<std::optional<std::string>(std::string_view)> getenv;
  const Clock* clock = nullptr;  // wall clock (Unix epoch): ages, replay pacing
  std::function<void(Duration)> sleep;
};

// std::cout, std::cerr, std::getenv, the system clock and std::this_thread::sleep_for.
CommandEnv ProcessEnv();

}  // namespace tessera::cli
