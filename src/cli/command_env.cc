#include "cli/command_env.h"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

namespace tessera::cli {
namespace {

class WallClock final : public Clock {
 public:
  TimePoint Now() const override {
    return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
  }
};

}  // namespace

CommandEnv ProcessEnv() {
  static const WallClock* const kClock = new WallClock();
  CommandEnv env;
  env.out = &std::cout;
  env.err = &std::cerr;
  env.getenv = [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  env.clock = kClock;
  env.sleep = [](Duration d) { std::this_thread::sleep_for(d); };
  return env;
}

}  // namespace tessera::cli
