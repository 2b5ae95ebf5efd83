#include "cli/agent_command.h"

#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::cli {
namespace {

using ::testing::HasSubstr;

// Runs `tessera agent` with `args`; its exit status, its stderr in `err`.
int RunAgent(std::vector<std::string> args, std::string& err) {
  args.insert(args.begin(), "agent");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  ::testing::internal::CaptureStderr();
  const int status = RunAgentCommand(static_cast<int>(argv.size()), argv.data());
  err = ::testing::internal::GetCapturedStderr();
  return status;
}

TEST(AgentCommandTest, BadUsageExitsTwoNamingTheFlagBeforeConnecting) {
  const std::string key = ::testing::TempDir() + "/agent_command_test.key";
  std::ofstream(key) << "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<std::string> ok = {"--server", "127.0.0.1:9", "--cluster", "east",
                                       "--backend", "sim", "--sim-node-count", "1",
                                       "--token", "t"};
  // `ok` with flag `extra[0]` set to `extra[1]` (replaced when `ok` has it, else added).
  const auto with = [&ok](std::vector<std::string> extra) {
    std::vector<std::string> args = ok;
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == extra[0]) {
        args[i + 1] = extra[1];
        return args;
      }
    }
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  for (const Case& c : std::vector<Case>{
           {with({"--server", "127.0.0.1"}), "--server: \"127.0.0.1\" is not HOST:PORT"},
           {with({"--server", "http://h:9090"}), "--server: \"http://h:9090\" is a URL"},
           {with({"--server", "h:0"}), "--server: \"h:0\" is not HOST:PORT"},
           {with({"--cluster", "East_1"}), "--cluster: \"East_1\" is not a cluster name"},
           {with({"--tls-ca", key}), "holds no PEM certificate"},
           {with({"--tls-ca", "/nonexistent/ca.pem"}), "--tls-ca: cannot read"},
           {with({"--backend", "nomad"}), "--backend: must be local, sim, slurm or kubernetes"},
           {{"--server", "127.0.0.1:9", "--cluster", "east", "--backend", "local", "--token", "t"},
            "--data-dir: required for --backend local"},
           {with({"--backend", "local"}), "--sim-node-count: only for --backend sim, not local"},
           {with({"--slurm-url", "http://127.0.0.1:6820"}),
            "--slurm-url: only for --backend slurm, not sim"},
           {with({"--kube-image", "busybox"}), "--kube-image: only for --backend kubernetes"},
           {with({"--data-dir", "/tmp/agent"}), "--data-dir: only for --backend local"},
           {with({"--sim-node-count", "0"}), "--sim-node-count: must be > 0"},
           {with({"--label", "novalue"}), "--label: \"novalue\" is not key=value"},
           {with({"--token", ""}), "--token: empty"},
       }) {
    std::string err;
    EXPECT_EQ(RunAgent(c.args, err), 2) << err;
    EXPECT_THAT(err, HasSubstr(c.error));
  }
}

}  // namespace
}  // namespace tessera::cli
