#include "cli/exit_status.h"

#include <string>

#include "cli/client/api_error.h"
#include "fmt/format.h"

namespace tessera::cli {

std::string ApiErrorMessage(const absl::Status& status) {
  std::string message(status.message());
  if (std::optional<std::string> field = ErrorField(status);
      field.has_value() && message.find(*field) == std::string::npos) {
    message = fmt::format("{}: {}", *field, message);
  }
  if (status.code() == absl::StatusCode::kUnauthenticated) {
    message += " (give a token with --token or TESSERA_TOKEN)";
  }
  return message;
}

int ReportApiError(const absl::Status& status, std::ostream& err) {
  err << "error: " << ApiErrorMessage(status) << "\n";
  return IsUnreachable(status) ? kExitUnreachable : kExitServerError;
}

int ReportUsageError(std::string_view message, std::ostream& err) {
  err << "error: " << message << "\n";
  return kExitUsage;
}

}  // namespace tessera::cli
