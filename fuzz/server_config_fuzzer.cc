// Feeds arbitrary bytes to the server's configuration parser (server/server_config.h) and checks
// that it never crashes, that every rejection is an InvalidArgument naming the source, that
// validating an accepted configuration never crashes either, and that a `queues:` tree it accepts
// builds the scheduler's QueueTree, as the server does at start.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "sched/queue/queue_tree.h"
#include "server/server_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tessera::server::ServerConfig> config =
      tessera::server::ParseServerConfig(input, "fuzz.yaml");
  if (!config.ok()) {
    tessera::fuzz::Require(config.status().code() == absl::StatusCode::kInvalidArgument,
                           "a rejection is InvalidArgument", input, config.status().ToString());
    tessera::fuzz::Require(std::string(config.status().message()).starts_with("fuzz.yaml"),
                           "a rejection names the file", input, config.status().ToString());
    return 0;
  }
  const absl::Status valid = tessera::server::ValidateServerConfig(*config);
  tessera::fuzz::Require(valid.ok() || valid.code() == absl::StatusCode::kInvalidArgument,
                         "validation answers InvalidArgument", input, valid.ToString());
  if (config->queues.has_value()) {
    const absl::StatusOr<tessera::QueueTree> tree = tessera::QueueTree::Create(*config->queues);
    tessera::fuzz::Require(tree.ok(), "an accepted queue tree builds", input,
                           tree.status().ToString());
  }
  return 0;
}
