// OutputFormat: `-o table|wide|json|yaml` of the read verbs (get, list, nodes, clusters).
//   table  an aligned table (the default); wide  the table with more columns;
//   json   the server's JSON, pretty-printed, keys in the server's order;
//   yaml   the same value as block YAML (spec::RenderJsonAsYaml).
// Thread-safe: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "cli/client/rest_client.h"

namespace tessera::cli {

enum class OutputFormat { kTable, kWide, kJson, kYaml };

// InvalidArgument naming -o for anything else.
absl::StatusOr<OutputFormat> ParseOutputFormat(std::string_view text);

// `value` as JSON or YAML text ending in '\n'. REQUIRES: format is kJson or kYaml.
std::string RenderStructured(const Json& value, OutputFormat format);

}  // namespace tessera::cli
