#include "agent/slurm/slurm_json.h"

#include <limits>

#include "absl/strings/str_join.h"
#include "fmt/format.h"

namespace tessera::agent::slurm_json {
namespace {

using nlohmann::json;

const json* Find(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string Shown(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

absl::StatusOr<std::optional<int64_t>> PlainInteger(const json& value, std::string_view name) {
  if (value.is_number_unsigned()) {
    const uint64_t number = value.get<uint64_t>();
    if (number > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return absl::InvalidArgumentError(fmt::format("{}: {} is out of range", name, number));
    }
    return static_cast<int64_t>(number);
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  return absl::InvalidArgumentError(
      fmt::format("{}: must be an integer, got {}", name, Shown(value)));
}

// A member "set" or "infinite" of a flagged number: false when missing or null.
absl::StatusOr<bool> Flag(const json& object, std::string_view key, std::string_view name) {
  const json* value = Find(object, key);
  if (value == nullptr) return false;
  if (!value->is_boolean()) {
    return absl::InvalidArgumentError(
        fmt::format("{}.{}: must be true or false, got {}", name, key, Shown(*value)));
  }
  return value->get<bool>();
}

// {"set": bool, "infinite": bool, "number": N}: nullopt when unset or infinite. A missing "set"
// counts as set when a number is given.
absl::StatusOr<std::optional<int64_t>> FlaggedInteger(const json& object, std::string_view name) {
  absl::StatusOr<bool> infinite = Flag(object, "infinite", name);
  if (!infinite.ok()) return infinite.status();
  absl::StatusOr<bool> set = Flag(object, "set", name);
  if (!set.ok()) return set.status();
  const json* number = Find(object, "number");
  if (*infinite || (object.contains("set") && !*set)) return std::nullopt;
  if (number == nullptr) {
    if (*set) return absl::InvalidArgumentError(fmt::format("{}.number: missing", name));
    return std::nullopt;
  }
  return PlainInteger(*number, fmt::format("{}.number", name));
}

}  // namespace

absl::StatusOr<std::optional<std::string>> String(const json& object, std::string_view key) {
  const json* value = Find(object, key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: must be a string, got {}", key, Shown(*value)));
  }
  return value->get<std::string>();
}

absl::StatusOr<std::optional<int64_t>> Integer(const json& object, std::string_view key) {
  const json* value = Find(object, key);
  if (value == nullptr) return std::nullopt;
  if (value->is_object()) return FlaggedInteger(*value, key);
  return PlainInteger(*value, key);
}

absl::StatusOr<std::optional<int64_t>> NonNegative(const json& object, std::string_view key) {
  absl::StatusOr<std::optional<int64_t>> number = Integer(object, key);
  if (!number.ok()) return number.status();
  if (number->has_value() && **number < 0) {
    return absl::InvalidArgumentError(
        fmt::format("{}: must be a non-negative integer, got {}", key, **number));
  }
  return number;
}

absl::StatusOr<std::vector<std::string>> Strings(const json& object, std::string_view key) {
  const json* value = Find(object, key);
  if (value == nullptr) return std::vector<std::string>{};
  if (!value->is_array()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: must be a list of strings, got {}", key, Shown(*value)));
  }
  std::vector<std::string> strings;
  for (size_t i = 0; i < value->size(); ++i) {
    const json& item = (*value)[i];
    if (!item.is_string()) {
      return absl::InvalidArgumentError(
          fmt::format("{}[{}]: must be a string, got {}", key, i, Shown(item)));
    }
    strings.push_back(item.get<std::string>());
  }
  return strings;
}

std::string ErrorText(const json& reply) {
  const json* errors = Find(reply, "errors");
  if (errors == nullptr || !errors->is_array()) return "";
  std::vector<std::string> texts;
  for (const json& entry : *errors) {
    absl::StatusOr<std::optional<std::string>> error = String(entry, "error");
    absl::StatusOr<std::optional<std::string>> description = String(entry, "description");
    std::string text;
    if (error.ok() && error->has_value()) text = **error;
    if (description.ok() && description->has_value() && !(*description)->empty()) {
      text = text.empty() ? **description : fmt::format("{} ({})", text, **description);
    }
    if (!text.empty()) texts.push_back(std::move(text));
  }
  return absl::StrJoin(texts, "; ");
}

}  // namespace tessera::agent::slurm_json
