#include "cli/output_format.h"

#include "absl/status/status.h"
#include "cli/job_view.h"
#include "fmt/format.h"
#include "spec/job_json.h"

namespace tessera::cli {

absl::StatusOr<OutputFormat> ParseOutputFormat(std::string_view text) {
  if (text == "table" || text.empty()) return OutputFormat::kTable;
  if (text == "wide") return OutputFormat::kWide;
  if (text == "json") return OutputFormat::kJson;
  if (text == "yaml") return OutputFormat::kYaml;
  return absl::InvalidArgumentError(
      fmt::format("-o: unknown output format '{}' (use table, wide, json or yaml)", text));
}

std::string RenderStructured(const Json& value, OutputFormat format) {
  if (format == OutputFormat::kYaml) return spec::RenderJsonAsYaml(value);
  return DumpJson(value, 2) + "\n";
}

}  // namespace tessera::cli
