// VerbHarness: runs a client verb in-process with captured output, a fixed environment and a
// manual clock whose sleeps advance it. Not a public API.
#pragma once

#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command_env.h"

namespace tessera::cli::testing {

class VerbHarness {
 public:
  using Verb = int (*)(int, char**, const CommandEnv&);

  // Starts at 2026-11-29T10:05:00Z.
  VerbHarness() : clock_(TimePoint(std::chrono::seconds(1795946700))) {}

  // Runs `verb` with argv = args (args[0] is the verb's name); resets the captured output.
  int Run(Verb verb, std::vector<std::string> args) {
    out_.str("");
    err_.str("");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    CommandEnv env;
    env.out = &out_;
    env.err = &err_;
    env.getenv = [this](std::string_view name) -> std::optional<std::string> {
      auto it = variables_.find(std::string(name));
      if (it == variables_.end()) return std::nullopt;
      return it->second;
    };
    env.clock = &clock_;
    env.sleep = [this](Duration d) {
      sleeps_.push_back(d);
      clock_.Set(clock_.Now() + d);
    };
    return verb(static_cast<int>(argv.size()), argv.data(), env);
  }

  void SetEnv(const std::string& name, const std::string& value) { variables_[name] = value; }
  std::string out() const { return out_.str(); }
  std::string err() const { return err_.str(); }
  const std::vector<Duration>& sleeps() const { return sleeps_; }
  ManualClock& clock() { return clock_; }

 private:
  std::ostringstream out_;
  std::ostringstream err_;
  std::map<std::string, std::string> variables_;
  ManualClock clock_;
  std::vector<Duration> sleeps_;
};

}  // namespace tessera::cli::testing
