#include "cli/job_batch.h"

#include "cli/client/api_error.h"
#include "fmt/format.h"

namespace tessera::cli {

absl::StatusOr<std::vector<BatchItem>> PostJobBatch(RestClient& client,
                                                    std::span<const std::string> documents) {
  std::string body = R"({"items":[)";
  for (size_t i = 0; i < documents.size(); ++i) {
    if (i > 0) body += ',';
    body += documents[i];
  }
  body += "]}";
  absl::StatusOr<Json> answer = client.PostJson("/api/v1/jobs:batch", body);
  if (!answer.ok()) return answer.status();
  const Json* items = answer->contains("items") ? &(*answer)["items"] : nullptr;
  if (items == nullptr || !items->is_array() || items->size() != documents.size()) {
    return absl::InternalError(
        fmt::format("the server's batch answer does not hold one item for each of {} jobs",
                    documents.size()));
  }
  std::vector<BatchItem> out;
  for (const Json& item : *items) {
    BatchItem result;
    if (item.contains("job") && item["job"].is_object()) {
      result.id = item["job"].value(Json::json_pointer("/metadata/id"), "");
      result.created = item.value("created", true);
    } else {
      result.error = ApiErrorFromResponse(500, item.dump(), "");
    }
    out.push_back(std::move(result));
  }
  return out;
}

}  // namespace tessera::cli
