#include "agent/kubernetes/internal/json_fields.h"

#include "fmt/format.h"

namespace tessera::agent::k8s {
namespace {

absl::Status WrongType(std::string_view path, std::string_view key, std::string_view type) {
  return absl::InvalidArgumentError(
      fmt::format("{}{}{}: must be {}", path, path.empty() ? "" : ".", key, type));
}

}  // namespace

const Json* Member(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

absl::StatusOr<std::optional<std::string>> StringMember(const Json& object, std::string_view key,
                                                        std::string_view path) {
  const Json* value = Member(object, key);
  if (value == nullptr || value->is_null()) return std::optional<std::string>();
  if (!value->is_string()) return WrongType(path, key, "a string");
  return std::optional<std::string>(value->get_ref<const std::string&>());
}

absl::StatusOr<std::string> StringOr(const Json& object, std::string_view key,
                                     std::string_view path) {
  absl::StatusOr<std::optional<std::string>> value = StringMember(object, key, path);
  if (!value.ok()) return value.status();
  return value->value_or("");
}

absl::StatusOr<bool> BoolOr(const Json& object, std::string_view key, bool fallback,
                            std::string_view path) {
  const Json* value = Member(object, key);
  if (value == nullptr || value->is_null()) return fallback;
  if (!value->is_boolean()) return WrongType(path, key, "true or false");
  return value->get<bool>();
}

absl::StatusOr<std::optional<int64_t>> IntMember(const Json& object, std::string_view key,
                                                 std::string_view path) {
  const Json* value = Member(object, key);
  if (value == nullptr || value->is_null()) return std::optional<int64_t>();
  if (value->is_number_integer()) return std::optional<int64_t>(value->get<int64_t>());
  if (value->is_number_unsigned() && value->get<uint64_t>() <= INT64_MAX) {
    return std::optional<int64_t>(static_cast<int64_t>(value->get<uint64_t>()));
  }
  return WrongType(path, key, "an integer");
}

absl::StatusOr<std::string> QuantityText(const Json& value, std::string_view path) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer() || value.is_number_unsigned()) return value.dump();
  return absl::InvalidArgumentError(fmt::format("{}: must be a quantity string", path));
}

std::string DumpJson(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<Json> ParseJson(std::string_view text) {
  Json parsed = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return std::nullopt;
  return parsed;
}

}  // namespace tessera::agent::k8s
