#include "cli/job_view.h"

#include <cmath>
#include <set>

#include "absl/time/time.h"
#include "fmt/format.h"

namespace tessera::cli {

const Json* JsonAt(const Json& value, std::initializer_list<std::string_view> path) {
  const Json* node = &value;
  for (std::string_view key : path) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(std::string(key));
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

std::string DumpJson(const Json& value, int indent) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

std::string JsonText(const Json& value, std::initializer_list<std::string_view> path) {
  const Json* node = JsonAt(value, path);
  if (node == nullptr || node->is_null()) return "";
  if (node->is_string()) return node->get<std::string>();
  return DumpJson(*node);
}

const Json& JsonArray(const Json& value, std::initializer_list<std::string_view> path) {
  static const Json* const kEmpty = new Json(Json::array());
  const Json* node = JsonAt(value, path);
  return node != nullptr && node->is_array() ? *node : *kEmpty;
}

std::optional<double> JsonNumber(const Json& value, std::initializer_list<std::string_view> path) {
  const Json* node = JsonAt(value, path);
  if (node == nullptr) return std::nullopt;
  if (node->is_number()) return node->get<double>();
  if (node->is_string()) {
    const std::string& s = node->get_ref<const std::string&>();
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(v)) return v;
  }
  return std::nullopt;
}

std::optional<TimePoint> ParseRfc3339(std::string_view text) {
  absl::Time time;
  std::string error;
  if (text.empty() || !absl::ParseTime(absl::RFC3339_full, std::string(text), &time, &error)) {
    return std::nullopt;
  }
  return TimePoint(Duration(absl::ToUnixMillis(time)));
}

std::string FormatAge(Duration age) {
  const int64_t s = std::max<int64_t>(0, age.count() / 1000);
  if (s < 120) return fmt::format("{}s", s);
  if (s < int64_t{120} * 60) return fmt::format("{}m", s / 60);
  if (s < int64_t{48} * 3600) return fmt::format("{}h", s / 3600);
  return fmt::format("{}d", s / 86400);
}

std::string FormatNumber(double value) {
  std::string text = fmt::format("{:.3f}", value);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text == "-0" ? "0" : text;
}

std::vector<std::string> JobTableHeaders(bool wide) {
  std::vector<std::string> headers = {"ID", "NAME", "TENANT", "QUEUE", "PHASE", "REASON", "AGE"};
  if (wide) {
    headers.push_back("NODES");
    headers.push_back("GPUS");
  }
  return headers;
}

std::vector<std::string> JobTableRow(const Json& job, TimePoint now, bool wide) {
  const auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  std::string age = "-";
  if (std::optional<TimePoint> submitted = ParseRfc3339(JsonText(job, {"status", "submitTime"}))) {
    age = FormatAge(now - *submitted);
  }
  std::vector<std::string> row = {or_dash(JsonText(job, {"metadata", "id"})),
                                  or_dash(JsonText(job, {"metadata", "name"})),
                                  or_dash(JsonText(job, {"metadata", "tenant"})),
                                  or_dash(JsonText(job, {"spec", "queue"})),
                                  or_dash(JsonText(job, {"status", "phase"})),
                                  JsonText(job, {"status", "reason"}),
                                  age};
  if (wide) {
    row.push_back(JobNodes(job));
    row.push_back(JobGpus(job));
  }
  return row;
}

std::string JobNodes(const Json& job) {
  std::vector<std::string> nodes;
  std::set<std::string> seen;
  for (const Json& task : JsonArray(job, {"status", "tasks"})) {
    std::string node = JsonText(task, {"node"});
    if (!node.empty() && seen.insert(node).second) nodes.push_back(std::move(node));
  }
  return nodes.empty() ? "-" : fmt::format("{}", fmt::join(nodes, ","));
}

std::string JobGpus(const Json& job) {
  double total = 0;
  for (const Json& task : JsonArray(job, {"spec", "tasks"})) {
    const double replicas = JsonNumber(task, {"replicas"}).value_or(1);
    total += replicas * JsonNumber(task, {"resources", "gpu"}).value_or(0);
  }
  return FormatNumber(total);
}

}  // namespace tessera::cli
